"""Sixteen processes fetching and verifying at once, on SQLite and on PostgreSQL: short
transactions mean nobody waits long enough to see "database is locked", and the unique keys
mean nobody records anything twice."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from records.models import Capture, Citation, Extraction, Snapshot, Verification
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend
from tests.records.test_records_cli import ARTICLE, QUOTE, write_json

# Other processes write and read these records: they are committed (tests/records/conftest.py).
pytestmark = [pytest.mark.committed, pytest.mark.slow]

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


def test_processes_killed_mid_work_leave_nothing_broken_and_a_rerun_finishes(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    """kill -9 at random moments of fetching (a body that drips) and verifying, then fsck and
    the same commands again: fsck finds nothing damaged or missing, the rerun succeeds, and no
    row is recorded twice."""
    pages = [f"/slow-{n}" for n in range(4)]
    for n, path in enumerate(pages):
        body = ARTICLE.replace("Caching at the edge", f"Caching at the edge, part {n}")
        http_server.route(path, body=body.encode(), chunked=True, chunk_delay=0.05)
    urls = [http_server.url(path) for path in pages]
    citations = [
        write_json(
            tmp_path, {"citationId": f"c-kill-{n}", "url": url, "quote": QUOTE}, f"c{n}.json"
        )
        for n, url in enumerate(urls)
    ]
    backend.workspace().close()
    commands = [["fetch", url] for url in urls]
    commands += [["verify", "--fetch", "--json", str(path)] for path in citations]
    rng = random.Random(20261130)
    running = [
        subprocess.Popen(
            [sys.executable, "-m", "snap", *command],
            env=backend.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for command in commands
    ]
    for process in running:
        time.sleep(rng.uniform(0.0, 0.4))
        if rng.random() < 0.6:
            process.send_signal(signal.SIGKILL)
    for process in running:
        process.wait(timeout=300)
    fsck = backend.snap("fsck", "--json")
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert json.loads(fsck.stdout)["problems"] == []
    for command in commands:
        done = backend.snap(*command)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
    workspace = backend.workspace()
    with workspace.db.reading() as session:
        snapshots = session.scalars(sa.select(Snapshot.id)).all()
        citations_recorded = session.scalars(sa.select(Citation.id)).all()
        keys = session.scalars(sa.select(Verification.idempotency_key)).all()
    workspace.close()
    assert len(snapshots) == len(set(snapshots)) == len(pages)
    assert sorted(citations_recorded) == [f"c-kill-{n}" for n in range(4)]
    assert len(keys) == len(set(keys))
    assert backend.snap("fsck").returncode == 0
