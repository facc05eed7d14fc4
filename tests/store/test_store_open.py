"""``open_store`` picks the backend from the URL; creating a client sends no request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from snap.errors import ConfigError
from snapshotter.store import FolderStore, open_store
from snapshotter.store.s3 import S3Store

LOOPBACK = "http://127.0.0.1:4566"


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No region, no profile, no config file: only what each test sets."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_ENDPOINT_URL", LOOPBACK)
    return monkeypatch


def test_s3_url_gives_an_s3_store_with_the_lock_settings(aws_env: pytest.MonkeyPatch) -> None:
    store = open_store("s3://audit/snap/v1/", lock_mode="COMPLIANCE", lock_days=30)
    assert isinstance(store, S3Store)
    assert (store.bucket, store.prefix, store.location) == (
        "audit",
        "snap/v1",
        "s3://audit/snap/v1",
    )
    assert (store.lock_mode, store.lock_days) == ("COMPLIANCE", 30)
    assert store.client.meta.endpoint_url == LOOPBACK
    assert store.client.meta.region_name == "us-east-1"


def test_the_configured_region_is_respected(aws_env: pytest.MonkeyPatch) -> None:
    aws_env.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    store = open_store("s3://audit")
    assert isinstance(store, S3Store)
    assert store.client.meta.region_name == "eu-central-1"
    assert store.location == "s3://audit"


def test_aws_region_is_respected_too(aws_env: pytest.MonkeyPatch) -> None:
    aws_env.setenv("AWS_REGION", "ap-south-1")
    store = open_store("s3://audit")
    assert isinstance(store, S3Store)
    assert store.client.meta.region_name == "ap-south-1"


def test_folder_paths_and_file_urls_give_a_folder_store(tmp_path: Path) -> None:
    for url in (str(tmp_path), tmp_path.as_uri(), f"file://localhost{tmp_path}"):
        store = open_store(url)
        assert isinstance(store, FolderStore)
        assert store.root == tmp_path
        assert store.location == tmp_path.as_uri()


def test_a_relative_folder_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_store("blobs")
    assert isinstance(store, FolderStore)
    assert store.root == tmp_path / "blobs"


@pytest.mark.parametrize(
    "url", ["", "   ", "s3://", "s3:///prefix", "http://example.org/store", "file://host/x"]
)
def test_other_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError):
        open_store(url)


def test_the_folder_store_does_not_import_boto3(tmp_path: Path) -> None:
    """Nor the S3 backend itself: every command on the default store would pay for it."""
    s3_modules = ("boto3", "botocore", "snapshotter.store.s3")
    program = (
        "import sys; from snapshotter.store import open_store; "
        f"open_store({str(tmp_path)!r}); "
        f"sys.exit(1 if any(name in sys.modules for name in {s3_modules!r}) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", program], check=False).returncode == 0
