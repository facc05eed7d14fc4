"""Blob stores: the interface, its two backends, and ``open_store`` to pick one from a URL.

The S3 backend (``snapshotter.store.s3``: ``S3Store``, ``BucketStatus``) is imported from its
module, and here only when a URL names S3: a command on the folder store (the default) loads
neither it nor boto3.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from snapshotter.errors import ConfigError
from snapshotter.store.base import KINDS, BlobStore, StoredBlob, blob_key
from snapshotter.store.local import HOME_SCHEME, FolderStore

__all__ = [
    "KINDS",
    "BlobStore",
    "FolderStore",
    "StoreInit",
    "StoredBlob",
    "blob_key",
    "canonical_location",
    "init_store",
    "open_store",
]


def open_store(
    url: str,
    *,
    lock_mode: str = "GOVERNANCE",
    lock_days: int = 365,
    home: Path | None = None,
) -> BlobStore:
    """``s3://bucket/prefix`` → S3Store; a folder path, ``file://`` URL or ``home:path``
    (a folder recorded relative to the snap home) → FolderStore.

    The lock settings only apply to S3; the folder store makes files read-only instead.
    ``home`` decides how a folder store is recorded (see ``FolderStore``).
    """
    text = url.strip()
    if text.startswith(HOME_SCHEME):
        if home is None:
            raise ConfigError(f"store {url!r} is relative to the snap home, and none is set")
        return FolderStore(home / text.removeprefix(HOME_SCHEME), home=home)
    parts = urlsplit(text)
    if parts.scheme == "s3":
        if not parts.netloc:
            raise ConfigError(f"store URL {url!r} names no bucket; expected s3://bucket/prefix")
        from snapshotter.store.s3 import S3Store

        return S3Store(parts.netloc, parts.path, lock_mode=lock_mode, lock_days=lock_days)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ConfigError(f"store URL {url!r} names a remote host; use a local folder")
        return FolderStore(Path(unquote(parts.path)), home=home)
    if parts.scheme == "" and text:
        return FolderStore(Path(text), home=home)
    raise ConfigError(
        f"store {url!r} is neither a folder path, a file:// URL nor s3://bucket/prefix"
    )


def canonical_location(location: str, *, home: Path | None) -> str:
    """The location as a store opened from it would record it now: a folder given by path or
    ``file://`` URL inside ``home`` becomes ``home:…``; anything else is returned as given.
    Nothing is opened or reached."""
    text = location.strip()
    parts = urlsplit(text)
    if text.startswith(HOME_SCHEME) or parts.scheme not in ("", "file") or not text:
        return location
    if parts.scheme == "file" and parts.netloc not in ("", "localhost"):
        return location
    folder = Path(unquote(parts.path)) if parts.scheme == "file" else Path(text)
    return FolderStore(folder, home=home).location


@dataclass(frozen=True)
class StoreInit:
    """What ``snap store init`` found or made: the store, whether it was created now, and for
    an S3 bucket its name, whether it has Object Lock and the retention new objects get."""

    store: str
    created: bool
    object_lock: bool
    bucket: str | None = None  # an S3 store's; None: a folder store
    lock_mode: str | None = None
    lock_days: int | None = None

    @property
    def protected(self) -> bool:
        """False for a bucket without Object Lock: evidence stored there could be deleted (a
        folder store is protected by write-once files instead)."""
        return self.bucket is None or self.object_lock


def init_store(
    url: str, *, lock_mode: str = "GOVERNANCE", lock_days: int = 365, home: Path | None = None
) -> StoreInit:
    """``snap store init``: create the store, or report how an existing one is protected.

    An S3 bucket is created with Object Lock (it cannot be turned on for a bucket created without
    it); for an existing bucket the report says whether it has Object Lock.  A folder store is
    created; its protection is write-once hard links and read-only files, not retention.
    """
    store = open_store(url, lock_mode=lock_mode, lock_days=lock_days, home=home)
    if isinstance(store, FolderStore):
        existed = store.root.exists()
        store.root.mkdir(parents=True, exist_ok=True)
        return StoreInit(store.location, created=not existed, object_lock=False)
    from snapshotter.store.s3 import S3Store  # only for an s3:// store: a folder needs none

    if isinstance(store, S3Store):
        status = store.init_bucket()
        return StoreInit(
            store.location,
            created=status.created,
            object_lock=status.object_lock_enabled,
            bucket=status.bucket,
            lock_mode=lock_mode,
            lock_days=lock_days,
        )
    raise ConfigError(f"store {url!r} is neither a folder nor an S3 bucket")
