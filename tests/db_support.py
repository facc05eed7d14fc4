"""Databases for tests: a fresh SQLite file, or a throwaway PostgreSQL database per run.

PostgreSQL must be reachable (it is a service of the test machine): a missing server fails the
run instead of silently skipping half the suite.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

ADMIN_URL = os.environ.get(
    "SNAP_TEST_DATABASE_URL", "postgresql+psycopg://root@127.0.0.1:5432/postgres"
)
# Names of the throwaway databases start with this, then the pytest-xdist worker ("gw0"), then a
# random part: runs and workers never share one, and a leftover is easy to recognise and drop.
DATABASE_PREFIX = os.environ.get("SNAP_TEST_DATABASE_PREFIX") or "snap_test"


def worker_label() -> str:
    """The pytest-xdist worker this process is ("gw0", "gw1"), or "main" without xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER") or "main"


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """Create a uniquely named database, yield its URL, drop it afterwards."""
    name = f"{DATABASE_PREFIX}_{worker_label()}_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    except sa.exc.OperationalError as exc:
        raise RuntimeError(f"PostgreSQL is needed for the tests at {ADMIN_URL}: {exc}") from exc
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def empty_tables(engine: sa.Engine) -> None:
    """A test reset: TRUNCATE, with triggers off for this transaction only (as superuser)."""
    with engine.begin() as connection:
        connection.execute(sa.text("SET LOCAL session_replication_role = replica"))
        connection.execute(
            sa.text(
                "TRUNCATE batch_items, batches, verifications, citations, captures, extractions,"
                " snapshots"
                " RESTART IDENTITY"
            )
        )
