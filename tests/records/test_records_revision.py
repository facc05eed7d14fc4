"""The cheap schema check on every start agrees with Alembic, and cannot drift from it."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from records.db import HEAD_REVISION, Database, alembic_config, read_revision
from records.workspace import Workspace
from snap.errors import DatabaseError


def test_head_revision_constant_is_alembics_only_head() -> None:
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    assert heads == [HEAD_REVISION], "moved the migrations? update records.db.HEAD_REVISION"


def alembics_view(database: Database) -> str | None:
    with database.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def test_revision_read_agrees_with_alembic_both_ways(workspace: Workspace) -> None:
    database = workspace.db
    assert read_revision(database.engine) == alembics_view(database) == HEAD_REVISION
    database.downgrade("base")
    assert read_revision(database.engine) is None
    assert alembics_view(database) is None
    database.upgrade()
    assert read_revision(database.engine) == alembics_view(database) == HEAD_REVISION


def test_an_empty_sqlite_file_reads_as_no_revision(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/empty.db"
    assert Database.revision_of(url) is None
    database = Database(url)  # SQLite migrates itself on first use
    try:
        assert database.current_revision() == HEAD_REVISION
    finally:
        database.dispose()


def migrated_then(path: Path, statement: str) -> str:
    """A SQLite database at the latest schema, then changed by ``statement`` behind snap."""
    url = f"sqlite:///{path}"
    Database(url).dispose()
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(sa.text(statement))
    engine.dispose()
    return url


def test_several_recorded_revisions_are_one_clear_error(tmp_path: Path) -> None:
    """Alembic refuses a version table with two rows; so does the cheap check."""
    url = migrated_then(tmp_path / "branched.db", "INSERT INTO alembic_version VALUES ('0002')")
    with pytest.raises(DatabaseError, match=rf"several schema revisions \(0002, {HEAD_REVISION}\)"):
        Database(url)


def test_a_revision_this_snap_does_not_know_is_one_clear_error(tmp_path: Path) -> None:
    """A database a newer snap migrated: named as such, never Alembic's "Can't locate revision"
    (an internal error, exit 70); the database is left as it was."""
    url = migrated_then(
        tmp_path / "newer.db", "UPDATE alembic_version SET version_num = 'later_0099'"
    )
    with pytest.raises(DatabaseError, match="at schema revision later_0099, which this snap does"):
        Database(url)
    assert Database.revision_of(url) == "later_0099"
