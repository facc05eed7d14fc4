"""The folder store: blobs as read-only files under a root folder, keyed by their digest.

Create-if-absent is built from ``os.link``, which fails when the target exists, so no two
writers (threads, processes, or a crash half-way) can ever replace a stored file: each writes
and fsyncs a private temporary file beside the target, then links it into place.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from snapshotter.errors import BlobNotFound, StoreError
from snapshotter.store.base import KINDS, StoredBlob, blob_key
from snapshotter.store.hashing import (
    NullSink,
    check_address,
    copy_verified,
    read_chunks,
    require_digest,
    source_digest,
)

READ_ONLY = 0o444
_HEX_NAME = re.compile(r"^[0-9a-f]{64}$")


HOME_SCHEME = "home:"  # a folder store recorded relative to SNAP_HOME: "home:store"


class FolderStore:
    """Write-once blob storage in a local folder; every read re-hashes the file.

    ``home``: the snap home (SNAP_HOME). A store inside it is recorded by its path relative to
    the home (``home:store``), so a home copied or moved elsewhere keeps finding its blobs; a
    store outside it is recorded by its absolute ``file://`` URL.
    """

    def __init__(self, root: Path, *, home: Path | None = None) -> None:
        self.root = root.expanduser().absolute()
        self.location = recorded_location(self.root, home)

    def __repr__(self) -> str:
        return f"FolderStore({str(self.root)!r})"

    def path_of(self, kind: str, digest: str) -> Path:
        """Where a blob lives (or would live); the path comes from the digest alone."""
        check_address(kind, digest)
        return self.root / blob_key(kind, digest)

    def put(
        self, kind: str, digest: str, source: Path | bytes, *, tags: Mapping[str, str]
    ) -> StoredBlob:
        """Store ``source`` unless present. ``tags`` are not kept: the folder has no metadata."""
        target = self.path_of(kind, digest)
        key = blob_key(kind, digest)
        if target.exists():
            # Already stored: check the caller's bytes match the claim, then the stored file.
            require_digest(key, digest, source_digest(source)[0])
            return self._confirm_existing(kind, digest)
        try:
            created = self._write_once(target, key, digest, source)
        except OSError as error:
            raise StoreError(f"cannot write {target}: {error.strerror or error}") from None
        if not created:
            return self._confirm_existing(kind, digest)
        return StoredBlob(kind, digest, key, target.stat().st_size, created=True)

    def get(self, kind: str, digest: str, *, version_id: str | None = None) -> bytes:
        """The whole blob, verified before any byte is handed out (no versions: one file)."""
        buffer = io.BytesIO()
        self.read_into(kind, digest, buffer)
        return buffer.getvalue()

    def read_into(
        self, kind: str, digest: str, sink: BinaryIO, *, version_id: str | None = None
    ) -> int:
        path = self.path_of(kind, digest)
        try:
            with path.open("rb", buffering=0) as stream:
                return copy_verified(
                    read_chunks(stream), sink, key=blob_key(kind, digest), digest=digest
                )
        except FileNotFoundError:
            raise BlobNotFound(f"no {kind} blob {digest} in {self.root.as_uri()}") from None
        except OSError as error:
            raise StoreError(f"cannot read {path}: {error.strerror or error}") from None

    def head(self, kind: str, digest: str, *, version_id: str | None = None) -> StoredBlob | None:
        path = self.path_of(kind, digest)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return None
        except OSError as error:
            raise StoreError(f"cannot read {path}: {error.strerror or error}") from None
        return StoredBlob(kind, digest, blob_key(kind, digest), size)

    def shadowing(self, kind: str, digest: str, version_id: str | None) -> str | None:
        """A file has one version: nothing can sit on top of it."""
        return None

    def probe(self) -> None:
        if not self.root.is_dir():
            raise StoreError(f"the folder store {self.root.as_uri()} does not exist")

    def iterate(self) -> Iterator[tuple[str, str]]:
        """Every stored (kind, digest), in key order; temporary and foreign files are skipped."""
        for kind in KINDS:
            base = self.root / kind / "sha256"
            if not base.is_dir():
                continue
            for fan_out in sorted(base.iterdir()):
                if not fan_out.is_dir():
                    continue
                for path in sorted(fan_out.iterdir()):
                    if _HEX_NAME.match(path.name) and path.name[:2] == fan_out.name:
                        yield kind, f"sha256:{path.name}"

    def _confirm_existing(self, kind: str, digest: str) -> StoredBlob:
        """Re-hash a blob someone else stored, so a put never vouches for corrupted bytes."""
        size = self.read_into(kind, digest, NullSink())
        return StoredBlob(kind, digest, blob_key(kind, digest), size, created=False)

    def _write_once(self, target: Path, key: str, digest: str, source: Path | bytes) -> bool:
        """Write a verified temporary copy and link it into place; False if already present."""
        _make_dirs(target.parent)
        handle, temp_name = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
        temp = Path(temp_name)
        try:
            with os.fdopen(handle, "wb", buffering=0) as out:
                copy_source(source, out, key=key, digest=digest)
                os.fchmod(out.fileno(), READ_ONLY)
                os.fsync(out.fileno())
            try:
                os.link(temp, target)
            except FileExistsError:
                return False
            fsync_dir(target.parent)
            return True
        finally:
            temp.unlink(missing_ok=True)


def recorded_location(root: Path, home: Path | None) -> str:
    """``home:<relative path>`` for a folder inside ``home``, else its ``file://`` URL."""
    if home is not None:
        base = Path(os.path.normpath(home.expanduser().absolute()))
        try:
            relative = Path(os.path.normpath(root)).relative_to(base)
        except ValueError:
            pass
        else:
            return HOME_SCHEME + relative.as_posix()
    return root.as_uri()


def copy_source(source: Path | bytes, out: BinaryIO, *, key: str, digest: str) -> int:
    """Copy the caller's bytes while hashing them: a wrong digest never reaches the store."""
    if isinstance(source, bytes):
        return copy_verified([source], out, key=key, digest=digest)
    try:
        stream = source.open("rb", buffering=0)
    except OSError as error:
        raise StoreError(f"cannot read {source}: {error.strerror or error}") from None
    with stream:
        return copy_verified(read_chunks(stream), out, key=key, digest=digest)


def _make_dirs(folder: Path) -> None:
    """Create missing folders one by one, fsyncing each parent so the new entries survive."""
    for parent in make_missing_dirs(folder):
        fsync_dir(parent)


def make_missing_dirs(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents, outermost first; the folders that gained an
    entry (whose entries must be fsynced for the new folders to survive a crash). A folder
    another process makes meanwhile is no error, and not ours to fsync."""
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    gained: list[Path] = []
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir()
            gained.append(path.parent)
    return gained


def fsync_dir(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
