"""snap checks what it signs and hands out: ``snap attest`` and ``snap export`` check each
inclusion proof (the row as it is now, the path to the checkpoint's signed root) and a record
edited behind snap's back is named (attest exits 1, export refuses and writes nothing); and no
checkpoint is signed over a log reordered after the newest one (the command's records are kept,
it exits 1). The auditor's reproductions, on SQLite with the triggers dropped by hand."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.attest.test_attest_subjects import citation_ids, run, sealed_home
from tests.attest.tsa import LocalTsa

EDITS = {
    "verification": [
        "DROP TRIGGER IF EXISTS verifications_no_update",
        "UPDATE verifications SET matches = 2 WHERE id = 1",
    ],
    "capture": ["UPDATE captures SET fetched_at = '2025-01-01 00:00:00.000000' WHERE id = 1"],
}


def intrude(env: dict[str, str], *statements: str) -> None:
    engine = sa.create_engine(f"sqlite:///{Path(env['SNAP_HOME']) / 'snap.db'}")
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(sa.text(statement))
    engine.dispose()


def count(env: dict[str, str], table: str) -> int:
    engine = sa.create_engine(f"sqlite:///{Path(env['SNAP_HOME']) / 'snap.db'}")
    try:
        with engine.connect() as connection:
            return int(connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())  # noqa: S608
    finally:
        engine.dispose()


@pytest.mark.parametrize("edited", sorted(EDITS))
def test_a_record_edited_after_it_was_logged_is_named_and_never_handed_out(
    tmp_path: Path, tsa: LocalTsa, edited: str
) -> None:
    env, _snapshot_id = sealed_home(tmp_path, tsa)
    citation = citation_ids(env)[0]
    assert json.loads(run(env, "attest", citation, "--json").output)["ok"]
    intrude(env, *EDITS[edited])
    named = f"{edited} 1 was changed after it was logged"
    attested = run(env, "attest", citation, "--json")
    assert attested.exit_code == 1, attested.output
    document = json.loads(attested.output)
    assert not document["ok"]
    assert any(problem.startswith(named) for problem in document["problems"]), document
    for fmt in ("warc", "wacz", "html"):
        target = tmp_path / f"evidence.{fmt}"
        done = run(env, "export", "--format", fmt, "-o", str(target), "--citation", citation)
        assert done.exit_code == 1, (fmt, done.output)
        assert named in done.output
        assert "nothing was written" in done.output
        assert len(done.output.strip().splitlines()) == 1, done.output
        assert not target.exists()
        assert not list(tmp_path.glob(f".evidence.{fmt}.*"))


def test_no_checkpoint_is_signed_over_a_reordered_log_and_nothing_over_it_is_handed_out(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    env, _snapshot_id = sealed_home(tmp_path, tsa)
    checkpoints, checks = count(env, "log_checkpoints"), count(env, "verifications")
    intrude(  # positions 1 and 2 (the capture's extraction and the first check) trade places
        env,
        "DROP TRIGGER IF EXISTS log_entries_no_update",
        "UPDATE log_entries SET position = position + 1000 WHERE position IN (1, 2)",
        "UPDATE log_entries SET position = 2 WHERE position = 1001",
        "UPDATE log_entries SET position = 1 WHERE position = 1002",
    )
    again = run(env, "verify", str(tmp_path / "answer.json"))
    assert again.exit_code == 1, again.output
    *report, refusal = again.output.strip().splitlines()  # what it recorded, then why not signed
    assert "2 of 2 quotes found (100% of claims)" in report
    assert refusal.startswith(f"snap: error: the log no longer extends checkpoint {checkpoints}")
    as_json = run(env, "verify", str(tmp_path / "answer.json"), "--json")
    assert as_json.exit_code == 1
    assert "no longer extends" in json.loads(as_json.stdout)["error"]["message"]
    another = tmp_path / "another.html"
    another.write_text(
        "<html><body><main><p>Another page, captured after.</p></main></body></html>"
    )
    for args in (["fetch", str(another)], ["reverify"]):
        shown = run(env, *args)
        assert shown.exit_code == 1, (args, shown.output)
        *report, refusal = shown.output.strip().splitlines()
        assert report, (args, shown.output)
        assert refusal.startswith("snap: error: the log no longer extends checkpoint"), args
    assert count(env, "log_checkpoints") == checkpoints  # nothing signed
    assert count(env, "verifications") > checks + 4  # what verify and reverify recorded is kept
    refused = run(env, "log", "checkpoint")
    assert refused.exit_code == 1
    assert "no new checkpoint was signed" in refused.output
    attested = run(env, "attest", "answer-1")
    assert attested.exit_code == 1
    assert "does not lead to the root checkpoint" in attested.output
    target = tmp_path / "reorder.wacz"
    citation = citation_ids(env)[0]
    done = run(env, "export", "--format", "wacz", "-o", str(target), "--citation", citation)
    assert done.exit_code == 1
    assert "does not lead to the root checkpoint" in done.output
    assert "nothing was written" in done.output
    assert not target.exists()


def test_no_checkpoint_is_signed_after_one_whose_signature_does_not_verify(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    """The newest checkpoint's root is trusted only under its signature: one replaced behind
    snap's back stops the next checkpoint, even of a log of the same size."""
    env, _snapshot_id = sealed_home(tmp_path, tsa)
    checkpoints = count(env, "log_checkpoints")
    engine = sa.create_engine(f"sqlite:///{Path(env['SNAP_HOME']) / 'snap.db'}")
    with engine.begin() as connection:
        connection.execute(sa.text("DROP TRIGGER IF EXISTS log_checkpoints_no_update"))
        newest = connection.execute(
            sa.text("SELECT id, signature FROM log_checkpoints ORDER BY id DESC LIMIT 1")
        ).one()
        signature = json.loads(newest[1])
        signature["value"] = base64.b64encode(b"\x30" * 70).decode("ascii")
        connection.execute(
            sa.text("UPDATE log_checkpoints SET signature = :s WHERE id = :id"),
            {"s": json.dumps(signature), "id": newest[0]},
        )
    engine.dispose()
    refused = run(env, "log", "checkpoint", "--json")
    assert refused.exit_code == 1, refused.output
    assert refused.output.startswith(
        f"snap: error: checkpoint {newest[0]}: its signature does not verify"
    )
    assert count(env, "log_checkpoints") == checkpoints
