"""A queue message names an item by its id and its batch's id, and a worker claims the item
only when both match in its own database: workers of two databases sharing one queue never
run each other's items, and a message of the shape before batch ids (only an item id) is
refused. Either refusal is one line in the worker's log and loses nothing: the item stays
pending in its own database, where ``snap jobs --resume`` queues it again."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from records import jobs
from records.db import Database
from records.models import BatchItem, Capture
from records.vocabulary import BatchKind, ItemState
from records.workspace import Workspace
from snap.config import Settings
from snap.workers.app import configure
from snap.workers.tasks import capture_url, close_opened
from tests.workers.conftest import REDIS_URL, Snap, base_env, forget_queue
from tests.workers.pages import PageServer

PAGES_A, PAGES_B = 10, 7  # items of each database's batch: B's ids are some of A's
REFUSED = re.compile(r"refused item (\d+) of batch ([0-9a-f]{32}): ")


# The refusals, one task at a time in this process -------------------------------------------


@dataclass
class Home:
    settings: Settings
    workspace: Workspace

    def batch(self, urls: list[str]) -> tuple[str, list[int]]:
        items = jobs.capture_items(urls)
        return jobs.create_batch(self.workspace.db, BatchKind.CAPTURE, {}, items)

    def item(self, item_id: int) -> tuple[str, ItemState, int]:
        with self.workspace.db.reading() as session:
            row = session.get_one(BatchItem, item_id)
            return row.batch_id, ItemState(row.state), row.attempts


@pytest.fixture
def homes(tmp_path: Path, queue: str) -> Iterator[tuple[Home, Home]]:
    """Two SQLite workspaces on one broker queue; this process's tasks are B's worker."""
    opened = []
    for name in ("a", "b"):
        env = base_env(tmp_path / name) | {"SNAP_BROKER_URL": REDIS_URL, "SNAP_QUEUE": queue}
        settings = Settings.from_env(env)
        opened.append(Home(settings, Workspace.open(settings)))
    configure(opened[1].settings)
    yield opened[0], opened[1]
    close_opened()
    for home in opened:
        home.workspace.close()


def refusals(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.getMessage().startswith("refused ")]


def test_a_message_of_another_database_is_refused_and_its_item_kept(
    homes: tuple[Home, Home], pages: PageServer, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = homes
    batch_a, ids_a = a.batch([pages.url("/page/1"), pages.url("/page/2")])
    batch_b, ids_b = b.batch([pages.url("/page/3"), pages.url("/page/4")])
    assert ids_a == ids_b  # item ids alone collide: each database numbers its own from 1
    caplog.set_level(logging.WARNING)
    outcome = capture_url.apply((ids_a[0], batch_a), throw=True)  # A's message, B's worker
    assert outcome.result is None
    (line,) = refusals(caplog)
    assert line.levelno == logging.ERROR
    said = line.getMessage()
    assert "\n" not in said
    assert f"item {ids_a[0]} of batch {batch_a}" in said
    assert b.workspace.db.safe_url in said  # this worker's database: the other identity
    assert "its own SNAP_QUEUE" in said
    assert f"snap jobs --resume {batch_a}" in said
    assert b.item(ids_b[0]) == (batch_b, ItemState.PENDING, 0)  # B's item of that id: untouched
    assert a.item(ids_a[0]) == (batch_a, ItemState.PENDING, 0)  # A's: left for A's workers
    assert jobs.resumable_items(a.workspace.db, batch_a)[1] == ids_a
    assert pages.hits() == {}


def test_a_message_of_the_old_shape_is_refused_until_resumed(
    homes: tuple[Home, Home], pages: PageServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Only an item id, as queued before batch ids were sent: it may be another database's,
    so it is not run; ``--resume`` queues the item again, and that message runs it."""
    _a, b = homes
    url = pages.url("/page/5")
    batch_b, (item_id,) = b.batch([url])
    caplog.set_level(logging.WARNING)
    assert capture_url.apply((item_id,), throw=True).result is None
    (line,) = refusals(caplog)
    assert line.levelno == logging.WARNING
    assert f"naming only item {item_id}, without its batch" in line.getMessage()
    assert "snap jobs --resume BATCH" in line.getMessage()
    assert b.item(item_id) == (batch_b, ItemState.PENDING, 0)
    assert pages.hits() == {}
    resumed_batch, resumed = jobs.resumable_items(b.workspace.db, batch_b)
    assert (resumed_batch, resumed) == (batch_b, [item_id])
    stored = capture_url.apply((item_id, batch_b), throw=True).result
    assert b.item(item_id) == (batch_b, ItemState.DONE, 1)
    assert jobs.item_results(b.workspace.db, batch_b)[url].stored() == stored
    assert pages.hits()["/page/5"] == 1
    again = capture_url.apply((item_id, batch_b), throw=True)  # a duplicate: nothing, quietly
    assert again.result is None
    assert len(refusals(caplog)) == 1
    assert pages.hits()["/page/5"] == 1


# Two databases, their workers on one queue ----------------------------------------------------


@pytest.fixture
def own_queue(queue: str) -> Iterator[str]:
    """A second queue (B's, once the deployment is put right); its Redis keys go afterwards."""
    name = f"{queue}-b"
    yield name
    forget_queue(name)


def wait_ready(log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while " ready." not in log.read_text(errors="replace"):
        assert time.monotonic() < deadline, log.read_text(errors="replace")
        time.sleep(0.2)


def refused_in(log: Path) -> list[tuple[int, str]]:
    """(item id, batch id) of every refusal line of a worker's log, in order."""
    text = log.read_text(errors="replace")
    return [(int(item), batch) for item, batch in REFUSED.findall(text)]


def captured(env: dict[str, str]) -> list[str]:
    database = Database(Settings.from_env(env).database_url)
    try:
        with database.reading() as session:
            return sorted(session.scalars(sa.select(Capture.url)).all())
    finally:
        database.dispose()


def item_states(env: dict[str, str], batch_id: str) -> dict[int, tuple[str, int]]:
    database = Database(Settings.from_env(env).database_url)
    try:
        with database.reading() as session:
            rows = session.execute(
                sa.select(BatchItem.id, BatchItem.state, BatchItem.attempts).where(
                    BatchItem.batch_id == batch_id
                )
            ).all()
    finally:
        database.dispose()
    return {item_id: (state, attempts) for item_id, state, attempts in rows}


def enqueue(snap: Snap, urls: list[str], tmp_path: Path) -> str:
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(urls) + "\n")
    queued = snap.json("fetch", "--enqueue", str(listing))
    batch_id: str = queued["batchId"]
    return batch_id


@pytest.mark.slow
def test_workers_of_two_databases_on_one_queue_run_only_their_own_items(
    tmp_path: Path, queue: str, own_queue: str, pages: PageServer
) -> None:
    """Two SQLite databases whose items are numbered alike, a worker of each on one queue,
    a batch of distinct loopback pages in each. Every message a worker takes of the other
    database is refused (one line, once) and its item stays pending, never claimed; every
    item of its own is run once. Then B gets its own queue, the remedy the line names, and
    ``snap jobs --resume`` completes both batches with their own pages, each fetched once."""
    snaps: dict[str, Snap] = {}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        env = base_env(tmp_path / name) | {"SNAP_BROKER_URL": REDIS_URL, "SNAP_QUEUE": queue}
        snaps[name] = Snap(env, logs=tmp_path / name)
    a, b = snaps["a"], snaps["b"]
    try:
        worker_b = b.start_worker("--concurrency", "1", "--loglevel", "INFO", "-n", "b@%h")
        a.start_worker("--concurrency", "1", "--loglevel", "INFO", "-n", "a@%h")
        log_a, log_b = tmp_path / "a" / "worker-0.log", tmp_path / "b" / "worker-0.log"
        wait_ready(log_a)
        wait_ready(log_b)
        paths_a = [f"/page/{100 + n}" for n in range(PAGES_A)]
        paths_b = [f"/page/{200 + n}" for n in range(PAGES_B)]
        urls_a, urls_b = [pages.url(p) for p in paths_a], [pages.url(p) for p in paths_b]
        batch_a = enqueue(a, urls_a, tmp_path / "a")
        batch_b = enqueue(b, urls_b, tmp_path / "b")
        assert set(item_states(b.env, batch_b)) < set(item_states(a.env, batch_a))

        # Every message is taken: each one is run by its own database's worker or refused by
        # the other's. Before batch ids were sent, a refused one ran the other database's item
        # of that id, or nothing (ids 8 to 10 are A's only), leaving its own item pending.
        deadline = time.monotonic() + 180
        while True:
            by_b, by_a = refused_in(log_b), refused_in(log_a)
            done_a, done_b = a.progress(batch_a)["done"], b.progress(batch_b)["done"]
            if done_a + len(by_b) == PAGES_A and done_b + len(by_a) == PAGES_B:
                break
            assert time.monotonic() < deadline, (done_a, by_b, done_b, by_a)
            time.sleep(0.5)
        assert by_a or by_b  # both workers took from the head of one queue
        assert {batch for _, batch in by_b} <= {batch_a}
        assert {batch for _, batch in by_a} <= {batch_b}
        assert len(set(by_b)) == len(by_b)  # each refusal said once
        assert len(set(by_a)) == len(by_a)
        for env, batch_id, refused in ((a.env, batch_a, by_b), (b.env, batch_b, by_a)):
            states = item_states(env, batch_id)
            pending = {item for item, (state, _) in states.items() if state != "done"}
            assert pending == {item for item, _ in refused}
            assert all(states[item] == ("pending", 0) for item in pending)  # never claimed
            assert all(attempts == 1 for state, attempts in states.values() if state == "done")
        assert set(captured(a.env)) <= set(urls_a)
        assert set(captured(b.env)) <= set(urls_b)
        assert set(pages.hits().values()) <= {1}

        # The remedy: B's database gets a queue of its own; --resume queues what was refused.
        b.kill_worker(worker_b)
        b.env["SNAP_QUEUE"] = own_queue
        b.start_worker("--concurrency", "1")
        assert a.json("jobs", "--resume", batch_a)["requeued"] == len(by_b)
        assert b.json("jobs", "--resume", batch_b)["requeued"] == len(by_a)
        for snap, batch_id in ((a, batch_a), (b, batch_b)):
            finished = snap.run("jobs", "--wait", "--json", batch_id, timeout=180)
            assert finished.returncode == 0, finished.stdout + finished.stderr
        assert captured(a.env) == sorted(urls_a)  # each page once, in its own database only
        assert captured(b.env) == sorted(urls_b)
        assert pages.hits() == dict.fromkeys(paths_a + paths_b, 1)
        assert refused_in(log_a) == by_a  # nothing foreign reached A once B had its own queue
    finally:
        a.stop_all()
        b.stop_all()
