"""``snap serve --workers 2`` on PostgreSQL: both worker processes answer, /metrics sums them.

Every interpreter of the served tree is guarded to loopback: the workers are spawned afresh by
uvicorn's supervisor (they do not inherit the parent's patched sockets), so the guard is
installed by a ``sitecustomize`` on their ``PYTHONPATH``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from snap.service.metrics import MULTIPROCESS_DIR
from tests.service.server import GUARDED_SNAP, ROOT, Served, free_port, service_env

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
SITECUSTOMIZE = "from tests.service import netguard\nnetguard.install()\n"


class ServedWorkers(Served):
    """``snap serve --workers N`` as a subprocess whose every process is loopback-only."""

    def __init__(self, env: dict[str, str], guard: Path, *args: str) -> None:
        self.port = free_port()
        self.token = None
        guard.mkdir(exist_ok=True)
        (guard / "sitecustomize.py").write_text(SITECUSTOMIZE)
        self.process = subprocess.Popen(
            [sys.executable, "-c", GUARDED_SNAP, "serve", "--port", str(self.port), *args],
            env={**env, "PYTHONPATH": f"{guard}:{ROOT}"},
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.wait_ready(seconds=120)


@pytest.fixture
def served(postgres_url: str, tmp_path: Path) -> Iterator[ServedWorkers]:
    env = service_env({"SNAP_HOME": str(tmp_path / "home"), "SNAP_DATABASE_URL": postgres_url})
    server = ServedWorkers(env, tmp_path / "guard", "--workers", "2")
    yield server
    if server.process.poll() is None:
        server.stop()


def per_worker(metrics: str) -> dict[str, float]:
    """Requests answered by each worker process, by pid."""
    families = {f.name: f for f in text_string_to_metric_families(metrics)}
    return {s.labels["pid"]: s.value for s in families["snap_worker_requests"].samples}


def answered_healthz(metrics: str) -> float:
    families = {f.name: f for f in text_string_to_metric_families(metrics)}
    return sum(
        s.value
        for s in families["snap_http_requests"].samples
        if s.name == "snap_http_requests_total" and s.labels["route"] == "/healthz"
    )


def test_two_workers_answer_and_metrics_add_up(served: ServedWorkers) -> None:
    sent = 1  # the /healthz that found the server ready
    deadline = time.monotonic() + 60
    workers: dict[str, float] = {}
    with ThreadPoolExecutor(8) as pool:  # concurrent connections, so both workers accept some
        while time.monotonic() < deadline:
            statuses = list(pool.map(lambda _: served.call("GET", "/healthz").status, range(32)))
            assert statuses == [200] * 32
            sent += 32
            workers = per_worker(served.call("GET", "/metrics").body.decode())
            if len([w for w in workers.values() if w > 0]) == 2:
                break
    assert len(workers) == 2, workers  # two processes, each answered some requests
    assert all(count > 0 for count in workers.values()), workers
    metrics = served.call("GET", "/metrics").body.decode()
    assert answered_healthz(metrics) == sent  # one sum over both workers, not one worker's
    # the /metrics requests are counted too: per worker they add up to every request answered
    assert sum(per_worker(metrics).values()) >= sent


def test_a_verify_is_recorded_once_whichever_worker_answers(
    served: ServedWorkers, tmp_path: Path
) -> None:
    """Both workers share one PostgreSQL database: an answer recorded by one is read by all."""
    answer = {"answerId": "a-1", "claims": [{"text": "t", "url": "https://x.test/", "quote": "q"}]}
    results = [served.call("POST", "/v1/verify", answer).json() for _ in range(6)]
    citation_ids = {r["results"][0]["citationId"] for r in results}
    assert len(citation_ids) == 1
    (citation_id,) = citation_ids
    history = served.call("GET", f"/v1/citations/{citation_id}").json()
    assert len(history["verifications"]) == 6


def test_stopping_the_supervisor_stops_the_workers_and_removes_the_metrics_files(
    served: ServedWorkers,
) -> None:
    children = Path(f"/proc/{served.process.pid}/task/{served.process.pid}/children")
    pids = [int(p) for p in children.read_text().split() if is_worker(int(p))]
    assert len(pids) == 2  # the workers (not multiprocessing's resource tracker)
    shared = {worker_environment(pid).get(MULTIPROCESS_DIR) for pid in pids} - {None}
    assert len(shared) == 1  # one directory, the same in every worker
    (directory,) = shared
    assert directory is not None
    assert Path(directory).is_dir()
    code, output = served.stop()
    assert code == 0, output
    assert "with 2 worker processes" in output
    assert all(not Path(f"/proc/{pid}").exists() for pid in pids), output
    assert not Path(directory).exists()


def is_worker(pid: int) -> bool:
    command = Path(f"/proc/{pid}/cmdline").read_bytes()
    return b"spawn_main" in command and b"resource_tracker" not in command


def worker_environment(pid: int) -> dict[str, str]:
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(p.decode().split("=", 1) for p in pairs if b"=" in p)
