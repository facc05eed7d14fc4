"""An export or an attestation of many records reads the log's leaf hashes once and proves
every record against that one read (``records.attest.log_checks.LogProofs``): a pass over the
log per record cost about 200 ms each at 100,000 entries."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.attest.test_attest_subjects import run, sealed_home
from tests.attest.tsa import LocalTsa

WHOLE_LOG = re.compile(r"FROM log_entries\s+ORDER BY log_entries\.position", re.IGNORECASE)


@contextmanager
def log_reads() -> Iterator[list[str]]:
    """The statements that read the whole log, in every engine, while the block runs."""
    seen: list[str] = []

    def record(*args: Any) -> None:
        statement = str(args[2])
        if WHOLE_LOG.search(statement):
            seen.append(statement)

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", record)


@pytest.mark.parametrize("command", ["attest", "html", "wacz"])
def test_every_record_of_an_answer_is_proved_from_one_read_of_the_log(
    tmp_path: Path, tsa: LocalTsa, command: str
) -> None:
    env, _ = sealed_home(tmp_path, tsa)  # one capture, two citations, their checks
    if command == "attest":
        args = ["attest", "answer-1", "--json"]
    else:
        args = ["export", "--format", command, str(tmp_path / "answer.json")]
        args += ["-o", str(tmp_path / f"evidence.{command}")]
    with log_reads() as reads:
        done = run(env, *args)
    assert done.exit_code == 0, done.output
    if command == "attest":
        document = json.loads(done.output)
        proved = [c["proof"] for c in document["captures"]]
        proved += [v["proof"] for v in document["verifications"]]
        assert len(proved) >= 3
        assert all(p and p["path"] is not None for p in proved)
    assert len(reads) == 1, reads
