"""Export tests run on both backends (SQLite + folder, PostgreSQL + S3), against loopback
servers only; the tools the other side runs (warcio, wacz, pywb) are run as they would be."""

from __future__ import annotations

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
