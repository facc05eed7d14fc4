"""``snap log verify`` finds any change to the sequence of records after a checkpoint (edit,
delete, insert, reorder; of the rows, or of the log's own entries), on SQLite and
PostgreSQL, with the append-only triggers dropped by hand first."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.attest import log
from records.attest.checkpoints import checkpoint_if_grown, make_checkpoint
from records.attest.errors import AttestationFailure
from records.attest.log_checks import LogProofs, proof_problems, verify_log
from records.models import Capture
from records.workspace import Workspace
from snap.cli import cli
from snap.config import Settings
from tests.db_support import throwaway_postgres

RECORDS = 6
TRIGGERS = {
    "sqlite": [
        "DROP TRIGGER IF EXISTS log_entries_no_update",
        "DROP TRIGGER IF EXISTS log_entries_no_delete",
        "DROP TRIGGER IF EXISTS log_checkpoints_no_update",
        "DROP TRIGGER IF EXISTS log_checkpoints_no_delete",
    ],
    "postgresql": [
        "DROP TRIGGER IF EXISTS log_entries_append_only ON log_entries",
        "DROP TRIGGER IF EXISTS log_entries_no_truncate ON log_entries",
        "DROP TRIGGER IF EXISTS log_checkpoints_append_only ON log_checkpoints",
        "DROP TRIGGER IF EXISTS log_checkpoints_no_truncate ON log_checkpoints",
    ],
}


@pytest.fixture(params=["sqlite", "postgresql"], scope="module")
def workspace(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    home = tmp_path_factory.mktemp("log")
    env = {"SNAP_HOME": str(home)}
    if request.param == "sqlite":
        opened = Workspace.open(Settings.from_env(env))
        yield opened
        opened.close()
        return
    with throwaway_postgres() as url:
        from records.db import Database

        Database(url, auto_migrate=True).dispose()
        opened = Workspace.open(Settings.from_env(env | {"SNAP_DATABASE_URL": url}))
        yield opened
        opened.close()


def execute(workspace: Workspace, *statements: str, **params: object) -> None:
    with workspace.db.session() as session:
        for statement in statements:
            session.execute(sa.text(statement), params)


def fresh_log(workspace: Workspace) -> list[int]:
    """RECORDS captures, logged and checkpointed; the triggers dropped, as an intruder would."""
    with workspace.db.session() as session:
        name = session.get_bind().dialect.name
    execute(workspace, *TRIGGERS[name])
    execute(
        workspace, "DELETE FROM log_checkpoints", "DELETE FROM log_entries", "DELETE FROM captures"
    )
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ids = []
    with workspace.db.session() as session:
        for i in range(RECORDS):
            capture = Capture(
                url=f"https://example.com/{i}",
                fetched_at=start + timedelta(seconds=i),
                outcome="failed",
                error="refused",
                provenance={},
            )
            session.add(capture)
            session.flush()
            log.append(session, [capture])
            ids.append(capture.id)
    make_checkpoint(workspace)
    return ids


OPERATIONS = [
    "edit",
    "delete",
    "insert",
    "reorder_rows",
    "edit_row_and_leaf",
    "reorder_log",
    "delete_entry",
    "forge_checkpoint",
]


@pytest.mark.parametrize("operation", OPERATIONS)
@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.integers(0, RECORDS - 1), other=st.integers(1, RECORDS - 1))
def test_any_change_after_a_checkpoint_is_found(
    workspace: Workspace, operation: str, which: int, other: int
) -> None:
    ids = fresh_log(workspace)
    assert verify_log(workspace).ok
    second = (which + other) % RECORDS
    target, partner = ids[which], ids[second]
    if operation == "edit":
        execute(workspace, "UPDATE captures SET error = 'edited' WHERE id = :id", id=target)
    elif operation == "delete":
        execute(workspace, "DELETE FROM captures WHERE id = :id", id=target)
    elif operation == "insert":
        execute(
            workspace,
            "INSERT INTO captures (url, fetched_at, outcome, error, provenance)"
            " VALUES ('https://example.com/new', '2026-02-01 00:00:00', 'failed', 'x', '{}')",
        )
    elif operation == "reorder_rows":  # two records swap their contents
        execute(
            workspace,
            "UPDATE captures SET url = CASE WHEN id = :a THEN :ub ELSE :ua END"
            " WHERE id IN (:a, :b)",
            a=target,
            b=partner,
            ua=f"https://example.com/{which}",
            ub=f"https://example.com/{second}",
        )
    elif operation == "edit_row_and_leaf":  # the intruder rewrites the log entry too
        execute(workspace, "UPDATE captures SET error = 'edited' WHERE id = :id", id=target)
        with workspace.db.session() as session:
            row = session.get(Capture, target)
            assert row is not None
            leaf = log.hex_digest(log.merkle.leaf_hash(log.leaf_bytes(row)))
        execute(
            workspace,
            "UPDATE log_entries SET leaf_hash = :leaf WHERE record_id = :id",
            leaf=leaf,
            id=str(target),
        )
    elif operation == "reorder_log":  # swap two entries' places in the log
        execute(
            workspace,
            "UPDATE log_entries SET position = position + 1000 WHERE position IN (:a, :b)",
            a=which,
            b=second,
        )
        execute(
            workspace,
            "UPDATE log_entries SET position = :b WHERE position = :a + 1000",
            a=which,
            b=second,
        )
        execute(
            workspace,
            "UPDATE log_entries SET position = :a WHERE position = :b + 1000",
            a=which,
            b=second,
        )
    elif operation == "forge_checkpoint":  # a row edited, and the checkpoint "updated" to fit
        execute(workspace, "UPDATE captures SET error = 'edited' WHERE id = :id", id=target)
        with workspace.db.session() as session:
            row = session.get(Capture, target)
            assert row is not None
            leaf = log.hex_digest(log.merkle.leaf_hash(log.leaf_bytes(row)))
        execute(
            workspace,
            "UPDATE log_entries SET leaf_hash = :leaf WHERE record_id = :id",
            leaf=leaf,
            id=str(target),
        )
        with workspace.db.session() as session:
            _size, root = log.tree_state_of(log.leaf_hashes(session))
        execute(workspace, "UPDATE log_checkpoints SET root_hash = :root", root=root)
    else:  # delete_entry
        execute(workspace, "DELETE FROM log_entries WHERE position = :p", p=which)
    report = verify_log(workspace)
    assert not report.ok, operation
    positions = {problem.position for problem in report.problems}
    if operation in ("edit", "delete"):
        assert which in positions
    if operation == "insert":
        assert any("inserted without a log entry" in p.problem for p in report.problems)


def test_checkpoints_are_consistent_and_cli_reports(workspace: Workspace) -> None:
    fresh_log(workspace)
    append_capture(workspace, "late")
    second = make_checkpoint(workspace)
    assert second.created
    assert second.tree_size == RECORDS + 1
    assert not make_checkpoint(workspace).created
    report = verify_log(workspace)
    assert report.ok
    assert report.checkpoints == 2


def test_cli_log_verify_exit_codes(tmp_path: Path) -> None:
    env = {"SNAP_HOME": str(tmp_path)}
    page = tmp_path / "page.html"
    page.write_text("<main><p>hello there</p></main>")
    runner = CliRunner()
    assert runner.invoke(cli, ["fetch", str(page)], env=env).exit_code == 0
    result = runner.invoke(cli, ["log", "checkpoint", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert runner.invoke(cli, ["log", "verify"], env=env).exit_code == 0
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'snap.db'}")
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE captures SET url = 'file:///elsewhere'"))
    engine.dispose()
    result = runner.invoke(cli, ["log", "verify"], env=env)
    assert result.exit_code == 1
    assert "position 1: capture 1 was changed" in result.output


def test_consistency_proofs_between_checkpoints_check_with_the_standard_library(
    tmp_path: Path,
) -> None:
    """``snap log consistency`` hands the other side RFC 9162's proof between two checkpoints
    they hold; the standalone check (hashlib only, ``python -I -S``) accepts every pair of a
    growing log, and refuses a changed root or proof node; a log rewritten behind snap's back
    gives no proof that holds."""
    import json
    import subprocess
    import sys

    from records.attest.signing import KeyType, write_new_key

    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ED25519)
    env = {"SNAP_HOME": str(home)}
    runner = CliRunner()
    for n in range(4):  # each fetch ends with a checkpoint: sizes 2, 4, 6, 8
        page = tmp_path / f"page-{n}.html"
        page.write_text(f"<html><body><main><p>page number {n}</p></main></body></html>")
        assert runner.invoke(cli, ["fetch", str(page)], env=env).exit_code == 0

    def check(path: Path, old: int, new: int) -> subprocess.CompletedProcess[str]:
        """The standalone check of the proof between the two checkpoint files beside it."""
        folder = path.parent
        checkpoints = [str(folder / f"checkpoint-{n}.json") for n in (old, new)]
        script = str(folder / "check_consistency.py")
        command = [sys.executable, "-I", "-S", script, str(path), *checkpoints]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    for old in range(1, 5):
        for new in range(old, 5):
            out = tmp_path / f"proof-{old}-{new}"
            done = runner.invoke(
                cli,
                ["log", "consistency", str(old), str(new), "--json", "--out", str(out)],
                env=env,
            )
            assert done.exit_code == 0, done.output
            proof = json.loads(done.output)
            assert proof["holds"]
            assert (proof["from"]["treeSize"], proof["to"]["treeSize"]) == (2 * old, 2 * new)
            path = out / f"consistency-{old}-{new}.json"
            checked = check(path, old, new)
            assert checked.returncode == 0, checked.stderr
            if old == new:
                continue
            forged = dict(proof, proof=["0" * 64, *proof["proof"][1:]])
            path.write_text(json.dumps(forged))
            assert check(path, old, new).returncode != 0
            path.write_text(json.dumps(proof))
            older = json.loads(proof["from"]["document"])
            older["rootHash"] = "sha256:" + "1" * 64
            (out / f"checkpoint-{old}.json").write_text(json.dumps(older))
            assert check(path, old, new).returncode != 0
    text = runner.invoke(cli, ["log", "consistency", "2"], env=env)
    assert text.exit_code == 0
    assert "checkpoint 4 (size 8) extends checkpoint 2 (size 4)" in text.output
    assert runner.invoke(cli, ["log", "consistency", "3", "1"], env=env).exit_code == 2
    unknown = runner.invoke(cli, ["log", "consistency", "9"], env=env)
    assert unknown.exit_code == 1
    assert "no log checkpoint 9 is recorded (the newest is 4)" in unknown.output

    engine = sa.create_engine(f"sqlite:///{home / 'snap.db'}")
    with engine.begin() as connection:  # the intruder rewrites an entry added between the two
        for statement in TRIGGERS["sqlite"]:
            connection.execute(sa.text(statement))
        connection.execute(
            sa.text("UPDATE log_entries SET leaf_hash = :h WHERE position = 5"),
            {"h": "sha256:" + "2" * 64},
        )
    engine.dispose()
    broken = runner.invoke(cli, ["log", "consistency", "2", "3"], env=env)
    assert broken.exit_code == 1
    assert "does NOT extend" in broken.output


def append_capture(workspace: Workspace, name: str) -> int:
    """One more failed capture, logged (not checkpointed)."""
    with workspace.db.session() as session:
        capture = Capture(
            url=f"https://example.com/{name}",
            fetched_at=datetime(2026, 3, 1, tzinfo=UTC),
            outcome="failed",
            error="refused",
            provenance={},
        )
        session.add(capture)
        session.flush()
        log.append(session, [capture])
        return capture.id


def swap_entries(workspace: Workspace, a: int, b: int) -> None:
    """Positions ``a`` and ``b`` of the log trade places (each keeps its record and leaf)."""
    for statement in (
        "UPDATE log_entries SET position = position + 1000 WHERE position IN (:a, :b)",
        "UPDATE log_entries SET position = :b WHERE position = :a + 1000",
        "UPDATE log_entries SET position = :a WHERE position = :b + 1000",
    ):
        execute(workspace, statement, a=a, b=b)


def checkpoint_count(workspace: Workspace) -> int:
    with workspace.db.reading() as session:
        return int(session.scalar(sa.text("SELECT count(*) FROM log_checkpoints")) or 0)


REWRITES = ["reorder_log", "rewrite_leaf", "delete_entry", "truncate", "forge_checkpoint"]


@pytest.mark.parametrize("rewrite", REWRITES)
@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.integers(0, RECORDS - 1), other=st.integers(1, RECORDS - 1))
def test_no_checkpoint_is_signed_over_a_log_that_does_not_extend_the_newest(
    workspace: Workspace, rewrite: str, which: int, other: int
) -> None:
    """Whatever rewrites the checkpointed part of the log (entries moved, a leaf replaced, an
    entry removed, the log cut short, the checkpoint's columns made to fit), the next
    checkpoint is refused in one line naming the checkpoint, and nothing is signed; the record
    appended since is kept."""
    fresh_log(workspace)
    if rewrite == "reorder_log":
        swap_entries(workspace, which, (which + other) % RECORDS)
    elif rewrite == "rewrite_leaf":
        leaf = "sha256:" + "2" * 64
        execute(
            workspace, "UPDATE log_entries SET leaf_hash = :h WHERE position = :p", h=leaf, p=which
        )
    elif rewrite == "delete_entry":
        execute(workspace, "DELETE FROM log_entries WHERE position = :p", p=which)
    elif rewrite == "truncate":  # the log ends up shorter than the checkpoint
        execute(workspace, "DELETE FROM log_entries WHERE position >= :p", p=RECORDS - 2)
    else:  # forge_checkpoint: the columns say another root than the signed document
        execute(workspace, "UPDATE log_checkpoints SET root_hash = :r", r="sha256:" + "3" * 64)
    appended = append_capture(workspace, "late")
    before = checkpoint_count(workspace)
    with pytest.raises(AttestationFailure) as refused:
        make_checkpoint(workspace)
    with workspace.db.reading() as session:
        (newest,) = session.execute(sa.text("SELECT max(id) FROM log_checkpoints")).one()
    assert f"checkpoint {newest}" in refused.value.message
    assert "no new checkpoint was signed" in refused.value.message
    assert "\n" not in refused.value.message
    if rewrite == "delete_entry":  # one entry gone, one appended: the checkpoint's size
        assert checkpoint_if_grown(workspace) is None
    else:
        with pytest.raises(AttestationFailure):
            checkpoint_if_grown(workspace)
    assert checkpoint_count(workspace) == before
    with workspace.db.reading() as session:
        assert session.get(Capture, appended) is not None


def test_a_grown_log_that_extends_the_newest_is_signed(workspace: Workspace) -> None:
    """The check refuses only a rewritten log: one that grew past every size since is signed,
    its root the whole log's."""
    fresh_log(workspace)
    for n in range(RECORDS + 3):  # sizes that are and are not powers of two
        append_capture(workspace, f"grown-{n}")
        made = make_checkpoint(workspace)
        assert made.created
        with workspace.db.reading() as session:
            assert (made.tree_size, made.root_hash) == log.tree_state_of(log.leaf_hashes(session))
    assert verify_log(workspace).ok


def test_rows_changed_after_two_checkpoints_do_not_blame_the_checkpoints(
    workspace: Workspace,
) -> None:
    """Entries moved after checkpoint 2 was signed: log verify says checkpoint 2's root no
    longer holds, not that checkpoint 2 (consistent with 1 when both were signed) does not
    extend checkpoint 1. A checkpoint signed over that rewritten log is the one blamed."""
    fresh_log(workspace)
    append_capture(workspace, "seventh")
    append_capture(workspace, "eighth")
    second = make_checkpoint(workspace)
    swap_entries(workspace, RECORDS, RECORDS + 1)  # past checkpoint 1, inside checkpoint 2
    problems = [p.problem for p in verify_log(workspace).problems]
    assert any(
        f"checkpoint {second.id} (size {RECORDS + 2}): the log's first" in p for p in problems
    )
    assert not any("does not extend" in p for p in problems), problems
    # an older snap (or an intruder with the key) signs over the rewritten log anyway
    with workspace.db.session() as session:
        size, root = log.tree_state_of(log.leaf_hashes(session))
        now = datetime.now(UTC)
        session.connection().execute(
            log.INSERT_CHECKPOINT,
            {
                "tree_size": size,
                "root_hash": root,
                "document": log.checkpoint_document(size, root, now).decode(),
                "signature": {"state": "none", "reason": "test"},
                "timestamp": {"state": "none", "reason": "test"},
                "created_at": now,
            },
        )
        third = session.scalar(sa.text("SELECT max(id) FROM log_checkpoints"))
    problems = [p.problem for p in verify_log(workspace).problems]
    blamed = [p for p in problems if "does not extend" in p]
    assert blamed == [
        f"checkpoint {third} does not extend checkpoint {second.id}: it was signed over a log"
        f" whose first {RECORDS + 2} entries no longer have checkpoint {second.id}'s root"
    ]


def test_inclusion_proofs_that_do_not_check_are_named(workspace: Workspace) -> None:
    """A proof is checked before it is handed out: a row edited after it was logged, or
    entries moved after the checkpoint, each names the record; an untouched log has none."""
    ids = fresh_log(workspace)
    wanted = [("capture", str(record_id)) for record_id in ids]
    assert proof_problems(LogProofs(workspace).of(wanted)) == []
    execute(workspace, "UPDATE captures SET error = 'edited' WHERE id = :id", id=ids[1])
    assert proof_problems(LogProofs(workspace).of(wanted)) == [
        f"capture {ids[1]} was changed after it was logged: its row no longer hashes to the"
        " leaf at position 1, so its inclusion proof does not check"
    ]
    ids = fresh_log(workspace)
    wanted = [("capture", str(record_id)) for record_id in ids]
    swap_entries(workspace, 2, 3)
    problems = proof_problems(LogProofs(workspace).of(wanted))
    assert len(problems) == RECORDS  # every path now leads elsewhere than the signed root
    assert all("does not lead to the root checkpoint" in p for p in problems), problems
