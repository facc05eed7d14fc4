"""A batch of loopback URLs and then their citations, each with workers killed with SIGKILL
mid-batch and restarted: every item ends done, nothing is recorded twice, nothing is lost.

Size: SNAP_WORKERS_TEST_URLS and SNAP_WORKERS_TEST_CITATIONS (default 300 and 10,000, which
take about a minute here). The issue's full size, 2,000 URLs and 100,000 citations, is run by
``bench/bench_workers.py --kill-test`` (see docs/workers.md).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

from records.models import Batch, BatchItem, Capture, Snapshot, Verification
from tests.workers.conftest import Snap, pool_children
from tests.workers.pages import PageServer, cite_every_page

URLS = int(os.environ.get("SNAP_WORKERS_TEST_URLS", "300"))
CITATIONS = int(os.environ.get("SNAP_WORKERS_TEST_CITATIONS", "10000"))


POOL_PROCESSES = 4  # two workers of two pool processes each


def run_with_kills(
    snap: Snap, batch_id: str, total: int, pages: PageServer | None = None
) -> dict[str, object]:
    """Two workers of two pool processes. At a third: SIGKILL one pool process of worker A
    (its message goes back to the queue: reject on worker lost). At a half: SIGKILL worker B
    whole (its messages are taken, never acknowledged) and start it again. When the batch
    stalls, ``snap jobs --resume`` re-queues what the killed worker held.

    Given the ``pages`` the batch fetches, each kill is made while the page server holds every
    pool process's request (``PageServer.hold``), so it lands on running tasks however loaded
    the machine is; without it (re-verification fetches nothing) the kills land where they
    land."""
    first = snap.start_worker("--concurrency", "2")
    second = snap.start_worker("--concurrency", "2")
    snap.wait_until(batch_id, total // 3)
    first_pool = wait_for_pool(first.pid)
    in_flight(pages, lambda: os.kill(first_pool[0], signal.SIGKILL))
    snap.wait_until(batch_id, total // 2)
    in_flight(pages, lambda: snap.kill_worker(second))
    snap.start_worker("--concurrency", "2")
    progress = snap.wait_stalled(batch_id)
    resumed = 0
    if not progress["finished"]:
        resumed = snap.json("jobs", "--resume", batch_id)["requeued"]
    finished = snap.run("jobs", "--wait", "--json", batch_id, timeout=600)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    unfinished = progress["pending"] + progress["running"]
    print(f"batch {batch_id}: {unfinished} item(s) stranded by the kills, {resumed} re-queued")
    assert resumed == unfinished
    return {"resumed": resumed, "stalled": progress}


def wait_for_pool(pid: int, timeout: float = 120) -> list[int]:
    """The worker's pool processes, once it has started them (late on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while not (children := pool_children(pid)):
        assert time.monotonic() < deadline, f"worker {pid} started no pool process"
        time.sleep(0.1)
    return children


def in_flight(pages: PageServer | None, kill: Callable[[], None]) -> None:
    """``kill`` while every pool process waits inside a fetch (when the batch fetches pages)."""
    if pages is None:
        kill()
        return
    pages.hold()
    try:
        held = pages.wait_held(POOL_PROCESSES, timeout=120)
        assert held > 0, "no fetch reached the page server while it held requests"
        kill()
    finally:
        pages.release()


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.timeout(900)
def test_a_batch_survives_killed_workers(snap_pg: Snap, pages: PageServer, tmp_path: Path) -> None:
    urls = [pages.url(f"/page/{n}") for n in range(URLS)]
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(urls) + "\n")
    capture = snap_pg.json("fetch", "--enqueue", str(listing))
    run_with_kills(snap_pg, capture["batchId"], URLS, pages)
    engine = sa.create_engine(snap_pg.env["SNAP_DATABASE_URL"])
    try:
        with engine.connect() as connection:
            stored = connection.execute(
                sa.select(Capture.url, sa.func.count()).group_by(Capture.url)
            ).all()
            snapshots = connection.scalar(sa.select(sa.func.count()).select_from(Snapshot))
        assert sorted(url for url, _ in stored) == sorted(urls)
        assert {count for _, count in stored} == {1}  # each URL recorded exactly once
        assert snapshots == URLS
        assert set(pages.hits()) == {f"/page/{n}" for n in range(URLS)}

        cited = cite_every_page(engine, CITATIONS // URLS)
        reverify = snap_pg.json("reverify", "--enqueue")
        assert reverify["queued"] == URLS  # one task per snapshot group
        run_with_kills(snap_pg, reverify["batchId"], URLS)
        with engine.connect() as connection:
            checks = connection.execute(
                sa.select(Verification.citation_id, Verification.status).where(
                    Verification.run_id == reverify["batchId"]
                )
            ).all()
            attempts = connection.execute(
                sa.select(BatchItem.batch_id, sa.func.max(BatchItem.attempts)).group_by(
                    BatchItem.batch_id
                )
            ).all()
            states = connection.execute(
                sa.select(Batch.id, BatchItem.state, sa.func.count())
                .join(BatchItem, BatchItem.batch_id == Batch.id)
                .group_by(Batch.id, BatchItem.state)
            ).all()
    finally:
        engine.dispose()
    assert len(checks) == cited  # no loss, no duplicate
    assert len({citation for citation, _ in checks}) == cited
    assert {status for _, status in checks} == {"quote_found"}
    assert sorted((state, count) for _, state, count in states) == [("done", URLS)] * 2
    print(f"most attempts of one item, per batch: {attempts}")
    assert max(most for _, most in attempts) >= 2  # the kills did hit running tasks (held)
