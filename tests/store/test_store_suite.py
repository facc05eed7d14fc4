"""One suite, every backend: the folder store and S3 over HTTP (LocalStack) keep the same promises.

Write-once (idempotent, concurrency-safe, never overwriting), verified reads (a flipped byte or a
replaced object is an IntegrityError with both digests), and protection against deletion.
"""

from __future__ import annotations

import dataclasses
import io
import multiprocessing
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from snap.errors import BlobNotFound, IntegrityError
from snapshotter.store import BlobStore, FolderStore, blob_key
from snapshotter.store.s3 import S3Store
from tests.store.backends import Backend, put_from_process, sha256

PAGE = b"<html><body><p>Revenue rose 4.2% in 2023.</p></body></html>\n" * 50
TAGS = {"extractor": "trafilatura@2.3.1", "normalizer": "tok-nfkc-lower@1"}
WRITERS = 8


def test_put_then_get_returns_the_same_bytes(store: BlobStore) -> None:
    digest = sha256(PAGE)
    blob = store.put("raw", digest, PAGE, tags=TAGS)
    assert blob.created
    assert (blob.kind, blob.digest, blob.size) == ("raw", digest, len(PAGE))
    assert blob.key.endswith(blob_key("raw", digest))
    assert store.get("raw", digest) == PAGE
    sink = io.BytesIO()
    assert store.read_into("raw", digest, sink) == len(PAGE)
    assert sink.getvalue() == PAGE


def test_put_from_a_file_larger_than_one_read_chunk(store: BlobStore, tmp_path: Path) -> None:
    content = bytes(range(256)) * (3 * 4096 + 17)  # ~3 MiB, not a multiple of the chunk size
    source = tmp_path / "body.bin"
    source.write_bytes(content)
    digest = sha256(content)
    assert store.put("text", digest, source, tags=TAGS).size == len(content)
    assert store.get("text", digest) == content


def test_put_is_idempotent(backend: Backend, store: BlobStore) -> None:
    digest = sha256(PAGE)
    first = store.put("raw", digest, PAGE, tags=TAGS)
    second = store.put("raw", digest, PAGE, tags=TAGS)
    assert (first.created, second.created) == (True, False)
    assert second.version_id == first.version_id
    assert second.size == first.size
    assert len(backend.stored_copies(store, "raw", digest)) == 1
    assert list(store.iterate()) == [("raw", digest)]


def test_concurrent_puts_of_the_same_content_leave_one_object(
    backend: Backend, store: BlobStore
) -> None:
    content = PAGE * 200  # ~1.2 MiB, so the writers' uploads overlap
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(WRITERS)
    results = context.Queue()
    writers = [
        context.Process(target=put_from_process, args=(backend, content, barrier, results))
        for _ in range(WRITERS)
    ]
    for writer in writers:
        writer.start()
    outcomes = [results.get(timeout=120) for _ in writers]
    for writer in writers:
        writer.join(timeout=30)
    assert [outcome[0] for outcome in outcomes] == ["ok"] * WRITERS, outcomes
    assert sum(1 for outcome in outcomes if outcome[1]) == 1, outcomes
    assert len({outcome[2] for outcome in outcomes}) == 1, outcomes
    digest = sha256(content)
    assert len(backend.stored_copies(store, "raw", digest)) == 1
    assert store.get("raw", digest) == content


def test_a_changed_byte_is_caught_on_the_next_read(backend: Backend, store: BlobStore) -> None:
    digest = sha256(PAGE)
    store.put("raw", digest, PAGE, tags=TAGS)
    tampered = backend.tamper(store, "raw", digest)
    with pytest.raises(IntegrityError) as caught:
        store.get("raw", digest)
    assert caught.value.expected == digest
    assert caught.value.actual == sha256(tampered)
    with pytest.raises(IntegrityError):
        store.read_into("raw", digest, io.BytesIO())


def test_a_put_over_a_tampered_blob_is_refused(backend: Backend, store: BlobStore) -> None:
    digest = sha256(PAGE)
    store.put("raw", digest, PAGE, tags=TAGS)
    backend.tamper(store, "raw", digest)
    with pytest.raises(IntegrityError) as caught:
        store.put("raw", digest, PAGE, tags=TAGS)
    assert caught.value.expected == digest


def test_content_that_does_not_match_its_digest_is_not_stored(store: BlobStore) -> None:
    claimed = sha256(b"something else")
    with pytest.raises(IntegrityError) as caught:
        store.put("raw", claimed, PAGE, tags=TAGS)
    assert (caught.value.expected, caught.value.actual) == (claimed, sha256(PAGE))
    assert store.head("raw", claimed) is None
    assert list(store.iterate()) == []


def test_missing_blob(store: BlobStore) -> None:
    digest = sha256(b"never stored")
    assert store.head("text", digest) is None
    with pytest.raises(BlobNotFound, match=digest):
        store.get("text", digest)


def test_head_reports_without_reading(store: BlobStore) -> None:
    digest = sha256(PAGE)
    stored = store.put("text", digest, PAGE, tags=TAGS)
    found = store.head("text", digest)
    assert found is not None
    assert (found.digest, found.size, found.version_id) == (digest, len(PAGE), stored.version_id)
    assert not found.created


def test_iterate_lists_every_blob_of_both_kinds(store: BlobStore) -> None:
    contents = [b"one", b"two", b"three"]
    expected = set()
    for kind, content in zip(["raw", "text", "raw"], contents, strict=True):
        store.put(kind, sha256(content), content, tags=TAGS)
        expected.add((kind, sha256(content)))
    assert set(store.iterate()) == expected


def test_a_stored_blob_cannot_be_deleted(backend: Backend, store: BlobStore) -> None:
    digest = sha256(PAGE)
    blob = store.put("raw", digest, PAGE, tags=TAGS)
    if isinstance(store, FolderStore):
        mode = stat.S_IMODE(store.path_of("raw", digest).stat().st_mode)
        assert mode == 0o444
        return
    assert isinstance(store, S3Store)
    with pytest.raises(ClientError) as refused:
        backend.client().delete_object(Bucket=store.bucket, Key=blob.key, VersionId=blob.version_id)
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    assert store.get("raw", digest) == PAGE


@pytest.mark.s3
@pytest.mark.parametrize("lock_mode", ["GOVERNANCE", "COMPLIANCE"])
def test_s3_tags_and_retention_are_set(s3_endpoint: str, lock_mode: str) -> None:
    from tests.s3_support import new_s3_store

    store = new_s3_store(s3_endpoint, lock_mode=lock_mode, lock_days=3)
    digest = sha256(PAGE)
    before = datetime.now(UTC)
    blob = store.put("raw", digest, PAGE, tags=TAGS)
    assert blob.lock_mode == lock_mode
    assert blob.retain_until is not None
    assert before + timedelta(days=3, seconds=-2) <= blob.retain_until
    assert blob.retain_until <= datetime.now(UTC) + timedelta(days=3)

    client = store.client
    tag_set = client.get_object_tagging(Bucket=store.bucket, Key=blob.key)["TagSet"]
    assert {tag["Key"]: tag["Value"] for tag in tag_set} == {"kind": "raw", **TAGS}
    # HeadObject reports the lock as S3 holds it (moto's server, the fallback S3, has no
    # GetObjectRetention that works; LocalStack and AWS answer both the same way).
    head = client.head_object(Bucket=store.bucket, Key=blob.key)
    assert head["ObjectLockMode"] == lock_mode
    assert head["ObjectLockRetainUntilDate"] == blob.retain_until
    assert store.head("raw", digest) == dataclasses.replace(blob, created=False)


@pytest.mark.s3
def test_s3_compliance_lock_refuses_even_a_governance_bypass(s3_endpoint: str) -> None:
    from tests.s3_support import new_s3_store

    store = new_s3_store(s3_endpoint, lock_mode="COMPLIANCE")
    blob = store.put("raw", sha256(PAGE), PAGE, tags=TAGS)
    with pytest.raises(ClientError) as refused:
        store.client.delete_object(
            Bucket=store.bucket,
            Key=blob.key,
            VersionId=blob.version_id,
            BypassGovernanceRetention=True,
        )
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
