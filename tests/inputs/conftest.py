"""Provider fixtures are written by hand from the providers' published types; ``{BASE}`` stands
for the loopback server that serves the cited pages in end-to-end tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.http_fixtures import http_server
from tests.records.conftest import (
    backend,
    postgres_url,
    s3_bucket,
    s3_env,
    workspace,
)
from tests.s3_support import s3_endpoint

__all__ = [
    "backend",
    "http_server",
    "postgres_url",
    "s3_bucket",
    "s3_endpoint",
    "s3_env",
    "workspace",
]

FIXTURES = Path(__file__).parent / "fixtures"
NOWHERE = "http://127.0.0.1:9"  # loopback, and never contacted by parse-only tests


def fixture_text(name: str, base: str = NOWHERE) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8").replace("{BASE}", base)


def fixture(name: str, base: str = NOWHERE) -> Any:
    return json.loads(fixture_text(name, base))


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
