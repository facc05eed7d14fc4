"""The import tests run on both backends, with the fixtures of the records tests."""

from __future__ import annotations

from tests.http_fixtures import http_server  # noqa: F401  (fixture)
from tests.records.conftest import (  # noqa: F401  (fixtures)
    backend,
    postgres_url,
    s3_bucket,
    s3_env,
    workspace,
)
from tests.s3_support import s3_endpoint  # noqa: F401  (fixture)
