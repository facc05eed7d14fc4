"""The one small interface every blob store implements.

A blob is addressed only by its kind (``raw`` bytes as fetched, extracted ``text``, the HTTP
``headers`` of the exchanges that fetched them) and the SHA-256 of its content.  Keys are
derived from the digest alone, so the content behind a key cannot change without the key
changing; every read re-hashes and refuses a mismatch.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, Protocol

# ``resource``, ``screenshot``, ``dom`` and ``browser`` are a browser capture's subresource
# bodies, full-page PNG, rendered DOM and the document listing them (snapshotter.browser).
# ``manifest``: a capture's canonical manifest; ``timestamp``: an RFC 3161 reply (records.attest)
# ``code``: where an extracted text is code (snapshotter.extract.code_spans)
KINDS = (
    "raw",
    "text",
    "code",
    "headers",
    "resource",
    "screenshot",
    "dom",
    "browser",
    "manifest",
    "timestamp",
)
DIGEST_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}$")


def blob_key(kind: str, digest: str) -> str:
    """``raw/sha256/ab/abcdef…``: the two-character fan-out keeps folders and listings small."""
    hex_digest = digest.removeprefix("sha256:")
    return f"{kind}/sha256/{hex_digest[:2]}/{hex_digest}"


@dataclass(frozen=True)
class StoredBlob:
    """What a store knows about one blob after a put or a head."""

    kind: str
    digest: str  # "sha256:<64 hex>"
    key: str  # the backend key or relative path, e.g. "raw/sha256/ab/abcd…"
    size: int
    version_id: str | None = None  # S3 version id; None on the folder store
    lock_mode: str | None = None  # "GOVERNANCE" | "COMPLIANCE" | None
    retain_until: datetime | None = None  # timezone-aware UTC
    created: bool = False  # True when this call wrote it; False when it already existed


class BlobStore(Protocol):
    """Write-once, content-addressed blob storage with verified reads."""

    location: str  # "file:///abs/folder" or "s3://bucket/prefix", recorded on snapshots

    def put(
        self, kind: str, digest: str, source: Path | bytes, *, tags: Mapping[str, str]
    ) -> StoredBlob:
        """Store ``source`` under ``digest`` unless present; never overwrite. Idempotent."""
        ...

    def get(self, kind: str, digest: str, *, version_id: str | None = None) -> bytes:
        """The blob's bytes, re-hashed and compared with ``digest`` (IntegrityError if not).

        ``version_id``: the version recorded at capture (S3); the folder store has one version
        and ignores it. Reading the recorded version means a delete marker or a newer version
        put over the key can never make intact evidence look damaged."""
        ...

    def read_into(
        self, kind: str, digest: str, sink: BinaryIO, *, version_id: str | None = None
    ) -> int:
        """Stream the blob into ``sink`` while hashing; raise IntegrityError at the end on a
        mismatch (the caller must then discard what it received). Returns the size."""
        ...

    def head(self, kind: str, digest: str, *, version_id: str | None = None) -> StoredBlob | None:
        """Metadata of a stored blob, or None when absent. Does not read the content."""
        ...

    def shadowing(self, kind: str, digest: str, version_id: str | None) -> str | None:
        """What sits on top of the recorded version (a delete marker, a newer version), in one
        line, or None when the recorded version is the latest. Always None without versions."""
        ...

    def probe(self) -> None:
        """Raise StoreError unless the store can be reached with the current credentials."""
        ...

    def iterate(self) -> Iterator[tuple[str, str]]:
        """Every (kind, digest) in the store, for fsck."""
        ...
