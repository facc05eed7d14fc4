"""Prepared sources kept in a local folder, so that a text tokenized by one process is loaded,
not tokenized again, by the next (``snap verify``, ``snap reverify``, the workers, the service).

Tokenizing is most of what re-checking a text costs (a 100 KB page: about 30 ms to prepare,
1.5 ms to load packed); the text itself is still read from the store and digest-checked on
every run, as without this folder.  An entry is found by the text's digest and the version of
the code that prepared it, and is used only for the text it was packed for:

- its name holds the text's SHA-256 and, in its folder's name, ``FINGERPRINT``: the packing
  layout and the matcher and tokenizer versions (``verifier.packed.PACKED_ID``) and a SHA-256
  of the verifier's own source files, so a change to the tokenizer never meets entries written
  before it, even one made without a version bump;
- its bytes end with their HMAC-SHA-256 under a secret of the snap home (``prepared.key``,
  beside the database, outside this folder, readable by its owner only) and are bound to the
  text's digest, its length and that fingerprint (``verifier.packed.unpack``): a damaged,
  truncated or foreign entry, or one written by anyone who does not hold the secret (another
  machine, another home, a user who can write a shared folder), is refused, deleted and
  rebuilt, never trusted.

Entries are written to a temporary file and renamed into place, so a reader sees a whole entry
or none, and writers of the same entry (two workers) each rename a whole file over the other's.
The folder is bounded (``max_bytes``): when a write takes it past the bound, the entries used
least recently (by modification time, touched on each load) are deleted until it holds three
quarters of it; entries of other versions are never touched, so they go first.  The cache never
fails a check: a folder that cannot be read or written is a miss.  Whoever can read the home's
secret can forge an entry, as whoever can write the home's database can change its records.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import time
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Final

from verifier import PreparedSource
from verifier.errors import PackError
from verifier.packed import PACKED_ID, pack, unpack

SUFFIX: Final = ".prep"
STALE_TEMPORARY: Final = 3600.0  # seconds after which a writer's temporary file is litter
DEFAULT_MAX_BYTES: Final = 1024 * 2**20


@cache
def fingerprint() -> str:
    """The version of the code that prepares sources: ``PACKED_ID`` and a SHA-256 of the
    verifier package's source files (16 hex digits, a folder name)."""
    hasher = hashlib.sha256(PACKED_ID.encode())
    package = resources.files("verifier")
    for entry in sorted(package.iterdir(), key=lambda item: item.name):
        if entry.name.endswith(".py"):
            hasher.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return hasher.hexdigest()[:16]


class PreparedFolder:
    """A folder of packed prepared sources, bounded by size (see the module docstring)."""

    def __init__(
        self, folder: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, key_file: Path | None = None
    ) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        # beside the folder, never in it: the home's prepared.key for the default folder
        self.key_file = key_file or folder.with_name(folder.name + ".key")
        self._lock = threading.Lock()
        self._held: int | None = None  # bytes in the folder, counted on the first write
        self._key: bytes | None = None
        self._key_read = False

    def key(self) -> bytes | None:
        """The secret entries are sealed with (HMAC-SHA-256), made on first use; None when it
        cannot be read or made, and then the folder is not used at all. Read once: a secret
        that cannot be read is not tried again (and waited for) on every load and save."""
        if not self._key_read:
            self._key = read_or_make_key(self.key_file)
            self._key_read = True
        return self._key

    def entry_path(self, text_hash: str) -> Path:
        """Where the entry of the text with digest ``text_hash`` (``sha256:<hex>``) is kept."""
        name = text_hash.removeprefix("sha256:")
        return self.folder / fingerprint() / name[:2] / f"{name}{SUFFIX}"

    def load(self, text_hash: str, source: str) -> PreparedSource | None:
        """The prepared ``source`` kept for ``text_hash``, or None (no entry, or a bad one,
        which is deleted). The caller has checked that ``source`` is the text of ``text_hash``."""
        key = self.key()
        if key is None:
            return None
        try:
            path = self.entry_path(text_hash)
            data = path.read_bytes()
        except OSError:
            return None
        try:
            prepared = unpack(data, source, _binding(text_hash), key=key)
        except PackError:  # damaged, truncated, foreign: never trusted, rebuilt by the caller
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used: the last to be evicted
        return prepared

    def save(self, text_hash: str, prepared: PreparedSource) -> None:
        """Keep ``prepared`` for the next process; quietly nothing when it cannot be."""
        key = self.key()
        if key is None:
            return
        try:
            data = pack(prepared, _binding(text_hash), key=key)
        except (PackError, OSError):  # a key the layout cannot hold; unreadable sources
            return
        try:
            path = self.entry_path(text_hash)
            if not path.parent.is_dir():
                self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomically(path, data)
        except OSError:
            return
        with self._lock:
            if self._held is None:
                self._held = self._count()
            else:
                self._held += len(data)
            if self._held > self.max_bytes:
                self._held = self._evict(self.max_bytes * 3 // 4)

    def _entries(self) -> list[tuple[float, int, Path]]:
        """Every entry of every version, as (last used, size, path); litter deleted."""
        found = []
        now = time.time()
        for path in self.folder.glob("*/*/*"):
            try:
                status = path.stat()
            except OSError:
                continue
            if path.name.endswith(SUFFIX):
                found.append((status.st_mtime, status.st_size, path))
            elif now - status.st_mtime > STALE_TEMPORARY:  # a killed writer's temporary file
                with contextlib.suppress(OSError):
                    path.unlink()
        return found

    def _count(self) -> int:
        return sum(size for _, size, _ in self._entries())

    def _evict(self, target: int) -> int:
        """Delete the least recently used entries until at most ``target`` bytes are held."""
        entries = sorted(self._entries())
        held = sum(size for _, size, _ in entries)
        for _, size, path in entries:
            if held <= target:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                held -= size
        return held


KEY_SIZE: Final = 32


def read_or_make_key(path: Path) -> bytes | None:
    """The folder's secret: read from ``path`` (the snap home's, outside the folder, readable
    by its owner only), or made there once, atomically (two processes that both find it
    missing end with the same key: the second's exclusive create fails and it reads the
    first's). None when it cannot be read or made, or is not ``KEY_SIZE`` bytes."""
    with contextlib.suppress(FileExistsError, OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "wb") as stream:
            stream.write(os.urandom(KEY_SIZE))
    for _ in range(50):  # the creator may not have written it yet
        try:
            key = path.read_bytes()
        except OSError:
            return None
        if len(key) == KEY_SIZE:
            return key
        time.sleep(0.01)
    return None


def _binding(text_hash: str) -> str:
    return f"{text_hash} {fingerprint()}"


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename: no
    reader sees part of an entry.  No fsync: an entry lost or torn by a crash is refused by its
    digest and rebuilt."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:16]}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        Path(temporary).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temporary).unlink()
        raise
