"""What the shared store suite needs to know about each backend, beyond the BlobStore protocol.

A ``Backend`` opens the store under test (also inside a spawned process, so it is picklable and
holds only plain values) and reaches behind the store's back to tamper with or count what it
stored, the way a corrupted disk or a careless administrator would.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snapshotter.store import BlobStore, FolderStore, StoredBlob
from snapshotter.store.s3 import S3Store
from tests.s3_support import make_client


@dataclass(frozen=True)
class Backend:
    name: str  # "folder" | "s3"
    root: str = ""
    bucket: str = ""
    prefix: str = ""
    endpoint: str = ""
    lock_mode: str = "GOVERNANCE"
    lock_days: int = 1

    def open(self) -> BlobStore:
        if self.name == "folder":
            return FolderStore(Path(self.root))
        return S3Store(
            self.bucket,
            self.prefix,
            lock_mode=self.lock_mode,
            lock_days=self.lock_days,
            client=make_client(self.endpoint),
        )

    def client(self) -> Any:
        return make_client(self.endpoint)

    def tamper(self, store: BlobStore, kind: str, digest: str) -> bytes:
        """Change the stored content behind the store's back; returns the new content."""
        if isinstance(store, FolderStore):
            path = store.path_of(kind, digest)
            path.chmod(0o644)
            content = bytearray(path.read_bytes())
            content[len(content) // 2] ^= 0x01
            path.write_bytes(content)
            return bytes(content)
        assert isinstance(store, S3Store)
        replacement = b"a replacement written without IfNoneMatch"
        # A plain put: with versioning on (Object Lock) it becomes the new latest version.
        self.client().put_object(
            Bucket=store.bucket, Key=store.key_of(kind, digest), Body=replacement
        )
        return replacement

    def stored_copies(self, store: BlobStore, kind: str, digest: str) -> list[str]:
        """Every stored thing under the blob's key: files in its folder, or S3 versions."""
        if isinstance(store, FolderStore):
            folder = store.path_of(kind, digest).parent
            return sorted(path.name for path in folder.iterdir())
        assert isinstance(store, S3Store)
        key = store.key_of(kind, digest)
        response = self.client().list_object_versions(Bucket=store.bucket, Prefix=key)
        return [version["VersionId"] for version in response.get("Versions", [])]


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def put_from_process(backend: Backend, data: bytes, barrier: Any, results: Any) -> None:
    """Run in a spawned process: wait for every sibling, then put the same content at once."""
    store = backend.open()
    digest = sha256(data)
    barrier.wait(timeout=60)
    try:
        blob: StoredBlob = store.put("raw", digest, data, tags={"normalizer": "test@1"})
    except Exception as error:
        results.put(("error", f"{type(error).__name__}: {error}"))
        return
    results.put(("ok", blob.created, blob.version_id))
