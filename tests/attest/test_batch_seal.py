"""Sealing a batch capture: every manifest stored with the batch's blobs and signed, one log
append per batch, and with ``SNAP_TSA_PER=batch`` one TSA request per batch (its checkpoint);
``snap log verify`` and ``snap audit`` accept all of it, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import event

from records.attest.log_checks import verify_log
from records.capture import capture_sources
from records.db import Database
from records.workspace import Workspace
from snap.config import Settings
from tests.attest.conftest import attesting_env
from tests.attest.tsa import LocalTsa
from tests.db_support import throwaway_postgres
from tests.http_fixtures import LoopbackServer
from tests.snap_cli import run_snap

PAGES = 5
BATCH = 2


@pytest.fixture(params=["sqlite", "postgresql"])
def database_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    if request.param == "sqlite":
        yield {}
        return
    with throwaway_postgres() as url:
        Database(url, auto_migrate=True).dispose()
        yield {"SNAP_DATABASE_URL": url}


@pytest.fixture
def pages() -> Iterator[list[str]]:
    with LoopbackServer() as server:
        for n in range(PAGES):
            body = f"<html><body><main><p>Batch page {n} of the origin.</p></main></body></html>"
            server.route(f"/p{n}", body=body.encode())
        yield [server.url(f"/p{n}") for n in range(PAGES)]


def signed_env(tmp_path: Path, tsa: LocalTsa, database_env: dict[str, str]) -> dict[str, str]:
    from records.attest.signing import KeyType, write_new_key

    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    return attesting_env(home, tsa) | database_env | {"SNAP_ALLOW_PRIVATE": "1"}


def log_inserts(workspace: Workspace) -> list[int]:
    """How many log entries each INSERT INTO log_entries carried."""
    counts: list[int] = []

    @event.listens_for(workspace.db.engine, "before_cursor_execute")
    def count(_conn, _cursor, statement, parameters, _context, executemany) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("INSERT INTO LOG_ENTRIES"):
            counts.append(len(parameters) if executemany else 1)

    return counts


def test_per_batch_stamping_makes_one_tsa_request_per_batch_and_verifies(
    tmp_path: Path, tsa: LocalTsa, database_env: dict[str, str], pages: list[str]
) -> None:
    env = signed_env(tmp_path, tsa, database_env) | {"SNAP_TSA_PER": "batch"}
    workspace = Workspace.open(Settings.from_env(env))
    before = len(tsa.requests)
    try:
        inserts = log_inserts(workspace)
        outcomes = list(capture_sources(workspace, pages, batch_size=BATCH))
        report = verify_log(workspace)
    finally:
        workspace.close()
    batches = -(-PAGES // BATCH)
    assert len(tsa.requests) - before == batches  # one checkpoint stamp per batch
    assert len(inserts) == batches  # one log append per batch, every row in it
    assert sum(inserts) == 2 * PAGES  # an extraction and a capture per page
    assert report.ok, report.problems
    assert report.checkpoints == batches
    for outcome in outcomes:
        assert outcome.record is not None
        provenance = outcome.record.provenance
        assert provenance["manifest"]["signature"]["state"] == "signed"
        assert provenance["timestamp"]["state"] == "batched"
    result = run_snap(["log", "verify", "--json"], env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ok"] is True
    audit = run_snap(["audit", "--url", pages[0]], env)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_per_capture_stamping_stamps_every_manifest_of_a_batch(
    tmp_path: Path, tsa: LocalTsa, database_env: dict[str, str], pages: list[str]
) -> None:
    env = signed_env(tmp_path, tsa, database_env)
    listing = tmp_path / "targets.txt"
    listing.write_text("\n".join(pages))
    before = len(tsa.requests)
    result = run_snap(["fetch", "--from", str(listing), "--batch-size", str(BATCH)], env)
    assert result.returncode == 0, result.stderr
    assert len(tsa.requests) - before == PAGES + 1  # each manifest, then the run's checkpoint
    verified = run_snap(["log", "verify"], env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    for url in pages:
        audit = run_snap(["audit", "--url", url, "--json"], env)
        assert audit.returncode == 0, audit.stdout
        seals = [capture["seal"] for capture in json.loads(audit.stdout)["captures"]]
        assert seals
        assert all(seal["intact"] for seal in seals)
