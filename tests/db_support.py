"""Databases for tests: a fresh SQLite file, or a throwaway PostgreSQL database per run.

PostgreSQL must be reachable (it is a service of the test machine): a missing server fails the
run instead of silently skipping half the suite.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import sessionmaker

from records.db import Database
from snap.config import Settings

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


def embedded_database_path(home: Path) -> Path:
    """Where the embedded default keeps its SQLite file under ``SNAP_HOME``, asked of snap's own
    settings rather than written down here a second time."""
    url = sa.make_url(Settings.from_env({"SNAP_HOME": str(home)}).database_url)
    assert url.database, url
    return Path(url.database)


def migrated_sqlite_template(folder: Path) -> Path:
    """An empty embedded database at the head revision, migrated by the code a first run uses.

    Migrating costs about a quarter of a second per database; the tests that want a ready home
    copy this file instead (``ready_home``). Disposing the engine checkpoints SQLite's WAL into
    the main file, so the one file is the whole database."""
    path = embedded_database_path(folder / "template-home")
    Database(f"sqlite:///{path}").dispose()
    return path


def ready_home(home: Path, template: Path) -> Path:
    """Make ``home`` a snap home whose database is already migrated (a copy of ``template``).
    Tests of what a first run does (an empty or missing home) must not use this."""
    target = embedded_database_path(home)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, target)
    return home


def empty_tables(engine: sa.Engine) -> None:
    """A test reset: TRUNCATE, with triggers off for this transaction only (as superuser)."""
    with engine.begin() as connection:
        connection.execute(sa.text("SET LOCAL session_replication_role = replica"))
        connection.execute(
            sa.text(
                "TRUNCATE log_entries, log_checkpoints, batch_items, batches, verifications,"
                " citations, captures, extractions,"
                " snapshots"
                " RESTART IDENTITY"
            )
        )


class JoinedDatabase(Database):
    """A Database whose every session is a savepoint of one test's transaction (SQLAlchemy 2's
    "join an external transaction" recipe, ``join_transaction_mode="create_savepoint"``): what
    the code under test commits is seen by the rest of the test, and all of it is rolled back
    when the test ends, which costs far less than emptying every table. Only for code that
    runs in the test's own process and thread; data another process must see needs a real
    commit (``empty_tables`` then)."""

    def __init__(self, url: str, connection: sa.Connection, **options: Any) -> None:
        super().__init__(url, **options)
        joined = sessionmaker(
            connection, expire_on_commit=False, join_transaction_mode="create_savepoint"
        )
        self._reads = self._writes = joined


@contextmanager
def rolled_back(url: str) -> Iterator[sa.Connection]:
    """A connection to ``url`` inside a transaction that is rolled back at the end."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    connection = engine.connect()
    transaction = connection.begin()
    try:
        yield connection
    finally:
        transaction.rollback()
        connection.close()
        engine.dispose()
