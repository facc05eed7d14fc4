"""The schema: migrations match the models, run both ways, and the database itself refuses
malformed hashes and changes to the audit trail."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.exc import DBAPIError

from records.db import Database, alembic_config
from records.models import Citation, Snapshot, Verification
from records.workspace import Workspace
from snap.errors import DatabaseError

GOOD = "sha256:" + "ab" * 32


def test_migrations_match_models_and_run_both_ways(workspace: Workspace) -> None:
    database = workspace.db
    with database.engine.begin() as connection:
        command.check(alembic_config(connection))  # raises if autogenerate finds a difference
    database.downgrade("base")
    assert database.current_revision() is None
    assert "snapshots" not in sa.inspect(database.engine).get_table_names()
    database.upgrade()
    assert database.current_revision() == database.head_revision()
    assert {"snapshots", "captures", "citations", "verifications"} <= set(
        sa.inspect(database.engine).get_table_names()
    )


def snapshot_row(snapshot_id: str) -> Snapshot:
    return Snapshot(
        id=snapshot_id,
        raw_hash=snapshot_id,
        raw_size=1,
        content_type="text/plain",
        extractor="x",
        normalizer="y",
        store_location="file:///tmp",
        pages=[],
        flags=[],
    )


@pytest.mark.parametrize(
    "bad",
    ["sha256:" + "AB" * 32, "sha256:" + "ab" * 31, "md5:" + "ab" * 32, "sha256:" + "zz" * 32],
)
def test_database_refuses_malformed_hashes(workspace: Workspace, bad: str) -> None:
    with pytest.raises(DatabaseError, match=r"(?i)check constraint"), workspace.db.session() as s:
        s.add(snapshot_row(bad))


@pytest.mark.committed  # its triggers fire at COMMIT
def test_verifications_are_append_only_in_the_database(workspace: Workspace) -> None:
    with workspace.db.session() as session:
        session.add(snapshot_row(GOOD))
        session.flush()
        session.add(Citation(id="c-1", fingerprint=GOOD, snapshot_id=GOOD, exact="q"))
        session.flush()
        session.add(
            Verification(
                citation_id="c-1",
                snapshot_id=GOOD,
                status="quote_found",
                verifier="v",
                normalizer="n",
                checked_at=datetime.now(UTC),
            )
        )
    rewrites = ["UPDATE verifications SET status = 'not_found'", "DELETE FROM verifications"]
    if workspace.db.dialect == "sqlite":  # REPLACE deletes without firing DELETE triggers
        rewrites.append(
            "INSERT OR REPLACE INTO verifications (id, citation_id, status, matches, details,"
            " verifier, normalizer, checked_at) SELECT id, citation_id, 'not_found', 0, '{}',"
            " verifier, normalizer, checked_at FROM verifications"
        )
    else:
        rewrites.append("TRUNCATE verifications")
    for statement in rewrites:
        with pytest.raises(DBAPIError, match="append-only"), workspace.db.engine.begin() as c:
            c.execute(sa.text(statement))
    with workspace.db.session() as session:
        assert session.scalars(sa.select(Verification.status)).all() == ["quote_found"]


def test_postgres_needs_an_explicit_upgrade(postgres_url: str) -> None:
    database = Database(postgres_url)  # already migrated by the fixture: opens fine
    database.downgrade("base")
    try:
        with pytest.raises(Exception, match="snap db upgrade"):
            Database(postgres_url)
    finally:
        database.upgrade()
        database.dispose()
