"""Batches with and without a broker: in-process runs, retries, failures, politeness, and a
lost message found by ``snap jobs --resume``."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from snap.config import Settings
from snap.errors import (
    AddressRefused,
    BrokerError,
    DatabaseError,
    ExtractionError,
    FetchError,
    InputError,
    IntegrityError,
    SnapError,
    StoreError,
    TooLarge,
    is_transient,
)
from tests.workers.conftest import Snap
from tests.workers.pages import PageServer


def url_file(tmp_path: Path, urls: list[str]) -> Path:
    path = tmp_path / "urls.txt"
    path.write_text("# captured by the test\n" + "\n".join(urls) + "\n\n")
    return path


def test_without_a_broker_the_batch_runs_in_process(
    snap_embedded: Snap, pages: PageServer, tmp_path: Path
) -> None:
    urls = [pages.url(f"/page/{n}") for n in range(5)] + [pages.url("/gone/1")]
    done = snap_embedded.run("fetch", "--enqueue", str(url_file(tmp_path, urls)), "--json")
    assert done.stderr.splitlines() == [
        "snap: no broker configured (SNAP_BROKER_URL): running the batch in this process"
    ]
    assert done.returncode == 1  # one URL failed
    progress = snap_embedded.json("jobs", "--json")["batches"][0]
    assert (progress["done"], progress["failed"], progress["pending"]) == (5, 1, 0)
    assert progress["failures"][0]["errorKind"] == "permanent"  # a 404: not tried again
    assert progress["failures"][0]["attempts"] == 1
    assert pages.hits()["/gone/1"] == 1
    shown = snap_embedded.run("jobs", progress["batchId"][:8])
    assert shown.returncode == 1
    assert "done 5  failed 1" in shown.stdout
    assert "HTTP 404" in shown.stdout


def test_in_process_reverify_and_reextract_batches(
    snap_embedded: Snap, pages: PageServer, tmp_path: Path
) -> None:
    url = pages.url("/page/7")
    assert snap_embedded.run("fetch", url).returncode == 0
    citation = tmp_path / "c.json"
    citation.write_text(
        f'{{"citationId": "c-7", "url": "{url}", "quote": "measured value of 7003 units"}}'
    )
    assert snap_embedded.run("verify", str(citation)).returncode == 0
    reverified = snap_embedded.run("reverify", "--enqueue", "--json")
    assert reverified.returncode == 0, reverified.stderr
    assert '"done": 1' in reverified.stdout
    reextracted = snap_embedded.run("reextract", "--enqueue", "--json")
    assert reextracted.returncode == 0, reextracted.stderr
    refused = snap_embedded.run("reverify", "--enqueue", "--refetch")
    assert refused.returncode == 2
    assert refused.stderr.startswith("snap: error: --enqueue cannot be combined")


def test_bad_inputs_are_one_line(snap_embedded: Snap, tmp_path: Path) -> None:
    bad = url_file(tmp_path, ["http://127.0.0.1:1/a", "file:///etc/passwd"])
    done = snap_embedded.run("fetch", "--enqueue", str(bad))
    assert done.returncode == 2
    assert done.stderr == f"snap: error: {bad}:3: not an http(s) URL: 'file:///etc/passwd'\n"
    worker = snap_embedded.run("worker")
    assert worker.returncode == 2
    assert "snap worker needs a broker" in worker.stderr
    wrong = snap_embedded.env | {"SNAP_BROKER_URL": "http://127.0.0.1:6379"}
    done = Snap(wrong).run("jobs")
    assert done.returncode == 2
    assert "SNAP_BROKER_URL must be a redis://" in done.stderr
    assert snap_embedded.run("jobs", "0123456789").returncode == 3  # no database yet


def test_settings_bounds() -> None:
    env = {"SNAP_HOME": "/tmp/x", "SNAP_HOST_DELAY": "-1"}
    with pytest.raises(Exception, match="SNAP_HOST_DELAY"):
        Settings.from_env(env)
    assert Settings.from_env({"SNAP_HOME": "/tmp/x"}).broker_url is None


def test_a_broker_that_cannot_be_reached_loses_nothing(
    snap_embedded: Snap, pages: PageServer, tmp_path: Path
) -> None:
    """Port 1 on loopback refuses: one line, exit 3, and the batch is recorded for --resume."""
    snap = Snap(snap_embedded.env | {"SNAP_BROKER_URL": "redis://127.0.0.1:1/0"})
    done = snap.run("fetch", "--enqueue", str(url_file(tmp_path, [pages.url("/page/1")])))
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("snap: error: the broker at redis://127.0.0.1:1")
    assert len(done.stderr.splitlines()) == 1
    assert snap_embedded.json("jobs")["batches"][0]["pending"] == 1


@pytest.mark.postgres
def test_transient_failures_are_retried_permanent_ones_are_not(
    snap_pg: Snap, pages: PageServer, tmp_path: Path
) -> None:
    snap_pg.env["SNAP_TASK_RETRIES"] = "3"
    urls = [pages.url("/flaky/1/2"), pages.url("/gone/2"), pages.url("/flaky/3/9")]
    queued = snap_pg.json("fetch", "--enqueue", str(url_file(tmp_path, urls)))
    snap_pg.start_worker("--concurrency", "2")
    progress = snap_pg.wait_until(queued["batchId"], 3, timeout=120)
    hits = pages.hits()
    assert hits["/flaky/1/2"] == 3  # two 503s, then stored
    assert hits["/gone/2"] == 1  # a 404 is permanent
    assert hits["/flaky/3/9"] == 4  # 1 try + 3 retries, all 503
    assert (progress["done"], progress["failed"], progress["failedTransient"]) == (1, 2, 1)
    kinds = {f["key"]: (f["errorKind"], f["attempts"]) for f in progress["failures"]}
    assert kinds == {urls[1]: ("permanent", 1), urls[2]: ("transient", 4)}


@pytest.mark.postgres
def test_resume_requeues_a_lost_message(snap_pg: Snap, pages: PageServer, tmp_path: Path) -> None:
    """The queue is purged before any worker runs: every message is lost. Nothing happens
    until ``snap jobs --resume`` finds the items pending in the database."""
    from snap.workers.app import configure

    urls = [pages.url(f"/page/{n}") for n in range(9)]
    urls.append(pages.url("/page/9?" + "long=" * 1000))  # a key too long for an index: hashed
    queued = snap_pg.json("fetch", "--enqueue", str(url_file(tmp_path, urls)))
    app = configure(Settings.from_env(snap_pg.env))
    assert app.control.purge() == 10
    snap_pg.start_worker("--concurrency", "2")
    stalled = snap_pg.wait_stalled(queued["batchId"], quiet=4)
    assert (stalled["pending"], stalled["done"]) == (10, 0)
    resumed = snap_pg.json("jobs", "--resume", queued["batchId"])
    assert resumed["requeued"] == 10
    finished = snap_pg.run("jobs", "--wait", queued["batchId"], timeout=120)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "done 10  failed 0" in finished.stdout
    assert sorted(pages.hits().values()) == [1] * 10
    audit = snap_pg.json("audit", "--url", urls[-1])
    assert audit["captures"][0]["url"] == urls[-1]
    again = snap_pg.json("jobs", "--resume", queued["batchId"])
    assert again["requeued"] == 0


@pytest.mark.postgres
def test_politeness_spaces_captures_of_one_host(
    snap_pg: Snap, pages: PageServer, tmp_path: Path
) -> None:
    """Two workers of two processes each, one host: at most one capture at a time, starts
    at least SNAP_HOST_DELAY apart."""
    snap_pg.env |= {"SNAP_HOST_DELAY": "0.3", "SNAP_HOST_CONCURRENCY": "1"}
    pages.delay = 0.05
    urls = [pages.url(f"/page/{n}") for n in range(8)]
    queued = snap_pg.json("fetch", "--enqueue", str(url_file(tmp_path, urls)))
    snap_pg.start_worker("--concurrency", "2")
    snap_pg.start_worker("--concurrency", "2")
    snap_pg.wait_until(queued["batchId"], 8, timeout=120)
    log = sorted(pages.log, key=lambda entry: entry[1])
    gaps = [b[1] - a[1] for a, b in itertools.pairwise(log)]
    # Starts are spaced by Redis's clock when a worker takes its turn; the page server notes
    # each request when it arrives, which a loaded machine can delay by tens of milliseconds.
    # Without politeness, four processes start within a few milliseconds of each other.
    assert min(gaps) >= 0.15, gaps
    overlaps = [b[1] < a[2] for a, b in itertools.pairwise(log)]
    assert not any(overlaps)


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (FetchError("network error: connection refused"), True),
        (FetchError("HTTP 503", status=503), True),
        (FetchError("HTTP 429", status=429), True),
        (FetchError("HTTP 404", status=404), False),
        (AddressRefused("refused: 10.0.0.1"), False),
        (TooLarge("too large"), False),
        (ExtractionError("undecodable"), False),
        (StoreError("store down"), True),
        (DatabaseError("database down"), True),
        (BrokerError("broker down"), True),
        (IntegrityError("k", "sha256:a", "sha256:b"), False),
        (InputError("bad"), False),
    ],
)
def test_only_transient_errors_are_retried(error: SnapError, transient: bool) -> None:
    assert is_transient(error) is transient


def test_without_a_broker_celery_and_redis_are_never_imported(
    tmp_path: Path, pages: PageServer
) -> None:
    """Start-up stays as it was: only commands that talk to a broker load Celery."""
    from tests.test_startup_imports import loaded, present

    listing = url_file(tmp_path, [pages.url("/page/1")])
    for args in (["--help"], ["fetch", "--enqueue", "--allow-private", str(listing)], ["jobs"]):
        done, modules = loaded(tmp_path, *args)
        assert done.returncode == 0, done.stderr
        assert present(modules, ("celery", "kombu", "redis", "billiard")) == [], args
