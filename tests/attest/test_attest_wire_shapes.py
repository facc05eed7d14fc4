"""The JSON a user's scripts read from ``snap keys``, ``snap log``, ``snap attest``, ``snap
store init`` and ``snap db upgrade`` (``--json``), pinned as
``tests/records/test_records_wire_shapes.py`` pins the others: every key, in order, every
value's type, and the words that name a state.

A home with a key and a loopback TSA: a capture and an answer of two claims checked, a
checkpoint made and asked again (unchanged), a second capture and checkpoint (a consistency
proof from the first), the snapshot, the answer and a citation attested, the log verified
intact and then with a row changed behind its back, the folder store initialised and the
database upgraded (already at the latest revision).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.attest.conftest import attesting_env
from tests.attest.test_attest_subjects import QUOTE, citation_ids, run
from tests.attest.tsa import LocalTsa
from tests.attest.wire_shapes_attest_pinned import PINNED
from tests.records.test_records_wire_shapes import shapes_found, types_not_pinned


def run_json(env: dict[str, str], *args: str, code: int = 0) -> Any:
    done = run(env, *args, "--json")
    assert done.exit_code == code, done.output
    return json.loads(done.output)


def fetched(env: dict[str, str], page: Path, text: str) -> str:
    page.write_text(f"<html><body><main><p>{text}</p></main></body></html>")
    return str(run_json(env, "fetch", str(page))["snapshotId"])


@pytest.fixture
def documents(tmp_path: Path, tsa: LocalTsa) -> dict[str, Any]:
    env = attesting_env(tmp_path / "home", tsa)
    found = {"keys init": run_json(env, "keys", "init"), "keys show": run_json(env, "keys", "show")}
    snapshot = fetched(env, tmp_path / "page.html", f"{QUOTE}. The origin rests.")
    answer = {
        "answerId": "answer-1",
        "claims": [
            {"text": "A tenth reaches the origin.", "snapshotId": snapshot, "quote": QUOTE},
            {"text": "It rests.", "snapshotId": snapshot, "quote": "the origin rests"},
        ],
    }
    (tmp_path / "answer.json").write_text(json.dumps(answer))
    run_json(env, "verify", str(tmp_path / "answer.json"))
    found["log checkpoint"] = run_json(env, "log", "checkpoint")
    found["log checkpoint UNCHANGED"] = run_json(env, "log", "checkpoint")
    fetched(env, tmp_path / "second.html", "A second page, captured after the checkpoint.")
    run_json(env, "log", "checkpoint")
    found["log consistency"] = run_json(env, "log", "consistency", "1", "2")
    found["attest SNAPSHOT"] = run_json(env, "attest", snapshot)
    found["attest ANSWER"] = run_json(env, "attest", "answer-1")
    found["attest CITATION"] = run_json(env, "attest", citation_ids(env)[0])
    found["log verify"] = run_json(env, "log", "verify")
    changed(Path(env["SNAP_HOME"]))
    found["log verify CHANGED"] = run_json(env, "log", "verify", code=1)
    found["store init"] = run_json(env, "store", "init")
    found["db upgrade"] = run_json(env, "db", "upgrade")
    return found


def changed(home: Path) -> None:
    """A capture's row edited behind the log's back."""
    engine = sa.create_engine(f"sqlite:///{home / 'snap.db'}")
    try:
        with engine.begin() as connection:
            connection.execute(sa.text("UPDATE captures SET error = 'edited'"))
    finally:
        engine.dispose()


def test_every_attestation_wire_shape_is_as_pinned(documents: dict[str, Any]) -> None:
    found = shapes_found(documents)
    assert list(found) == list(PINNED)  # every key, in order, and no other
    assert types_not_pinned(found, PINNED) == {}
