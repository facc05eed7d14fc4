"""Sixteen processes fetching and verifying at once, on SQLite and on PostgreSQL: short
transactions mean nobody waits long enough to see "database is locked", and the unique keys
mean nobody records anything twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from records.models import Capture, Citation, Extraction, Snapshot, Verification
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend
from tests.records.test_records_cli import ARTICLE, QUOTE, write_json

PROCESSES = 16


def test_sixteen_processes_fetch_and_verify_at_once(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    http_server.route("/cdn", body=ARTICLE.encode())
    url = http_server.url("/cdn")
    citation = write_json(tmp_path, {"citationId": "c-busy", "url": url, "quote": QUOTE})
    backend.workspace().close()  # the schema exists before the crowd arrives
    commands = [
        ["fetch", url] if n % 2 else ["verify", "--fetch", "--json", str(citation)]
        for n in range(PROCESSES)
    ]
    running = [
        subprocess.Popen(
            [sys.executable, "-m", "snap", *command],
            env=backend.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    finished = [(process.communicate(timeout=300), process.returncode) for process in running]
    for (_stdout, stderr), code in finished:
        assert "locked" not in stderr
        assert code == 0, stderr
    verified = [json.loads(out) for (out, _), _ in finished[::2]]
    assert all(v["results"][0]["status"] == "quote_found" for v in verified)
    workspace = backend.workspace()
    with workspace.db.reading() as session:

        def rows(model: type) -> int:
            return int(session.scalar(sa.select(sa.func.count()).select_from(model)) or 0)

        stored_captures = rows(Capture)
        counts = {m.__name__: rows(m) for m in (Snapshot, Extraction, Citation, Verification)}
        keys = session.scalars(sa.select(Verification.idempotency_key)).all()
    workspace.close()
    assert counts == {"Snapshot": 1, "Extraction": 1, "Citation": 1, "Verification": 8}
    assert len(set(keys)) == len(keys) == 8
    assert PROCESSES // 2 <= stored_captures <= PROCESSES
