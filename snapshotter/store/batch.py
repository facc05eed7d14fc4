"""Writing many blobs with one durability wait: what a batch capture stores through.

A folder store makes each blob durable before ``put`` returns: the file's bytes are fsynced,
the file is linked into place, and its folder is fsynced. Done one blob at a time, each fsync
waits for its own journal commit (about 8 ms on this machine's ext4), which made a capture of a
small page mostly waiting. A batch keeps every step and only moves the waits: ``put`` writes
and hash-checks the temporary file and returns; ``flush`` then makes every file of the batch
durable, links each into place, and makes every folder that gained an entry durable: for each
blob in the same order as before (its bytes before its link, its link before ``flush``
returns), with two waits for the whole batch instead of two per blob.

Each wait is one ``syncfs(2)`` of the store's file system on Linux 5.8 or later (which reports
write-back errors to the caller, as fsync does; measured here: 16-90 ms for the 400 files and
330 folders of 100 pages, against 2.4 s for the same fsyncs one by one). Elsewhere each file
and folder is fsynced, all at once from a pool of threads kept for the life of the process
(never a thread per blob or page), so the file system can commit them together (81-195 ms).

Each blob waits for ``flush`` in an unnamed file (``O_TMPFILE``, Linux), made in its folder
and given its name by ``linkat`` once durable: one file operation fewer than a named temporary
file (created, then linked, then removed), and a crash leaves nothing behind. Where the folder's
file system has no unnamed files, where there is no ``syncfs`` or ``/proc/self/fd``, or past
``UNNAMED_AT_ONCE`` open files in a batch (or a quarter of the process's descriptor limit), a
blob waits in a named ``.tmp-`` file beside its address instead, as a single put's does.

Until ``flush`` returns, nothing of the batch is at its address: a reader sees none of it, and a
crash leaves at most ``.tmp-`` files (which ``iterate`` and every read ignore), never a file
under a content address whose bytes were not yet durable. The caller records nothing that names
a blob of the batch before ``flush`` has returned: that is what keeps "a record is never
committed before its blobs are durable".

A store whose ``put`` is already durable when it returns (S3: the object exists once the PUT
is answered) is batched by ``ImmediateBatch``, whose ``flush`` has nothing to wait for.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import re
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol, TypeVar, cast

from snapshotter.errors import StoreError
from snapshotter.store.base import BlobStore, StoredBlob, blob_key
from snapshotter.store.hashing import NullSink, require_digest, source_digest
from snapshotter.store.local import (
    READ_ONLY,
    FolderStore,
    copy_source,
    fsync_dir,
    make_missing_dirs,
)

FSYNC_THREADS = 32  # fsyncs in flight without syncfs: the journal commits them together
UNNAMED_AT_ONCE = 1024  # unnamed files a batch holds open (each is a descriptor until flush)


class StoreBatch(Protocol):
    """A store whose puts become durable together, at ``flush``. Reads go to the store."""

    location: str

    def put(
        self, kind: str, digest: str, source: Path | bytes, *, tags: Mapping[str, str]
    ) -> StoredBlob: ...

    def get(self, kind: str, digest: str, *, version_id: str | None = None) -> bytes: ...

    def read_into(
        self, kind: str, digest: str, sink: BinaryIO, *, version_id: str | None = None
    ) -> int: ...

    def head(
        self, kind: str, digest: str, *, version_id: str | None = None
    ) -> StoredBlob | None: ...

    def shadowing(self, kind: str, digest: str, version_id: str | None) -> str | None: ...

    def probe(self) -> None: ...

    def iterate(self) -> Iterator[tuple[str, str]]: ...

    def flush(self) -> None:
        """Make every blob put so far durable and readable at its address."""
        ...

    def discard(self) -> None:
        """Drop what was put and not flushed (the batch failed before ``flush``)."""
        ...


def batched(store: BlobStore) -> StoreBatch:
    """A batch over ``store``: deferred fsyncs on a folder store, plain puts elsewhere."""
    if isinstance(store, FolderStore):
        return FolderBatch(store)
    return ImmediateBatch(store)


class _Delegating:
    """Every read of the interface goes to the store itself."""

    def __init__(self, store: BlobStore) -> None:
        self.store = store
        self.location = store.location

    def get(self, kind: str, digest: str, *, version_id: str | None = None) -> bytes:
        return self.store.get(kind, digest, version_id=version_id)

    def read_into(
        self, kind: str, digest: str, sink: BinaryIO, *, version_id: str | None = None
    ) -> int:
        return self.store.read_into(kind, digest, sink, version_id=version_id)

    def head(self, kind: str, digest: str, *, version_id: str | None = None) -> StoredBlob | None:
        return self.store.head(kind, digest, version_id=version_id)

    def shadowing(self, kind: str, digest: str, version_id: str | None) -> str | None:
        return self.store.shadowing(kind, digest, version_id)

    def probe(self) -> None:
        self.store.probe()

    def iterate(self) -> Iterator[tuple[str, str]]:
        return self.store.iterate()


class ImmediateBatch(_Delegating):
    """For a store whose every put is durable on return: nothing waits for ``flush``."""

    def put(
        self, kind: str, digest: str, source: Path | bytes, *, tags: Mapping[str, str]
    ) -> StoredBlob:
        return self.store.put(kind, digest, source, tags=tags)

    def flush(self) -> None:
        return None

    def discard(self) -> None:
        return None


@dataclass
class _Pending:
    """A blob waiting for ``flush``: in the named file ``temp``, or (``temp`` None) in the
    unnamed file open as ``descriptor``."""

    temp: Path | None
    descriptor: int | None
    target: Path
    blob: StoredBlob

    @property
    def handle(self) -> Path | int:
        """What makes it durable: the named file's path, or the unnamed file's descriptor."""
        if self.temp is not None:
            return self.temp
        assert self.descriptor is not None
        return self.descriptor

    def link(self, folder: int) -> bool:
        """Give the file its content address; False when a file is already there.

        ``folder``: any open folder. Passing one makes ``os.link`` call linkat with
        AT_SYMLINK_FOLLOW, which follows /proc/self/fd/N to the unnamed file (link(2) would
        link the symbolic link itself); the paths are absolute, so which folder is no matter."""
        source = self.temp if self.temp is not None else f"/proc/self/fd/{self.descriptor}"
        try:
            os.link(source, self.target, src_dir_fd=folder, follow_symlinks=True)
        except FileExistsError:
            return False
        return True

    def release(self) -> None:
        """Close or remove what held the blob (linked or not)."""
        if self.descriptor is not None:
            os.close(self.descriptor)
            self.descriptor = None
        if self.temp is not None:
            self.temp.unlink(missing_ok=True)


class FolderBatch(_Delegating):
    """Blobs written to temporary files now, made durable and linked into place at ``flush``.

    Not shared between threads: each batch capture makes its own (the store itself is)."""

    def __init__(self, store: FolderStore) -> None:
        super().__init__(store)
        self.folder_store = store
        self._pending: dict[Path, _Pending] = {}
        self._new_folders: set[Path] = set()  # folders whose new entries must be fsynced
        self._present: set[Path] = set()  # folders this batch made or found (none is removed)
        self._unnamed = 0  # unnamed files open

    def put(
        self, kind: str, digest: str, source: Path | bytes, *, tags: Mapping[str, str]
    ) -> StoredBlob:
        """Write and hash-check ``source`` beside its address; durable at ``flush``."""
        target = self.folder_store.path_of(kind, digest)
        key = blob_key(kind, digest)
        pending = self._pending.get(target)
        if pending is not None:  # the same content twice in one batch
            require_digest(key, digest, source_digest(source)[0])
            return StoredBlob(kind, digest, key, pending.blob.size, created=False)
        if target.exists():
            return self.folder_store.put(kind, digest, source, tags=tags)  # re-hashes it
        try:
            pending = self._write_pending(target, key, digest, source, kind)
        except OSError as error:
            raise StoreError(f"cannot write {target}: {error.strerror or error}") from None
        self._pending[target] = pending
        return pending.blob

    def _write_pending(
        self, target: Path, key: str, digest: str, source: Path | bytes, kind: str
    ) -> _Pending:
        """The blob's bytes, hash-checked, in a file beside ``target`` that no reader sees."""
        self._make_dirs(target.parent)
        descriptor = self._unnamed_file(target.parent)
        temp = None
        if descriptor is None:
            descriptor, name = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
            temp = Path(name)
        pending = _Pending(temp, descriptor, target, StoredBlob(kind, digest, key, 0))
        try:
            with os.fdopen(descriptor, "wb", buffering=0, closefd=False) as out:
                size = copy_source(source, out, key=key, digest=digest)
                os.fchmod(descriptor, READ_ONLY)
        except BaseException:
            pending.release()
            raise
        if temp is not None:  # a named file needs no descriptor until flush
            os.close(descriptor)
            pending.descriptor = None
        pending.blob = StoredBlob(kind, digest, key, size, created=True)
        return pending

    def _unnamed_file(self, folder: Path) -> int | None:
        """A new unnamed file in ``folder``, or None where there can be none (see above)."""
        limit = min(UNNAMED_AT_ONCE, _descriptors() // 4)
        if self._unnamed >= limit or not _unnamed_files_linkable():
            return None
        try:
            descriptor = os.open(folder, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, READ_ONLY)
        except OSError as error:
            if error.errno in _NO_UNNAMED_FILES:
                return None
            raise
        self._unnamed += 1
        return descriptor

    def _make_dirs(self, folder: Path) -> None:
        """Create missing folders; their entries in their parents are fsynced at ``flush``.
        A folder seen once is not looked up again (a stat a blob: snap never removes one)."""
        if folder not in self._present:
            self._new_folders.update(make_missing_dirs(folder))
            self._present.add(folder)

    def flush(self) -> None:
        """fsync every file, link each into place, fsync every folder that gained an entry.

        A blob someone else linked first (another process storing the same content) is
        re-hashed, as ``put`` does with a blob already present. Raises StoreError when any
        step fails; then nothing of the batch may be recorded (some blobs may be in place,
        durable and unreferenced, as after a capture whose record failed)."""
        pending = list(self._pending.values())
        self._pending, self._unnamed = {}, 0
        try:
            durable = _durability(self.folder_store.root)
            durable.files([item.handle for item in pending])
            folders = set(self._new_folders)
            linked = _linked(pending, self.folder_store.root)
            for item, created in zip(pending, linked, strict=True):
                if created:
                    folders.add(item.target.parent)
                else:  # re-hashed, as put does with a blob already present
                    self.folder_store.read_into(item.blob.kind, item.blob.digest, NullSink())
            durable.folders(sorted(folders))
            self._new_folders = set()
        except OSError as error:
            raise StoreError(f"cannot make the batch's blobs durable: {error}") from None
        finally:
            for item in pending:
                item.release()

    def discard(self) -> None:
        for item in self._pending.values():
            item.release()
        self._pending, self._unnamed = {}, 0


def _linked(pending: list[_Pending], root: Path) -> list[bool]:
    """Link each waiting file to its address; whether each was created (False: one was there)."""
    if not pending:
        return []
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return [item.link(folder) for item in pending]
    finally:
        os.close(folder)


# O_TMPFILE refused: a file system without unnamed files, or a kernel before 3.11
_NO_UNNAMED_FILES = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT})


@functools.cache
def _descriptors() -> int:
    """How many files the process may have open (its soft limit; 0 when unknown)."""
    try:
        import resource
    except ImportError:
        return 0
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return sys.maxsize if soft == resource.RLIM_INFINITY else soft


@functools.cache
def _unnamed_files_linkable() -> bool:
    """Unnamed files are used only where they can be named by linkat through /proc and made
    durable by syncfs (fsync by path, the fallback, cannot reach them)."""
    return hasattr(os, "O_TMPFILE") and _syncfs() is not None and Path("/proc/self/fd").is_dir()


class _Durability(Protocol):
    def files(self, paths: list[Path | int]) -> None: ...
    def folders(self, paths: list[Path]) -> None: ...


class _SyncFs:
    """One ``syncfs`` of the file system holding ``root`` for each group of paths."""

    def __init__(self, root: Path, syncfs: Callable[[int], int]) -> None:
        self.root = root
        self._syncfs = syncfs

    def files(self, paths: list[Path | int]) -> None:
        if paths:
            self._sync()

    def folders(self, paths: list[Path]) -> None:
        if paths:
            self._sync()

    def _sync(self) -> None:
        descriptor = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if self._syncfs(descriptor) != 0:
                code = ctypes.get_errno()
                raise OSError(code, f"syncfs: {os.strerror(code)}")
        finally:
            os.close(descriptor)


class _EachFsync:
    """Every file and folder fsynced, all in flight at once."""

    def files(self, paths: list[Path | int]) -> None:
        _each(_fsync_path, paths)

    def folders(self, paths: list[Path]) -> None:
        _each(fsync_dir, paths)


def _durability(root: Path) -> _Durability:
    syncfs = _syncfs()
    return _SyncFs(root, syncfs) if syncfs is not None else _EachFsync()


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs`` on Linux 5.8 or later (earlier kernels do not report write-back
    errors from it), else None."""
    if not sys.platform.startswith("linux") or _kernel() < (5, 8):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int
    return cast(Callable[[int], int], function)


def _kernel() -> tuple[int, int]:
    numbers = re.findall(r"\d+", platform.release())[:2]
    return (int(numbers[0]), int(numbers[1])) if len(numbers) == 2 else (0, 0)


def _fsync_path(path: Path | int) -> None:
    if isinstance(path, int):  # an unnamed file, by its descriptor
        os.fsync(path)
        return
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


_Path = TypeVar("_Path", Path, Path | int)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    """A forked child (a Celery worker process) has none of its parent's threads."""
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


def _each(action: Callable[[_Path], None], paths: Iterable[_Path]) -> None:
    """``action`` on every path at once from the process's fsync pool; the first error raised."""
    items = list(paths)
    if len(items) <= 1:
        for path in items:
            action(path)
        return
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(FSYNC_THREADS, thread_name_prefix="snap-fsync")
        pool = _pool
    for future in [pool.submit(action, path) for path in items]:
        future.result()
