"""Opening the database: engine, sessions, and Alembic migrations.

SQLite (the embedded default) is migrated automatically on first use; any other database must
be migrated explicitly with ``snap db upgrade``, because production schemas change only when an
operator says so.

Every command opens the database, so opening is kept cheap: the schema check reads the
``alembic_version`` table directly and compares it with ``HEAD_REVISION``, and Alembic (which
loads every dialect's DDL support and Mako) is imported only to migrate.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from records.errors import DatabaseError
from snapshotter.errors import ConfigError

if TYPE_CHECKING:
    from alembic.config import Config


# The migrations sit above the models they migrate (they import records.models), so they are
# found here as the folder of scripts Alembic reads, never imported: find_spec of a top-level
# package locates it without running it.
def _migrations_dir() -> Path:
    spec = importlib.util.find_spec("migrations")
    if spec is None or spec.origin is None:
        raise ImportError("snap's migrations package is not installed beside records")
    return Path(spec.origin).parent


MIGRATIONS_DIR = _migrations_dir()
MIGRATION_LOCK = 0x736E6170  # "snap": the PostgreSQL advisory lock held while migrating
# The newest migration in migrations/versions; a test checks it against Alembic's own head, so
# a new migration cannot be added without moving this too.
HEAD_REVISION = "codespans_0008"


def alembic_config(connection: sa.Connection | None = None, url: str | None = None) -> Config:
    """An Alembic config pointing at the packaged migrations (no alembic.ini needed)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


WRITE = "snap_write"  # execution option: this transaction writes, so take the lock up front


def _enable_sqlite_safety(engine: Engine) -> None:
    """Foreign keys on, WAL so readers never block the writer (nor it them), a wait instead of
    'database is locked', and real transactions: pysqlite by default commits before DDL and
    begins lazily, so a migration could be half-applied or run twice by two processes.

    Reads begin DEFERRED: under WAL they take no lock at all. Writes begin ``BEGIN IMMEDIATE``:
    they take the write lock up front and wait for it (busy_timeout), instead of starting as a
    reader and failing at once with SQLITE_BUSY when they try to upgrade."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # snap issues BEGIN itself, below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: sa.Connection) -> None:
        writes = connection.get_execution_options().get(WRITE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")


def create_db_engine(url: str, *, must_exist: bool = False) -> Engine:
    """The engine; a SQLite file (and its folder) is created unless ``must_exist``, so that a
    read-only command pointed at a mistyped path says so instead of reporting an empty record."""
    try:
        engine = sa.create_engine(url)
    except (ArgumentError, ImportError) as exc:
        raise ConfigError(f"the database URL {url!r} is not usable: {exc}") from None
    if engine.dialect.name == "sqlite":
        database = engine.url.database
        if must_exist and database and database != ":memory:" and not Path(database).exists():
            raise DatabaseError(
                f"no snap database at {database}: nothing has been recorded there"
                " (check SNAP_HOME or SNAP_DATABASE_URL)"
            )
        if database and database != ":memory:":
            try:
                Path(database).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise DatabaseError(
                    f"cannot create the folder for the database {database}: {exc.strerror}"
                ) from None
        _enable_sqlite_safety(engine)
    return engine


def revision_in(connection: sa.Connection) -> str | None:
    """The revision recorded in Alembic's version table, read the way Alembic reads it (None:
    no table or no row, i.e. an empty database), without importing Alembic.  The table name is
    Alembic's default, which migrations/env.py keeps."""
    if not sa.inspect(connection).has_table("alembic_version"):
        return None
    rows = connection.execute(sa.text("SELECT version_num FROM alembic_version")).all()
    if len(rows) > 1:
        revisions = ", ".join(sorted(str(row[0]) for row in rows))
        raise DatabaseError(f"the database has several schema revisions ({revisions})")
    return str(rows[0][0]) if rows else None


def read_revision(engine: Engine) -> str | None:
    try:
        with engine.connect() as connection:
            return revision_in(connection)
    except DBAPIError as exc:  # unreachable, refused, or unreadable: one line, exit code 3
        safe = engine.url.render_as_string(hide_password=True)
        raise DatabaseError(f"cannot open the database at {safe}: {exc.orig}") from None


def is_known_revision(revision: str) -> bool:
    """Whether the packaged migrations contain ``revision``: a database stamped by a newer or
    different snap cannot be upgraded or downgraded by this one, and Alembic's own error for
    it ("Can't locate revision") says nothing a user can act on."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    try:
        return ScriptDirectory.from_config(alembic_config()).get_revision(revision) is not None
    except CommandError:
        return False


class Database:
    """An engine plus a session factory, checked to be at the latest migration."""

    def __init__(
        self, url: str, *, auto_migrate: bool | None = None, must_exist: bool = False
    ) -> None:
        self.url = url
        self.engine = create_db_engine(url, must_exist=must_exist)
        self._writer = self.engine.execution_options(**{WRITE: True})
        self._reads = sessionmaker(self.engine, expire_on_commit=False)
        self._writes = sessionmaker(self._writer, expire_on_commit=False)
        # SQLite has one writer at a time, and a writer that finds the lock taken sleeps in
        # growing steps (busy_timeout): under many threads of one process (snap serve) some
        # wait seconds while others get in. Threads of this process take turns here instead and
        # start the moment the previous write ends; other processes still meet busy_timeout.
        self._write_turn: AbstractContextManager[object] = (
            threading.RLock() if self.engine.dialect.name == "sqlite" else nullcontext()
        )
        migrate = self.engine.dialect.name == "sqlite" if auto_migrate is None else auto_migrate
        try:
            self._ensure_current(migrate)
        except BaseException:
            self.engine.dispose()  # no pooled connection may outlive a refused open
            raise

    @staticmethod
    def revision_of(url: str) -> str | None:
        """The revision a database is at, without migrating it (None: empty or not yet created)."""
        engine = create_db_engine(url)
        try:
            return read_revision(engine)
        finally:
            engine.dispose()

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def _ensure_current(self, migrate: bool) -> None:
        current = self.current_revision()
        if current == self.head_revision():
            return
        if current is not None and not is_known_revision(current):
            raise DatabaseError(
                f"the database at {self.safe_url} is at schema revision {current}, which this"
                " snap does not know (a newer or different snap wrote it); use that snap, or"
                " point SNAP_HOME or SNAP_DATABASE_URL at another database"
            )
        if not migrate:
            raise DatabaseError(
                f"the database at {self.safe_url} is not at the latest schema; run: snap db upgrade"
            )
        self.upgrade()

    @property
    def safe_url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    def head_revision(self) -> str | None:
        return HEAD_REVISION

    def current_revision(self) -> str | None:
        return read_revision(self.engine)

    def upgrade(self, revision: str = "head") -> None:
        """Migrate in one transaction, under a lock, re-checking inside it: two processes that
        both find the database behind leave it migrated once, not failed."""
        from alembic import command

        with self._writer.begin() as connection:
            if self.dialect == "postgresql":
                connection.execute(
                    sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK}
                )
            current = revision_in(connection)
            if revision == "head" and current == self.head_revision():
                return
            command.upgrade(alembic_config(connection), revision)

    def downgrade(self, revision: str) -> None:
        from alembic import command

        with self._writer.begin() as connection:
            command.downgrade(alembic_config(connection), revision)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A short write transaction: committed when the block ends, rolled back if it raises.

        Never hold one across network or blob I/O: read what is needed (``reading``), close,
        do the slow work, then write. A database failure inside it (a lost connection, a lock
        held too long, a constraint the input broke) becomes one DatabaseError line."""
        with self._write_turn, self._transaction(self._writes) as session:
            yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A read-only transaction (SQLite: deferred, so it never waits for or blocks a writer).
        Nothing may be written in it: objects read stay usable after it closes."""
        with self._transaction(self._reads) as session:
            yield session

    @contextmanager
    def _transaction(self, factory: sessionmaker[Session]) -> Iterator[Session]:
        try:
            with factory.begin() as session:
                yield session
        except DBAPIError as exc:
            raise DatabaseError(f"the database at {self.safe_url} refused: {exc.orig}") from None

    def dispose(self) -> None:
        self.engine.dispose()


@dataclass(frozen=True)
class Upgrade:
    """``snap db upgrade``: the database (password hidden) and its revision before and after
    (``before`` None: it was empty). Its JSON: ``records.wire.upgrade_json``."""

    database: str
    before: str | None
    revision: str | None

    @property
    def upgraded(self) -> bool:
        return self.before != self.revision


def upgrade_database(url: str) -> Upgrade:
    """Apply every pending migration to the database at ``url``."""
    before = Database.revision_of(url)
    database = Database(url, auto_migrate=True)
    try:
        return Upgrade(database.safe_url, before, database.current_revision())
    finally:
        database.dispose()
