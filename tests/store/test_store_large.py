"""Large blobs: storing one that is already there is quick, and never sends its body again.

S3 answers a conditional put of an existing key with 412 before reading the body; LocalStack
then leaves the client waiting for its read timeout, and real S3 receives the whole body only
to refuse it.  So above ``HEAD_FIRST_BYTES`` the store asks with HEAD first.
"""

from __future__ import annotations

import base64
import hashlib
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import Stubber

from snap.errors import StoreError
from snapshotter.store import BlobStore
from snapshotter.store.s3 import HEAD_FIRST_BYTES, S3Store
from tests.s3_support import make_client
from tests.store.backends import Backend, sha256

MIB = 1024 * 1024


def large_file(folder: Path, size: int) -> tuple[Path, str]:
    path = folder / "large.bin"
    block = hashlib.sha256(b"snap").digest() * (MIB // 32)
    with path.open("wb") as out:
        for n in range(size // MIB):
            out.write(n.to_bytes(4, "big") + block[4:])
    return path, sha256(path.read_bytes())


def count_puts(store: BlobStore) -> list[str]:
    """Every PutObject the S3 client is about to send (the folder store sends none)."""
    sent: list[str] = []
    if isinstance(store, S3Store):
        store.client.meta.events.register(
            "before-parameter-build.s3.PutObject",
            lambda **kwargs: sent.append(kwargs["params"]["Key"]),
        )
    return sent


@pytest.mark.timeout(120)
def test_a_16_mib_blob_stored_twice_finishes_in_seconds(
    backend: Backend, store: BlobStore, tmp_path: Path
) -> None:
    path, digest = large_file(tmp_path, 16 * MIB)
    puts = count_puts(store)
    first = store.put("raw", digest, path, tags={})
    started = time.monotonic()
    second = store.put("raw", digest, path, tags={})
    seconds = time.monotonic() - started
    assert (first.created, second.created) == (True, False)
    assert (second.size, second.version_id) == (16 * MIB, first.version_id)
    assert len(backend.stored_copies(store, "raw", digest)) == 1
    assert seconds < 10, f"storing an existing 16 MiB blob took {seconds:.1f} s"
    if backend.name == "s3":
        assert len(puts) == 1, "the second put sent the body again"


def stubbed_store() -> tuple[S3Store, Stubber]:
    """A store whose client answers from a stub; the bucket reports Object Lock (asked once,
    before the first put)."""
    client = make_client("http://127.0.0.1:9", max_attempts=1)  # a closed port: nothing is sent
    stubber = Stubber(client)
    stubber.add_response(
        "get_object_lock_configuration",
        {"ObjectLockConfiguration": {"ObjectLockEnabled": "Enabled"}},
    )
    return S3Store("bucket", "p", client=client), stubber


def head_of(content: bytes) -> dict[str, Any]:
    return {
        "ContentLength": len(content),
        "ChecksumSHA256": base64.b64encode(hashlib.sha256(content).digest()).decode(),
        "ChecksumType": "FULL_OBJECT",
        "VersionId": "v1",
        "ObjectLockMode": "GOVERNANCE",
        "ObjectLockRetainUntilDate": datetime(2030, 1, 1, tzinfo=UTC),
    }


def test_a_large_blob_already_stored_is_not_uploaded() -> None:
    content = b"x" * (HEAD_FIRST_BYTES + 1)
    store, stubber = stubbed_store()
    with stubber:
        stubber.add_response("head_object", head_of(content))
        blob = store.put("raw", sha256(content), content, tags={})
        stubber.assert_no_pending_responses()
    assert (blob.created, blob.version_id) == (False, "v1")


def test_a_large_new_blob_is_checked_then_put_conditionally() -> None:
    """HEAD answers "absent", and the put is still If-None-Match: the race stays guarded."""
    content = b"y" * (HEAD_FIRST_BYTES + 1)
    store, stubber = stubbed_store()
    with stubber:
        stubber.add_client_error("head_object", "404", http_status_code=404)
        stubber.add_client_error("put_object", "PreconditionFailed", http_status_code=412)
        stubber.add_response("head_object", head_of(content))
        blob = store.put("raw", sha256(content), content, tags={})
        stubber.assert_no_pending_responses()
    assert blob.created is False


def test_a_small_blob_goes_straight_to_the_conditional_put() -> None:
    content = b"small"
    store, stubber = stubbed_store()
    with stubber:
        stubber.add_response("put_object", {"VersionId": "v2"})
        stubber.add_response("head_object", head_of(content) | {"VersionId": "v2"})
        blob = store.put("raw", sha256(content), content, tags={})
        stubber.assert_no_pending_responses()
    assert (blob.created, blob.version_id) == (True, "v2")


def test_a_writer_not_allowed_to_look_still_puts_but_cannot_claim_retention() -> None:
    """HEAD needs read permission: the look before the put is skipped when denied, but the
    read back of the retention S3 applied cannot be, so the put fails loudly (nothing would
    show the evidence is retained)."""
    content = b"z" * (HEAD_FIRST_BYTES + 1)
    store, stubber = stubbed_store()
    with stubber:
        stubber.add_client_error("head_object", "403", http_status_code=403)
        stubber.add_response("put_object", {"VersionId": "v3"})
        stubber.add_client_error("head_object", "403", http_status_code=403)
        with pytest.raises(StoreError, match="access denied"):
            store.put("raw", sha256(content), content, tags={})
        stubber.assert_no_pending_responses()
