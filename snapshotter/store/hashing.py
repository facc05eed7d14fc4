"""Hashing shared by every backend: the address check, the source digest and the verified copy.

Both stores funnel every read through :func:`copy_verified`, so there is exactly one place where
bytes are compared with the digest they are stored under.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from snapshotter.errors import InputError, IntegrityError, StoreError
from snapshotter.store.base import DIGEST_PATTERN, KINDS

# 1 MiB: large enough that per-call overhead vanishes next to SHA-256 itself, small enough to
# keep memory flat whatever the blob size.
CHUNK_SIZE = 1024 * 1024


def check_address(kind: str, digest: str) -> None:
    """Refuse a kind or digest that could not have come from snap (keys are built from them)."""
    if kind not in KINDS:
        raise InputError(f"unknown blob kind {kind!r}; expected one of {', '.join(KINDS)}")
    if not DIGEST_PATTERN.match(digest):
        raise InputError(f"not a sha256 digest: {digest!r}; expected 'sha256:' and 64 hex digits")


def digest_of(hasher: hashlib._Hash) -> str:
    return "sha256:" + hasher.hexdigest()


def read_chunks(stream: BinaryIO) -> Iterator[memoryview]:
    """Chunks of ``stream`` read into one reused buffer (each view is valid until the next)."""
    buffer = bytearray(CHUNK_SIZE)
    view = memoryview(buffer)
    while True:
        count = stream.readinto(buffer)  # type: ignore[attr-defined]
        if not count:
            return
        yield view[:count]


def sha256_of(data: bytes) -> str:
    """``sha256:<hex>`` of bytes in memory: how snap names every blob and manifest."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def source_digest(source: Path | bytes) -> tuple[str, int]:
    """SHA-256 and size of what a caller asks to store, read in chunks for a file."""
    if isinstance(source, bytes):
        return sha256_of(source), len(source)
    hasher = hashlib.sha256()
    size = 0
    try:
        with source.open("rb", buffering=0) as stream:
            for chunk in read_chunks(stream):
                hasher.update(chunk)
                size += len(chunk)
    except OSError as error:
        raise StoreError(f"cannot read {source}: {error.strerror or error}") from None
    return digest_of(hasher), size


def require_digest(key: str, expected: str, actual: str) -> None:
    if actual != expected:
        raise IntegrityError(key, expected, actual)


def copy_verified(
    chunks: Iterable[bytes | memoryview], sink: BinaryIO, *, key: str, digest: str
) -> int:
    """Write ``chunks`` to ``sink`` while hashing them; IntegrityError at the end on a mismatch.

    The sink has already received the bytes when the mismatch is found: a streaming reader can
    only know at the end.  Callers that must never hold unverified bytes (``get``) buffer first.
    """
    hasher = hashlib.sha256()
    size = 0
    for chunk in chunks:
        hasher.update(chunk)
        sink.write(chunk)
        size += len(chunk)
    require_digest(key, digest, digest_of(hasher))
    return size


class NullSink(io.BytesIO):
    """Discards what it is given: verifies a blob (or measures the read path) without keeping it."""

    def write(self, data: Any, /) -> int:
        return memoryview(data).nbytes
