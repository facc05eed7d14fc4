"""Fixtures of the store suite: every test that takes ``backend`` runs on each store."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapshotter.store import BlobStore
from tests.s3_support import new_s3_store
from tests.s3_support import s3_endpoint as s3_endpoint  # a fixture, re-exported for pytest
from tests.store.backends import Backend


@pytest.fixture(params=["folder", pytest.param("s3", marks=pytest.mark.s3)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A backend with an empty store: a folder in tmp_path, or a fresh Object-Locked bucket."""
    if request.param == "folder":
        return Backend("folder", root=str(tmp_path / "store"))
    endpoint = request.getfixturevalue("s3_endpoint")
    store = new_s3_store(endpoint, prefix="suite")
    return Backend("s3", bucket=store.bucket, prefix=store.prefix, endpoint=endpoint)


@pytest.fixture
def store(backend: Backend) -> BlobStore:
    return backend.open()
