"""``snap fsck`` on a signed and stamped home: a log checkpoint's timestamp token is a recorded
blob (checked, counted, never an orphan), and a seal that does not hold is reported with the
capture and snapshot it belongs to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from click.testing import CliRunner

from records.attest.signing import KeyType, write_new_key
from snap.cli import cli
from snapshotter.store import blob_key
from tests.attest.conftest import attesting_env
from tests.attest.tsa import LocalTsa


def _home_with_two_captures(tmp_path: Path, tsa: LocalTsa) -> tuple[dict[str, str], list[str]]:
    """A signing, stamping home with two fetched pages (each fetch ends with a checkpoint)."""
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ED25519)
    env = attesting_env(home, tsa)
    snapshots = []
    for text in ("first page", "second page"):
        page = tmp_path / f"{text.replace(' ', '-')}.html"
        page.write_text(f"<main><p>{text}</p></main>")
        fetched = CliRunner().invoke(cli, ["fetch", "--json", str(page)], env=env)
        assert fetched.exit_code == 0, fetched.output
        snapshots.append(json.loads(fetched.output)["snapshotId"])
    return env, snapshots


def _rows(env: dict[str, str], query: str) -> list[Any]:
    engine = sa.create_engine(f"sqlite:///{Path(env['SNAP_HOME']) / 'snap.db'}")
    try:
        with engine.connect() as connection:
            return list(connection.execute(sa.text(query)).all())
    finally:
        engine.dispose()


def _fsck_json(env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    done = CliRunner().invoke(cli, ["fsck", "--json"], env=env)
    return done.exit_code, json.loads(done.output)


def test_checkpoint_tokens_are_recorded_blobs_and_a_damaged_one_is_damaged(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    env, _ = _home_with_two_captures(tmp_path, tsa)
    stamps = [
        (row[0], json.loads(row[1]) if isinstance(row[1], str) else row[1])
        for row in _rows(env, "SELECT id, timestamp FROM log_checkpoints ORDER BY id")
    ]
    tokens = {checkpoint_id: stamp["hash"] for checkpoint_id, stamp in stamps}
    assert tokens, "each fetch ends with a stamped checkpoint"
    code, report = _fsck_json(env)
    assert code == 0, report
    assert report["orphans"] == []
    # raw, text, manifest and token of each capture (a file has no headers), and the tokens
    assert report["blobsChecked"] == 2 * 4 + len(set(tokens.values()))
    assert report["states"]["intact"] == report["blobsChecked"]

    checkpoint_id, digest = max(tokens.items())
    path = Path(env["SNAP_HOME"]) / "store" / blob_key("timestamp", digest)
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))

    code, report = _fsck_json(env)
    assert code == 1
    assert report["orphans"] == []
    assert report["states"]["damaged"] == 1
    [problem] = [p for p in report["problems"] if "checkpointId" in p]
    assert problem["checkpointId"] == checkpoint_id
    assert problem["state"] == "damaged"
    assert problem["digest"] == digest
    assert f"checkpoint {checkpoint_id}'s timestamp token" in problem["problem"]
    human = CliRunner().invoke(cli, ["fsck"], env=env)
    assert human.exit_code == 1
    assert "orphan (no record names it)" not in human.output
    assert f"✗ {blob_key('timestamp', digest)} (checkpoint {checkpoint_id}'s" in human.output
    assert ", 1 damaged," in human.output


def test_each_seal_problem_names_its_capture_and_snapshot(tmp_path: Path, tsa: LocalTsa) -> None:
    """The intruder gives each capture the other's token: two problems, one per capture, each
    saying which capture and snapshot (they read the same otherwise)."""
    env, snapshots = _home_with_two_captures(tmp_path, tsa)
    engine = sa.create_engine(f"sqlite:///{Path(env['SNAP_HOME']) / 'snap.db'}")
    with engine.begin() as connection:
        rows = connection.execute(sa.text("SELECT id, provenance FROM captures ORDER BY id")).all()
        first, second = (json.loads(row[1]) for row in rows)
        first["timestamp"], second["timestamp"] = second["timestamp"], first["timestamp"]
        for (capture_id, _), provenance in zip(rows, (first, second), strict=True):
            connection.execute(
                sa.text("UPDATE captures SET provenance = :p WHERE id = :id"),
                {"p": json.dumps(provenance), "id": capture_id},
            )
    engine.dispose()
    capture_ids = [row[0] for row in rows]

    code, report = _fsck_json(env)
    assert code == 1
    seal_problems = [p for p in report["problems"] if "captureId" in p]
    assert [(p["captureId"], p["snapshotId"]) for p in seal_problems] == list(
        zip(capture_ids, snapshots, strict=True)
    )
    human = CliRunner().invoke(cli, ["fsck"], env=env).output
    for capture_id, snapshot_id in zip(capture_ids, snapshots, strict=True):
        assert (
            f"✗ capture {capture_id}'s seal (snapshot {snapshot_id}) does not hold: "
            "the manifest's timestamp token stamps another digest"
        ) in human
