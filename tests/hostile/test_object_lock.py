"""Object Lock taken from S3, not on trust: LocalStack, a bucket created without Object Lock.

Everything here talks only to the S3 API on loopback (``SNAP_TEST_S3_ENDPOINT``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from snap.cli import cli
from snap.errors import StoreError
from snapshotter.store.s3 import S3Store
from tests.s3_support import fresh_bucket_name, make_client, new_s3_store
from tests.s3_support import s3_endpoint as s3_endpoint  # a fixture, re-exported for pytest

pytestmark = pytest.mark.s3

CONTENT = b"evidence that must not be deletable"
DIGEST = "sha256:" + hashlib.sha256(CONTENT).hexdigest()


def plain_bucket(endpoint: str) -> str:
    """A bucket created the ordinary way: versioning off, no Object Lock."""
    name = fresh_bucket_name("plain")
    make_client(endpoint).create_bucket(Bucket=name)
    return name


def test_a_bucket_without_object_lock_is_refused(s3_endpoint: str) -> None:
    bucket = plain_bucket(s3_endpoint)
    store = S3Store(bucket, client=make_client(s3_endpoint))
    with pytest.raises(StoreError, match="reports no Object Lock"):
        store.put("raw", DIGEST, CONTENT, tags={})
    listed = make_client(s3_endpoint).list_objects_v2(Bucket=bucket)
    assert listed.get("KeyCount", 0) == 0  # refused before anything was written


def test_lock_mode_none_stores_and_claims_no_retention(s3_endpoint: str) -> None:
    bucket = plain_bucket(s3_endpoint)
    store = S3Store(bucket, lock_mode="NONE", client=make_client(s3_endpoint))
    blob = store.put("raw", DIGEST, CONTENT, tags={})
    assert (blob.lock_mode, blob.retain_until) == (None, None)
    assert store.get("raw", DIGEST) == CONTENT


def test_retention_recorded_is_what_s3_reports(s3_endpoint: str) -> None:
    store = new_s3_store(s3_endpoint, lock_mode="COMPLIANCE", lock_days=2)
    blob = store.put("raw", DIGEST, CONTENT, tags={})
    head = make_client(s3_endpoint).head_object(
        Bucket=store.bucket, Key=blob.key, VersionId=blob.version_id
    )
    assert blob.lock_mode == head["ObjectLockMode"] == "COMPLIANCE"
    assert blob.retain_until == head["ObjectLockRetainUntilDate"]


def test_cli_refuses_a_plain_bucket_with_exit_3_and_audits_none_as_no_retention(
    s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = plain_bucket(s3_endpoint)
    source = tmp_path / "page.txt"
    source.write_text("A plain text source with enough words to be stored as text.\n")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("SNAP_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SNAP_STORE", f"s3://{bucket}/p")
    refused = CliRunner().invoke(cli, ["fetch", str(source)])
    assert refused.exit_code == 3
    assert refused.output.count("\n") == 1
    assert "reports no Object Lock" in refused.output
    monkeypatch.setenv("SNAP_S3_LOCK_MODE", "none")
    stored = CliRunner().invoke(cli, ["fetch", "--json", str(source)])
    assert stored.exit_code == 0, stored.output
    audited = CliRunner().invoke(cli, ["audit", "--url", str(source)])
    assert "retention no retention" in audited.output
