"""Concurrent ``fetch=true`` requests for one URL never captured share one capture.

Over real HTTP: ``snap serve`` as a uvicorn process on loopback, and a slow loopback origin
that records every request. And ``SingleFlight`` itself, with threads and events.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from snap.service.flights import SingleFlight
from tests.db_support import ready_home
from tests.http_fixtures import LoopbackServer
from tests.service.conftest import EXAMPLES
from tests.service.server import Answer, Served, service_env

PAGE = (EXAMPLES / "cdn-caching.html").read_bytes()
QUOTE = "the origin serves only 1 request in 10"
SLOW = 0.5  # seconds the origin takes to answer: the four requests overlap it
REQUESTS = 4


@pytest.fixture
def served(tmp_path: Path, sqlite_template: Path) -> Iterator[Served]:
    home = ready_home(tmp_path / "home", sqlite_template)
    server = Served(service_env({"SNAP_HOME": str(home)}), "--allow-private")
    yield server
    if server.process.poll() is None:
        server.stop()


def at_once(count: int, call: Callable[[], Answer]) -> list[Answer]:
    """``count`` calls of ``call``, each in its own thread, released together."""
    start = threading.Barrier(count)

    def released() -> Answer:
        start.wait()
        return call()

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda _: released(), range(count)))


def verify_fetching(served: Served, url: str) -> Answer:
    return served.call("POST", "/v1/verify?fetch=true", {"url": url, "quote": QUOTE})


def captures_of(served: Served, url: str) -> list[dict[str, Any]]:
    audited = served.call("GET", f"/v1/audit?url={quote(url, safe='')}")
    assert audited.status == 200, audited.body
    captures: list[dict[str, Any]] = audited.json()["captures"]
    return captures


def only_result(answer: Answer) -> dict[str, Any]:
    assert answer.status == 200, answer.body
    [result] = answer.json()["results"]
    return dict(result)


def test_four_requests_for_one_missing_url_share_one_capture(
    served: Served, http_server: LoopbackServer
) -> None:
    http_server.route("/slow", body=PAGE, delay=SLOW)
    url = http_server.url("/slow")
    results = [only_result(a) for a in at_once(REQUESTS, lambda: verify_fetching(served, url))]
    assert http_server.paths() == ["/slow"]  # the origin was asked once
    assert [r["status"] for r in results] == ["quote_found"] * REQUESTS
    [capture] = captures_of(served, url)
    assert capture["outcome"] == "stored"
    assert {r["snapshotId"] for r in results} == {capture["snapshotId"]}


def test_the_waiters_get_the_failure_and_the_next_request_tries_again(
    served: Served, http_server: LoopbackServer
) -> None:
    http_server.route("/busy", body=b"busy", content_type="text/plain", status=503, delay=SLOW)
    url = http_server.url("/busy")
    results = [only_result(a) for a in at_once(REQUESTS, lambda: verify_fetching(served, url))]
    assert http_server.paths() == ["/busy"]
    assert {r["status"] for r in results} == {"unknown_snapshot"}
    [reason] = {r["reason"] for r in results}  # one capture's failure, told to all four
    assert reason.startswith(f"could not capture {url}: HTTP 503")
    [failed] = captures_of(served, url)
    assert failed["outcome"] != "stored"
    http_server.route("/busy", body=PAGE)  # the origin is back
    assert only_result(verify_fetching(served, url))["status"] == "quote_found"
    assert http_server.paths() == ["/busy", "/busy"]  # a failure is not remembered
    assert [c["outcome"] == "stored" for c in captures_of(served, url)].count(True) == 1


# --- SingleFlight ---------------------------------------------------------------------------


def started(count: int, target: Callable[[], None]) -> list[threading.Thread]:
    threads = [threading.Thread(target=target) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads


def test_calls_while_one_runs_share_its_run_and_a_later_call_runs_again() -> None:
    flights = SingleFlight()
    release = threading.Event()
    runs: list[str] = []

    def work() -> None:
        runs.append("run")
        release.wait(10)

    leader = started(1, lambda: flights.run("k", work))
    while not runs:
        time.sleep(0.01)
    waiters = started(3, lambda: flights.run("k", work))
    time.sleep(0.3)  # the three are waiting on the leader's run
    assert flights.running() == 1
    release.set()
    for thread in leader + waiters:
        thread.join(10)
    assert runs == ["run"]
    assert flights.running() == 0
    flights.run("k", work)  # over: the next call runs the work itself
    flights.run("other", work)
    assert runs == ["run"] * 3


def test_the_waiters_raise_the_runs_error_and_it_is_not_remembered() -> None:
    flights = SingleFlight()
    release = threading.Event()
    failure = RuntimeError("the origin is down")
    errors: list[BaseException] = []
    runs: list[str] = []

    def failing() -> None:
        runs.append("run")
        release.wait(10)
        raise failure

    def call() -> None:
        try:
            flights.run("k", failing)
        except RuntimeError as error:
            errors.append(error)

    threads = started(1, call)
    time.sleep(0.1)
    threads += started(3, call)
    time.sleep(0.3)
    release.set()
    for thread in threads:
        thread.join(10)
    assert errors == [failure] * 4
    assert runs == ["run"]
    assert flights.running() == 0
    flights.run("k", lambda: None)  # the next call runs, and succeeds
