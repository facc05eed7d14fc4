"""A real S3 API over HTTP for the tests: LocalStack (or moto's server) on loopback.

``tests/run.sh`` starts LocalStack and exports ``SNAP_TEST_S3_ENDPOINT``; without it the default
``http://127.0.0.1:4566`` is tried.  An unreachable endpoint FAILS the tests that need it with a
message saying how to start one: a missing S3 must never turn into a quiet skip.

Other test folders get a fresh Object-Locked bucket per test with::

    from tests.s3_support import s3_endpoint, s3_store  # noqa: F401  (pytest fixtures)
"""

from __future__ import annotations

import ipaddress
import os
import urllib.error
import urllib.request
import uuid
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.config import Config

from snapshotter.store.s3 import S3Store
from tests.db_support import worker_label

ENDPOINT_VARIABLE = "SNAP_TEST_S3_ENDPOINT"
DEFAULT_ENDPOINT = "http://127.0.0.1:4566"
REGION = "us-east-1"
BUCKET_PREFIX = os.environ.get("SNAP_TEST_BUCKET_PREFIX") or "snap"
HOW_TO_START = (
    "start LocalStack with `bash localstack/start.sh` (tests/run.sh does this) or point "
    f"{ENDPOINT_VARIABLE} at another S3 API on loopback"
)


def endpoint_from_env() -> str:
    return os.environ.get(ENDPOINT_VARIABLE) or DEFAULT_ENDPOINT


def check_endpoint(endpoint: str) -> str | None:
    """None when ``endpoint`` is a loopback HTTP server that answers; otherwise why not."""
    host = urlsplit(endpoint).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        return f"{ENDPOINT_VARIABLE}={endpoint} is not a loopback address; tests stay on this host"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(endpoint, timeout=5):
            return None
    except urllib.error.HTTPError:
        return None  # it answered, even if only to refuse an unsigned request
    except OSError as error:
        return f"S3 endpoint {endpoint} is not reachable ({error})"


def make_client(endpoint: str, *, max_attempts: int = 3) -> Any:
    """A client with the fixed test credentials LocalStack and moto accept."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"mode": "standard", "max_attempts": max_attempts}),
    )


def fresh_bucket_name(label: str = "t") -> str:
    """A bucket name no other run or pytest-xdist worker uses: the prefix, the worker, a label
    and a random part (S3 names are lower-case, at most 63 characters)."""
    worker = worker_label().lower()
    return f"{BUCKET_PREFIX}-{worker}-{label}-{uuid.uuid4().hex[:20]}"[:63]


def new_s3_store(
    endpoint: str, *, prefix: str = "blobs", lock_mode: str = "GOVERNANCE", lock_days: int = 1
) -> S3Store:
    """An S3Store on a bucket of its own, created with Object Lock through ``init_bucket``."""
    store = S3Store(
        fresh_bucket_name(),
        prefix,
        lock_mode=lock_mode,
        lock_days=lock_days,
        client=make_client(endpoint),
    )
    status = store.init_bucket()
    assert status.created, status
    assert status.object_lock_enabled, status
    return store


@pytest.fixture(scope="session")
def s3_endpoint() -> str:
    """The S3 endpoint URL; fails (never skips) the requesting test when it is unusable."""
    endpoint = endpoint_from_env()
    problem = check_endpoint(endpoint)
    if problem is not None:
        pytest.fail(f"{problem}: {HOW_TO_START}", pytrace=False)
    return endpoint


@pytest.fixture
def s3_store(s3_endpoint: str) -> S3Store:
    """A fresh Object-Locked bucket (GOVERNANCE, 1 day) behind an S3Store."""
    return new_s3_store(s3_endpoint)
