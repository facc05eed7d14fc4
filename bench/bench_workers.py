"""Benchmark of Celery workers: capture pages/s and re-verify citations/s with 1, 2 and 4
worker processes, against in-process baselines timed in the same run.

Run: ``.venv/bin/python bench/bench_workers.py [--pages 100] [--delay 0.3]
[--per-page 50] [--workers 1,2,4] [--json]``; ``--kill-test`` instead runs the
killed-worker test at the issue's full size (2,000 URLs, 100,000 citations).

Captures: loopback pages that answer after ``--delay`` seconds (I/O-bound), all on one host,
with the per-host limits lifted (SNAP_HOST_DELAY=0, SNAP_HOST_CONCURRENCY=64) so that the
number of worker processes is what is measured. Baseline: a plain Python loop calling the
same use case (``capture_source``) one URL after the other, in one process.

Re-verification: ``--per-page`` citations of every captured page. Baselines: today's
in-process ``reverify`` (grouped by snapshot, each text tokenized once) and a naive
per-citation loop, both uncached (reads and tokenizes the text for every citation, timed on a
sample) and cached (one text cache shared by every citation: the fair naive loop).

Workers are ``snap worker --concurrency N`` (N pool processes) on the machine's Redis and a
throwaway PostgreSQL database per measurement; a run is timed from publishing the first
message to the database showing every item done. Worker start-up is not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

import redis  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from records.capture import capture_source  # noqa: E402
from records.db import Database  # noqa: E402
from records.evidence import Evidence  # noqa: E402
from records.jobs import (  # noqa: E402
    BatchProgress,
    batch_progress,
    capture_items,
    create_batch,
    reverify_items,
)
from records.models import Citation, Snapshot  # noqa: E402
from records.repository import choose_extraction  # noqa: E402
from records.reverify import recheck, reverify  # noqa: E402
from records.rows import idempotency_key, record_verifications  # noqa: E402
from records.texts import SnapshotTexts  # noqa: E402
from records.verify import verification_values  # noqa: E402
from records.vocabulary import BatchKind, ItemState  # noqa: E402
from records.workspace import Workspace  # noqa: E402
from snap.config import Settings, settings_of  # noqa: E402
from tests.db_support import throwaway_postgres  # noqa: E402
from tests.workers.pages import PageServer, cite_every_page  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/9"
SAMPLE = 300


@contextmanager
def deployment(folder: Path) -> Iterator[dict[str, str]]:
    """A fresh PostgreSQL database, folder store and queue: nothing is already stored."""
    queue = f"bench-{uuid.uuid4().hex[:12]}"
    with throwaway_postgres() as url:
        Database(url, auto_migrate=True).dispose()
        home = folder / queue
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SNAP_", "AWS_"))}
        env |= {
            "SNAP_HOME": str(home),
            "SNAP_DATABASE_URL": url,
            "SNAP_BROKER_URL": REDIS_URL,
            "SNAP_QUEUE": queue,
            "SNAP_ALLOW_PRIVATE": "1",
            "SNAP_HOST_DELAY": "0",
            "SNAP_HOST_CONCURRENCY": "64",
        }
        try:
            yield env
        finally:
            client = redis.Redis.from_url(REDIS_URL)
            keys = list(client.scan_iter(match=f"snap:{queue}:*", count=1000))
            if keys:
                client.delete(*keys)
            client.close()


@contextmanager
def worker(env: dict[str, str], processes: int, log: Path) -> Iterator[None]:
    """``snap worker`` with N pool processes, ready before the clock starts."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "snap", "worker", "--concurrency", str(processes), "-l", "INFO"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        while b" ready." not in log.read_bytes():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the worker did not start"
            time.sleep(0.1)
        yield
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def open_workspace(env: dict[str, str]) -> Workspace:
    return Workspace.open(Settings.from_env(env))


def timed_batch(
    ws: Workspace, kind: BatchKind, items: list[tuple[str, dict[str, Any]]]
) -> tuple[float, BatchProgress]:
    from snap.workers.app import configure
    from snap.workers.tasks import publish

    configure(settings_of(ws))
    batch_id, item_ids = create_batch(ws.db, kind, {}, items)
    started = time.perf_counter()
    publish(kind, batch_id, item_ids)
    while not (progress := batch_progress(ws.db, batch_id)).finished:
        time.sleep(0.05)
    return time.perf_counter() - started, progress


def capture_loop(env: dict[str, str], urls: list[str]) -> float:
    ws = open_workspace(env)
    started = time.perf_counter()
    for url in urls:
        capture_source(ws, url)
    elapsed = time.perf_counter() - started
    ws.close()
    return elapsed


def capture_workers(env: dict[str, str], urls: list[str], processes: int, log: Path) -> float:
    ws = open_workspace(env)
    with worker(env, processes, log):
        elapsed, progress = timed_batch(ws, BatchKind.CAPTURE, capture_items(urls))
    ws.close()
    assert progress.count(ItemState.DONE) == len(urls), progress
    return elapsed


def naive(ws: Workspace, citations: list[Citation], *, cached: bool) -> float:
    """Per citation: its snapshot read and checked against its text, then every check written
    in one batched insert, as reverify writes them (so the ratio compares the checking, not
    whether it is recorded); ``cached`` shares one text cache (each text tokenized once)
    across all citations, like reverify does per group."""
    run_id = uuid.uuid4().hex
    started = time.perf_counter()
    with ws.db.reading() as session:
        planned = []
        for citation in citations:
            snapshot = session.get(Snapshot, citation.snapshot_id)
            assert snapshot is not None
            evidence = Evidence.of(snapshot, choose_extraction(session, snapshot.id))
            planned.append((citation, evidence))
    shared = SnapshotTexts(ws.stores)
    rows = []
    for citation, evidence in planned:
        texts = shared if cached else SnapshotTexts(ws.stores)
        outcome, _, _ = recheck(texts, citation, evidence, evidence, {})
        assert outcome.status == "quote_found"
        key = idempotency_key(citation.id, outcome.snapshot_id, evidence.extraction_id, run_id, 0)
        rows.append(verification_values(citation.id, outcome, evidence.extraction_id, run_id, key))
    with ws.db.session() as session:
        record_verifications(session, rows)
    return time.perf_counter() - started


def reverify_baselines(env: dict[str, str]) -> dict[str, float]:
    ws = open_workspace(env)
    with ws.db.reading() as session:
        citations = list(session.scalars(sa.select(Citation).order_by(Citation.id)))
    started = time.perf_counter()
    report = reverify(ws, citations)
    in_process = time.perf_counter() - started
    assert report.passed
    sample = random.Random(7).sample(citations, min(SAMPLE, len(citations)))
    uncached = naive(ws, sample, cached=False) / len(sample) * len(citations)
    cached = naive(ws, citations, cached=True)
    ws.close()
    return {"reverify": in_process, "naiveUncached": uncached, "naiveCached": cached}


def reverify_workers(env: dict[str, str], processes: int, log: Path) -> float:
    ws = open_workspace(env)
    items = reverify_items(ws)
    with worker(env, processes, log):
        elapsed, progress = timed_batch(ws, BatchKind.REVERIFY, items)
    ws.close()
    assert progress.count(ItemState.DONE) == len(items), progress
    return elapsed


def run(args: argparse.Namespace) -> dict[str, Any]:
    server = PageServer(delay=args.delay, sentences=args.per_page)
    urls = [server.url(f"/page/{n}") for n in range(args.pages)]
    counts = [int(n) for n in args.workers.split(",")]
    results: dict[str, Any] = {"pages": args.pages, "delay": args.delay}
    with tempfile.TemporaryDirectory() as folder:
        logs = Path(folder)
        with deployment(logs) as env:
            loop = capture_loop(env, urls)
            engine = sa.create_engine(env["SNAP_DATABASE_URL"])
            cited = cite_every_page(engine, args.per_page)
            engine.dispose()
            baselines = reverify_baselines(env)
            reverified = {n: reverify_workers(env, n, logs / f"rv{n}.log") for n in counts}
        captured = {}
        for n in counts:
            with deployment(logs) as env:
                captured[n] = capture_workers(env, urls, n, logs / f"cap{n}.log")
    server.close()
    best = min(baselines["reverify"], baselines["naiveCached"])
    results |= {
        "capture": {
            "plainLoopPagesPerSecond": round(args.pages / loop, 1),
            "workers": {
                n: {
                    "pagesPerSecond": round(args.pages / t, 1),
                    "speedupOverLoop": round(loop / t, 2),
                }
                for n, t in captured.items()
            },
        },
        "reverify": {
            "citations": cited,
            "inProcessPerSecond": round(cited / baselines["reverify"]),
            "naiveUncachedPerSecond": round(cited / baselines["naiveUncached"]),
            "naiveCachedPerSecond": round(cited / baselines["naiveCached"]),
            "workers": {
                n: {
                    "citationsPerSecond": round(cited / t),
                    "speedupOverFastestBaseline": round(best / t, 2),
                }
                for n, t in reverified.items()
            },
        },
    }
    return results


def kill_test() -> int:
    env = os.environ | {"SNAP_WORKERS_TEST_URLS": "2000", "SNAP_WORKERS_TEST_CITATIONS": "100000"}
    command = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"]
    command += ["tests/workers/test_workers_kill.py", "--timeout", "3600"]
    started = time.perf_counter()
    code = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
    print(f"full-size kill test: exit {code} in {time.perf_counter() - started:.0f} s")
    return code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--per-page", type=int, default=50)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--kill-test", action="store_true")
    args = parser.parse_args()
    if args.kill_test:
        sys.exit(kill_test())
    results = run(args)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    capture, checks = results["capture"], results["reverify"]
    print(f"capture, {args.pages} pages answering after {args.delay} s (one host, limits lifted)")
    print(f"  plain loop, 1 process      {capture['plainLoopPagesPerSecond']:8} pages/s")
    for n, row in capture["workers"].items():
        print(
            f"  {n} worker process(es)      {row['pagesPerSecond']:8} pages/s"
            f"  {row['speedupOverLoop']}x the loop"
        )
    print(f"re-verify, {checks['citations']} citations over {args.pages} snapshots")
    print(f"  in-process reverify        {checks['inProcessPerSecond']:8} citations/s")
    print(f"  naive loop, cached texts   {checks['naiveCachedPerSecond']:8} citations/s")
    print(f"  naive loop, no cache       {checks['naiveUncachedPerSecond']:8} citations/s")
    for n, row in checks["workers"].items():
        print(
            f"  {n} worker process(es)      {row['citationsPerSecond']:8} citations/s"
            f"  {row['speedupOverFastestBaseline']}x the fastest baseline"
        )


if __name__ == "__main__":
    main()
