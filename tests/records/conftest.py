"""Every records test runs twice: on the embedded default (SQLite + folder store) and on the
production pair (PostgreSQL + S3 over HTTP)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

import records.workspace
from records.db import Database
from records.workspace import Workspace
from snap.config import Settings
from snapshotter.store import blob_key
from tests.db_support import (
    JoinedDatabase,
    empty_tables,
    ready_home,
    rolled_back,
    throwaway_postgres,
)
from tests.http_fixtures import http_server  # noqa: F401  (fixture)
from tests.s3_support import make_client, new_s3_store, s3_endpoint  # noqa: F401  (fixture)
from tests.snap_cli import run_snap, run_snap_process

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@dataclass
class Backend:
    name: str
    env: dict[str, str]
    processes: bool = False  # every command in a child process (tests marked real_process)
    # Production in savepoints: the test's transaction, rolled back when it ends.
    connection: sa.Connection | None = None

    def settings(self) -> Settings:
        return Settings.from_env(self.env)

    def workspace(self) -> Workspace:
        return Workspace.open(self.settings())

    @contextmanager
    def opened(self) -> Iterator[Workspace]:
        """``workspace()``, closed when the block ends."""
        workspace = self.workspace()
        try:
            yield workspace
        finally:
            workspace.close()

    def corrupt(self, kind: str, digest: str) -> None:
        """Make the recorded copy of a blob hash wrong (a disk fault, or tampering).

        Folder store: flip one byte of the file. S3: a locked version cannot be changed, so a
        copy with one byte flipped is put as a new version and the records are pointed at it,
        as if that version had been the one recorded at capture."""
        settings = self.settings()
        key = blob_key(kind, digest)
        if self.name == "embedded":
            path = Path(settings.store_url) / key
            path.chmod(0o644)
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0x01
            path.write_bytes(bytes(data))
            return
        client, bucket, full_key = self.s3_object(kind, digest)
        data = bytearray(client.get_object(Bucket=bucket, Key=full_key)["Body"].read())
        data[len(data) // 2] ^= 0x01
        version = client.put_object(Bucket=bucket, Key=full_key, Body=bytes(data))["VersionId"]
        self.record_version(kind, digest, version)

    def shadow(self, kind: str, digest: str, *, how: str) -> None:
        """Write over a blob's key the way S3 allows under Object Lock: a plain DeleteObject
        (a delete marker) or a newer version with other bytes. The recorded version stays."""
        client, bucket, full_key = self.s3_object(kind, digest)
        if how == "delete-marker":
            client.delete_object(Bucket=bucket, Key=full_key)
        else:
            client.put_object(Bucket=bucket, Key=full_key, Body=b"something else entirely")

    def s3_object(self, kind: str, digest: str) -> tuple[Any, str, str]:
        bucket, _, prefix = self.settings().store_url.removeprefix("s3://").partition("/")
        client = make_client(self.env["AWS_ENDPOINT_URL"])
        return client, bucket, f"{prefix}/{blob_key(kind, digest)}"

    @contextmanager
    def sql(self) -> Iterator[sa.Connection]:
        """A connection for changing records behind snap's back that sees what the test
        recorded and whose changes snap then sees: a savepoint of the test's transaction, or
        (committed data) a transaction of its own."""
        if self.connection is not None:
            with self.connection.begin_nested():
                yield self.connection
            return
        engine = sa.create_engine(self.settings().database_url)
        try:
            with engine.begin() as connection:
                yield connection
        finally:
            engine.dispose()

    def record_version(self, kind: str, digest: str, version: str) -> None:
        """Point every record of this blob at ``version``, behind snap's back."""
        statements = (
            [("snapshots", "raw_version_id", "raw_hash")]
            if kind == "raw"
            else [("extractions", "code_version_id", "code_hash")]
            if kind == "code"
            else [
                ("snapshots", "text_version_id", "text_hash"),
                ("extractions", "text_version_id", "text_hash"),
            ]
        )
        with self.sql() as connection:
            for table, column, digest_column in statements:
                connection.execute(
                    sa.text(f"UPDATE {table} SET {column} = :v WHERE {digest_column} = :d"),  # noqa: S608 (fixed names)
                    {"v": version, "d": digest},
                )

    def snap(self, *args: str, process: bool = False) -> subprocess.CompletedProcess[str]:
        """The CLI with this backend's environment: in this process (the same click command,
        tests/snap_cli.py), or with ``process`` in a child process as a user's shell runs it."""
        if process or self.processes:
            return run_snap_process(args, self.env)
        return run_snap(args, self.env)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with throwaway_postgres() as url:
        Database(url, auto_migrate=True).dispose()
        yield url


@pytest.fixture(scope="session")
def s3_env(s3_endpoint: str) -> dict[str, str]:  # noqa: F811
    """boto3's standard configuration, pointed at the test S3 on loopback."""
    return {
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


@pytest.fixture(scope="session")
def s3_bucket(s3_endpoint: str) -> str:  # noqa: F811
    """One Object-Locked bucket per run; each test gets a prefix of its own inside it."""
    return new_s3_store(s3_endpoint).bucket


@pytest.fixture(params=["embedded", "production"])
def backend(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Backend]:
    """The embedded home starts with a migrated empty database (a copy of the session's
    template). The production pair uses the session's database: inside one transaction rolled
    back when the test ends (every Database the test opens in this process joins it, each
    session a savepoint), or, for tests marked ``committed`` or ``real_process`` (another
    process must see the data), committed, with the tables emptied before and after."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SNAP_")}
    env |= {"SNAP_HOME": str(tmp_path / "home"), "SNAP_ALLOW_PRIVATE": "1"}
    processes = request.node.get_closest_marker("real_process") is not None
    if request.param == "embedded":
        ready_home(tmp_path / "home", request.getfixturevalue("sqlite_template"))
        yield Backend(request.param, env, processes)
        return
    url = request.getfixturevalue("postgres_url")
    bucket = request.getfixturevalue("s3_bucket")
    s3_env = request.getfixturevalue("s3_env")
    for key, value in s3_env.items():
        monkeypatch.setenv(key, value)  # the in-process workspace's boto3 reads them too
    env |= s3_env | {"SNAP_DATABASE_URL": url, "SNAP_STORE": f"s3://{bucket}/{uuid.uuid4().hex}"}
    if processes or request.node.get_closest_marker("committed") is not None:
        database = Database(url)
        empty_tables(database.engine)
        try:
            yield Backend(request.param, env, processes)
        finally:  # the next test may run in a transaction of its own: leave nothing behind
            empty_tables(database.engine)
            database.dispose()
        return
    leftover_rows(url, empty=True)  # what a test outside this fixture committed is not ours
    with rolled_back(url) as connection:

        def joined(database_url: str, **options: Any) -> Database:
            if database_url != url:
                return Database(database_url, **options)
            return JoinedDatabase(database_url, connection, **options)

        monkeypatch.setattr(records.workspace, "Database", joined)
        yield Backend(request.param, env, processes, connection)
    committed_anyway(url)


def leftover_rows(url: str, *, empty: bool) -> list[str]:
    """The tables that hold rows (emptied when ``empty``)."""
    database = Database(url)
    try:
        with database.engine.connect() as connection:
            leftover = [
                table
                for table in ("snapshots", "citations", "batches", "log_entries")
                if connection.execute(sa.text(f"SELECT EXISTS (SELECT 1 FROM {table})")).scalar()  # noqa: S608 (fixed names)
            ]
        if leftover and empty:
            empty_tables(database.engine)
        return leftover
    finally:
        database.dispose()


def committed_anyway(url: str) -> None:
    """After a test in a rolled-back transaction the tables are empty, unless something
    committed behind it (a child process, a connection of its own): then they are emptied and
    the test fails, so that it gets its ``committed`` marker instead of leaking rows into the
    tests after it. The tables were emptied before the test began (a module whose fixtures
    commit without this one, such as a served app's, may run first), so what is left is the
    test's own."""
    leftover = leftover_rows(url, empty=True)
    if leftover:
        pytest.fail(f"rows were committed in {leftover}: mark the test committed")


@pytest.fixture
def workspace(backend: Backend) -> Iterator[Workspace]:
    opened = backend.workspace()
    yield opened
    opened.close()


@pytest.fixture
def example_page() -> Path:
    return EXAMPLES / "cdn-caching.html"
