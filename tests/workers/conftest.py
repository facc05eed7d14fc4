"""Workers under test: real Redis (127.0.0.1:6379, database 9, a queue and key prefix of
each test's own), real PostgreSQL (a throwaway database per run, as tests/db_support.py makes
them), and ``snap worker`` processes started as subprocesses, each in its own process group
so that a test can SIGKILL one whole worker, and every worker is ended when the test ends."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from records.db import Database
from tests.db_support import empty_tables, throwaway_postgres
from tests.snap_cli import run_snap
from tests.workers.pages import PageServer

REDIS_URL = os.environ.get("SNAP_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")


@dataclass
class Snap:
    """Runs ``snap`` commands and workers with one environment."""

    env: dict[str, str]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: Path | None = None

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "snap", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def json(self, *args: str) -> Any:
        done = self.run(*args, "--json")
        assert "Traceback" not in done.stderr, done.stderr
        return json.loads(done.stdout)

    def start_worker(self, *celery_args: str) -> subprocess.Popen[bytes]:
        assert self.logs is not None
        log = self.logs / f"worker-{len(self.workers)}.log"
        with log.open("ab") as output:  # the worker keeps its own copy of the descriptor
            process = subprocess.Popen(
                [sys.executable, "-m", "snap", "worker", "--loglevel", "WARNING", *celery_args],
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killpg reaches its pool too
            )
        self.workers.append(process)
        return process

    def kill_worker(self, process: subprocess.Popen[bytes]) -> None:
        """SIGKILL the worker and every pool process: nothing acknowledges anything."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def stop_all(self) -> None:
        for process in self.workers:
            if process.poll() is None:
                self.kill_worker(process)

    def progress(self, batch_id: str) -> dict[str, Any]:
        """``snap jobs BATCH --json``, asked in this process (tests/snap_cli.py): the waits below
        poll it every half second, and a new interpreter each time would take more CPU than the
        workers under test. Starting workers and queueing work stay real processes."""
        done = run_snap(["jobs", batch_id, "--json"], self.env)
        assert "Traceback" not in done.stderr, done.stderr
        progress: dict[str, Any] = json.loads(done.stdout)
        return progress

    def wait_until(self, batch_id: str, done: int, timeout: float = 300) -> dict[str, Any]:
        """Until at least ``done`` items are finished (done or failed)."""
        deadline = time.monotonic() + timeout
        while True:
            progress = self.progress(batch_id)
            if progress["done"] + progress["failed"] >= done:
                return progress
            assert time.monotonic() < deadline, f"stuck at {progress}"
            time.sleep(0.5)

    def wait_stalled(self, batch_id: str, quiet: float = 6.0, timeout: float = 300) -> Any:
        """Until the batch is finished or nothing has changed for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            progress = self.progress(batch_id)
            if progress["finished"]:
                return progress
            counts = (progress["done"], progress["failed"])
            if counts != last:
                last, since = counts, time.monotonic()
            elif time.monotonic() - since > quiet:
                return progress
            time.sleep(0.5)
        raise AssertionError(f"still moving after {timeout} s")


def pool_children(pid: int) -> list[int]:
    """The pool processes of a prefork worker (its child processes, read from /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        found += [int(child) for child in children]
    return found


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with throwaway_postgres() as url:
        Database(url, auto_migrate=True).dispose()
        yield url


@pytest.fixture
def queue() -> Iterator[str]:
    """A queue name of this test's own; every Redis key it made is deleted afterwards."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    forget_queue(name)


def forget_queue(name: str) -> None:
    """Delete every Redis key of the queue ``name`` (snap prefixes them ``snap:<queue>:``)."""
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=f"snap:{name}:*", count=1000))
    if keys:
        client.delete(*keys)
    client.close()


def base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SNAP_", "AWS_"))}
    return env | {
        "SNAP_HOME": str(tmp_path / "home"),
        "SNAP_ALLOW_PRIVATE": "1",
        "SNAP_HOST_DELAY": "0",
        "SNAP_HOST_CONCURRENCY": "64",
    }


@pytest.fixture
def snap_pg(tmp_path: Path, postgres_url: str, queue: str) -> Iterator[Snap]:
    """PostgreSQL records, a folder store, the Redis broker."""
    database = Database(postgres_url)
    empty_tables(database.engine)
    database.dispose()
    env = base_env(tmp_path) | {
        "SNAP_DATABASE_URL": postgres_url,
        "SNAP_BROKER_URL": REDIS_URL,
        "SNAP_QUEUE": queue,
    }
    snap = Snap(env, logs=tmp_path)
    yield snap
    snap.stop_all()


@pytest.fixture
def snap_embedded(tmp_path: Path) -> Snap:
    """The embedded default: SQLite and a folder store, no broker. The home starts empty (not
    a copy of the migrated template): tests here check what commands do before a first run."""
    return Snap(base_env(tmp_path), logs=tmp_path)


@pytest.fixture
def pages() -> Iterator[PageServer]:
    server = PageServer()
    yield server
    server.close()
