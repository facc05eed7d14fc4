"""S3Store's boundary: botocore's errors become snap's, one line naming the bucket.

These use botocore's Stubber (no request is sent) and moto's S3 server on an ephemeral loopback
port; the connection-refused case dials a closed port on 127.0.0.1.
"""

from __future__ import annotations

import base64
import hashlib
import io
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.stub import ANY, Stubber
from moto.server import ThreadedMotoServer

from snap.errors import BlobNotFound, ConfigError, InputError, IntegrityError, StoreError
from snapshotter.store.s3 import S3Store, tagging
from tests.s3_support import make_client

CONTENT = b"stored bytes"
DIGEST = "sha256:" + hashlib.sha256(CONTENT).hexdigest()
BUCKET = "audit-bucket"


def checksum_of(content: bytes) -> str:
    return base64.b64encode(hashlib.sha256(content).digest()).decode()


@pytest.fixture
def stubbed() -> Iterator[tuple[S3Store, Stubber]]:
    """A store whose client answers from a script; the endpoint is a closed loopback port."""
    client = make_client("http://127.0.0.1:9", max_attempts=1)
    with Stubber(client) as stubber:
        yield S3Store(BUCKET, "p", client=client), stubber
        stubber.assert_no_pending_responses()


def head_response(content: bytes, **extra: Any) -> dict[str, Any]:
    return {
        "ContentLength": len(content),
        "ChecksumSHA256": checksum_of(content),
        "ChecksumType": "FULL_OBJECT",
        "VersionId": "v1",
        "ObjectLockMode": "GOVERNANCE",
        "ObjectLockRetainUntilDate": datetime(2030, 1, 1, tzinfo=UTC),
        **extra,
    }


def bucket_has_object_lock(stubber: Stubber) -> None:
    """What S3 answers before the first put: the store refuses buckets without Object Lock."""
    stubber.add_response(
        "get_object_lock_configuration",
        {"ObjectLockConfiguration": {"ObjectLockEnabled": "Enabled"}},
        {"Bucket": BUCKET},
    )


@pytest.mark.parametrize(
    ("code", "status", "message"),
    [
        ("AccessDenied", 403, f"access denied to S3 bucket '{BUCKET}'"),
        ("NoSuchBucket", 404, f"S3 bucket '{BUCKET}' does not exist"),
        ("InternalError", 500, f"GetObject p/raw/sha256/{DIGEST[7:9]}"),
    ],
)
def test_get_errors_name_the_bucket(
    stubbed: tuple[S3Store, Stubber], code: str, status: int, message: str
) -> None:
    store, stubber = stubbed
    stubber.add_client_error("get_object", service_error_code=code, http_status_code=status)
    with pytest.raises(StoreError) as caught:
        store.get("raw", DIGEST)
    assert not isinstance(caught.value, BlobNotFound)
    assert message in caught.value.message
    assert "\n" not in caught.value.message


def test_missing_key_is_blob_not_found(stubbed: tuple[S3Store, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_client_error("get_object", service_error_code="NoSuchKey", http_status_code=404)
    with pytest.raises(BlobNotFound, match="s3://audit-bucket/p"):
        store.get("raw", DIGEST)


def test_existing_object_with_matching_checksum_is_reported_as_stored(
    stubbed: tuple[S3Store, Stubber],
) -> None:
    store, stubber = stubbed
    bucket_has_object_lock(stubber)
    stubber.add_client_error("put_object", "PreconditionFailed", http_status_code=412)
    stubber.add_response("head_object", head_response(CONTENT))
    blob = store.put("raw", DIGEST, CONTENT, tags={})
    assert (blob.created, blob.version_id, blob.size) == (False, "v1", len(CONTENT))
    assert blob.retain_until == datetime(2030, 1, 1, tzinfo=UTC)


def test_existing_object_with_another_checksum_is_an_integrity_error(
    stubbed: tuple[S3Store, Stubber],
) -> None:
    store, stubber = stubbed
    bucket_has_object_lock(stubber)
    stubber.add_client_error("put_object", "PreconditionFailed", http_status_code=412)
    stubber.add_response("head_object", head_response(b"other bytes!"))
    with pytest.raises(IntegrityError) as caught:
        store.put("raw", DIGEST, CONTENT, tags={})
    assert caught.value.actual == "sha256:" + hashlib.sha256(b"other bytes!").hexdigest()


def test_existing_object_without_a_checksum_is_read_and_rehashed(
    stubbed: tuple[S3Store, Stubber],
) -> None:
    from botocore.response import StreamingBody

    store, stubber = stubbed
    bucket_has_object_lock(stubber)
    stubber.add_client_error("put_object", "PreconditionFailed", http_status_code=412)
    stubber.add_response("head_object", {"ContentLength": len(CONTENT), "VersionId": "v1"})
    body = StreamingBody(io.BytesIO(CONTENT), len(CONTENT))
    stubber.add_response("get_object", {"Body": body, "ContentLength": len(CONTENT)})
    assert store.put("raw", DIGEST, CONTENT, tags={}).created is False


def test_a_conflicting_concurrent_write_is_retried(stubbed: tuple[S3Store, Stubber]) -> None:
    store, stubber = stubbed
    bucket_has_object_lock(stubber)
    stubber.add_client_error("put_object", "ConditionalRequestConflict", http_status_code=409)
    stubber.add_response("put_object", {"VersionId": "v2"})
    stubber.add_response("head_object", head_response(CONTENT, VersionId="v2"))
    blob = store.put("raw", DIGEST, CONTENT, tags={})
    assert (blob.created, blob.version_id) == (True, "v2")


def test_an_upload_corrupted_in_transit_is_a_store_error(
    stubbed: tuple[S3Store, Stubber],
) -> None:
    store, stubber = stubbed
    bucket_has_object_lock(stubber)
    stubber.add_client_error("put_object", "BadDigest", http_status_code=400)
    with pytest.raises(StoreError, match="corrupted in transit"):
        store.put("raw", DIGEST, CONTENT, tags={})


def test_put_sends_one_conditional_locked_checksummed_request(
    stubbed: tuple[S3Store, Stubber],
) -> None:
    store, stubber = stubbed
    expected = {
        "Bucket": BUCKET,
        "Key": f"p/raw/sha256/{DIGEST[7:9]}/{DIGEST[7:]}",
        "Body": ANY,
        "ContentLength": len(CONTENT),
        "ContentType": "application/octet-stream",
        "IfNoneMatch": "*",
        "ChecksumAlgorithm": "SHA256",
        "ChecksumSHA256": checksum_of(CONTENT),
        "ObjectLockMode": "GOVERNANCE",
        "ObjectLockRetainUntilDate": ANY,
        "Tagging": "kind=raw&normalizer=tok-nfkc-lower%401",
    }
    bucket_has_object_lock(stubber)
    stubber.add_response("put_object", {"VersionId": "v9"}, expected)
    read_back = {"Bucket": BUCKET, "Key": expected["Key"], "ChecksumMode": "ENABLED"}
    stubber.add_response(
        "head_object", head_response(CONTENT, VersionId="v9"), {**read_back, "VersionId": "v9"}
    )
    blob = store.put("raw", DIGEST, CONTENT, tags={"normalizer": "tok-nfkc-lower@1"})
    assert (blob.created, blob.version_id, blob.lock_mode) == (True, "v9", "GOVERNANCE")
    assert blob.retain_until == datetime(2030, 1, 1, tzinfo=UTC)  # what S3 reported


def test_a_put_that_s3_reports_without_retention_is_refused(
    stubbed: tuple[S3Store, Stubber],
) -> None:
    store, stubber = stubbed
    bucket_has_object_lock(stubber)
    stubber.add_response("put_object", {"VersionId": "v3"})
    unlocked = head_response(CONTENT, VersionId="v3")
    del unlocked["ObjectLockMode"], unlocked["ObjectLockRetainUntilDate"]
    stubber.add_response("head_object", unlocked)
    with pytest.raises(StoreError, match="reports no Object Lock retention"):
        store.put("raw", DIGEST, CONTENT, tags={})


def test_a_bucket_without_object_lock_is_refused_before_writing(
    stubbed: tuple[S3Store, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_client_error(
        "get_object_lock_configuration",
        "ObjectLockConfigurationNotFoundError",
        http_status_code=404,
    )
    with pytest.raises(StoreError, match=r"reports no Object Lock.*SNAP_S3_LOCK_MODE=none"):
        store.put("raw", DIGEST, CONTENT, tags={})


def test_an_unreachable_endpoint_is_a_store_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    client = make_client(f"http://127.0.0.1:{closed_port}", max_attempts=1)
    store = S3Store(BUCKET, client=client)
    with pytest.raises(StoreError, match=f"cannot reach S3 bucket '{BUCKET}' at http://127.0.0.1"):
        store.head("raw", DIGEST)


def test_missing_credentials_are_a_store_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    for name in ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never ask 169.254.169.254
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    with pytest.raises(StoreError, match="no AWS credentials"):
        S3Store(BUCKET).head("raw", DIGEST)


def test_an_unknown_profile_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="no-such-profile"):
        S3Store(BUCKET)


@pytest.mark.parametrize(("kind", "digest"), [("pdf", DIGEST), ("raw", "sha256:ABC"), ("raw", "")])
def test_keys_only_come_from_valid_addresses(kind: str, digest: str) -> None:
    store = S3Store(BUCKET, client=make_client("http://127.0.0.1:9"))
    with pytest.raises(InputError):
        store.key_of(kind, digest)


def test_bad_lock_settings_are_config_errors() -> None:
    client = make_client("http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="GOVERNANCE or COMPLIANCE"):
        S3Store(BUCKET, lock_mode="governance", client=client)
    with pytest.raises(ConfigError, match="at least 1"):
        S3Store(BUCKET, lock_days=0, client=client)


def test_tags_are_limited_to_what_s3_accepts() -> None:
    encoded = tagging("text", {"extractor": "trafilatura@2.3.1+fmt=txt,tables=1", "x": "dropped"})
    assert encoded == "kind=text&extractor=trafilatura%402.3.1%2Bfmt%3Dtxt_tables%3D1"
    assert len(tagging("raw", {"normalizer": "n" * 400})) == len("kind=raw&normalizer=") + 256


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    """moto's S3 server on an ephemeral loopback port, for buckets LocalStack tests don't cover."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def test_init_bucket_reports_an_existing_bucket_without_object_lock(moto_endpoint: str) -> None:
    client = make_client(moto_endpoint)
    client.create_bucket(Bucket="plain-bucket")
    store = S3Store("plain-bucket", client=client)
    status = store.init_bucket()
    assert (status.created, status.object_lock_enabled) == (False, False)
    with pytest.raises(StoreError, match="reports no Object Lock"):
        store.put("raw", DIGEST, CONTENT, tags={})


def test_init_bucket_creates_a_locked_bucket_once(moto_endpoint: str) -> None:
    store = S3Store("new-bucket", client=make_client(moto_endpoint))
    first, second = store.init_bucket(), store.init_bucket()
    assert (first.created, first.object_lock_enabled) == (True, True)
    assert (second.created, second.object_lock_enabled) == (False, True)


def test_a_stored_checksum_that_disagrees_with_the_bytes_is_an_integrity_error(
    stubbed: tuple[S3Store, Stubber],
) -> None:
    from botocore.response import StreamingBody

    store, stubber = stubbed
    body = StreamingBody(io.BytesIO(CONTENT), len(CONTENT))
    stubber.add_response(
        "get_object",
        {"Body": body, "ContentLength": len(CONTENT), **head_response(b"other bytes!")},
    )
    with pytest.raises(IntegrityError) as caught:
        store.get("raw", DIGEST)
    assert caught.value.expected == DIGEST
    assert caught.value.actual == "sha256:" + hashlib.sha256(b"other bytes!").hexdigest()
