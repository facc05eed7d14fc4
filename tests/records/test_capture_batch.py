"""Batch capture (``snap fetch TARGET...``, ``--from FILE``): the same blobs and records as
captures made one by one; a failed target is reported on its own line and costs the others
nothing; and wherever a batch is interrupted, no capture is recorded without its blobs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

import records.capture as capture_module
import snapshotter.fetch as fetch_module
import snapshotter.store.batch as batch_module
from records.attest.log_checks import verify_log
from records.capture import capture_source, capture_sources
from records.models import Capture, Extraction
from records.repository import record_capture_batch
from records.workspace import Workspace
from snapshotter.capture import RenderedText
from snapshotter.errors import IntegrityError
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend


def page(n: int) -> bytes:
    words = " ".join(f"word{(n * 7 + i) % 23}" for i in range(80))
    return f"<html><body><main><h1>Page {n}</h1><p>{words}.</p></main></body></html>".encode()


def serve(server: LoopbackServer, count: int) -> list[str]:
    """``count`` pages, the last two with the same body (one snapshot, two captures)."""
    urls = []
    for n in range(count):
        server.route(f"/p{n}", body=page(min(n, count - 2)))
        urls.append(server.url(f"/p{n}"))
    return urls


def serve_large(server: LoopbackServer, count: int) -> list[str]:
    """``count`` pages each over ``SPOOL_BYTES``: a body fetched ahead waits in a file."""
    urls = []
    for n in range(count):
        large = page(n).replace(b"</p>", b" filler" * (fetch_module.SPOOL_BYTES // 6) + b"</p>")
        server.route(f"/large{n}", body=large)
        urls.append(server.url(f"/large{n}"))
    return urls


def stored_blobs(workspace: Workspace, kinds: tuple[str, ...] = ("raw", "text")) -> set[str]:
    return {f"{kind}:{digest}" for kind, digest in workspace.store.iterate() if kind in kinds}


def captures(workspace: Workspace) -> list[Capture]:
    with workspace.db.reading() as session:
        return list(session.scalars(select(Capture).order_by(Capture.id)))


def columns(capture: Capture) -> tuple[Any, ...]:
    """What a capture records that does not depend on when it was made."""
    manifest = (capture.provenance or {}).get("manifest") or {}
    return (
        capture.url,
        capture.final_url,
        capture.http_status,
        capture.outcome,
        capture.snapshot_id,
        capture.method,
        sorted(k for k in capture.provenance or {} if k not in ("fetchedAt", "ip", "port")),
        manifest.get("signature", {}).get("state"),
    )


def blobs_of(workspace: Workspace, capture: Capture) -> list[tuple[str, str]]:
    """Every blob a stored capture names (its manifest's list, and the manifest itself)."""
    named = capture.provenance["manifest"]
    document = json.loads(workspace.store.get("manifest", named["hash"]))
    return [("manifest", named["hash"])] + [
        (blob["kind"], blob["sha256"]) for blob in document["blobs"]
    ]


@pytest.mark.parametrize(("batch_size", "fetch_ahead"), [(1, None), (2, None), (100, None), (2, 0)])
def test_a_batch_stores_what_captures_one_by_one_store(
    backend: Backend, http_server: LoopbackServer, batch_size: int, fetch_ahead: int | None
) -> None:
    urls = serve(http_server, 5)
    with backend.opened() as workspace:
        batched = list(
            capture_sources(workspace, urls, batch_size=batch_size, fetch_ahead=fetch_ahead)
        )
        assert [outcome.target for outcome in batched] == urls
        assert all(outcome.record is not None for outcome in batched)
        after_batch = stored_blobs(workspace)
        first = captures(workspace)
        singly = [capture_source(workspace, url) for url in urls]
        second = captures(workspace)[len(first) :]
        # The same content: no raw or text blob the batch did not already store.
        assert stored_blobs(workspace) == after_batch
        assert [o.record.snapshot_id for o in batched if o.record] == [
            r.snapshot_id for r in singly
        ]
        assert [o.record.text_hash for o in batched if o.record] == [r.text_hash for r in singly]
        assert [columns(c) for c in first] == [columns(c) for c in second]
        assert [len(blobs_of(workspace, c)) for c in first] == [
            len(blobs_of(workspace, c)) for c in second
        ]
        for capture in first:
            for kind, digest in blobs_of(workspace, capture):
                workspace.store.get(kind, digest)  # present, and re-hashed on read
        with workspace.db.reading() as session:
            extractions = session.scalars(select(Extraction)).all()
        assert len(extractions) == len(set(urls[:-1]))  # the last two share one snapshot
        assert verify_log(workspace).ok


def test_a_failed_target_is_reported_on_its_line_and_costs_the_others_nothing(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    urls = serve(http_server, 3)
    http_server.route("/gone", status=404, body=b"not here")
    targets = [
        urls[0],
        http_server.url("/gone"),
        str(tmp_path / "no-such-file.html"),
        urls[1],
        "http://127.0.0.1:1/refused",
        urls[2],
    ]
    listing = tmp_path / "targets.txt"
    listing.write_text("# one a line\n\n" + "\n".join(targets) + "\n")
    result = backend.snap("fetch", "--from", str(listing), "--batch-size", "4")
    lines = result.stdout.splitlines()
    assert [line.split(" ", 2)[1].rstrip(":") for line in lines] == targets
    assert [line.split(" ", 1)[0] for line in lines] == [
        "stored",
        "failed",
        "failed",
        "stored",
        "failed",
        "stored",
    ]
    assert "HTTP 404" in lines[1]
    assert "no such file" in lines[2]
    assert result.returncode == 2  # the worst: a target that is no capture (a missing file)
    with backend.opened() as workspace:
        recorded = captures(workspace)
        by_url = {capture.url: capture for capture in recorded}
        assert [by_url[url].outcome for url in urls] == ["stored"] * 3
        assert by_url[http_server.url("/gone")].outcome == "failed"
        assert by_url["http://127.0.0.1:1/refused"].outcome == "failed"
        assert len(recorded) == 5  # the missing file never became a capture attempt
        for url in urls:
            for kind, digest in blobs_of(workspace, by_url[url]):
                workspace.store.get(kind, digest)
        assert verify_log(workspace).ok


def test_a_list_s_comments_and_repeats_are_dropped(tmp_path: Path) -> None:
    """A ``#`` after a space or tab on a URL's line is a comment (a browser would fetch the URL
    with ``%20`` and the comment as its fragment: another page); a path's line is taken whole,
    since a file name may hold " #"; a target listed twice is captured once."""
    listing = tmp_path / "targets.txt"
    listing.write_text(
        "# a comment line\n"
        "http://127.0.0.1:9/a # the first page\n"
        "http://127.0.0.1:9/b\t#tabbed #twice\n"
        "http://127.0.0.1:9/c#fragment\n"
        "  http://127.0.0.1:9/a  \n"
        "/tmp/notes #2.txt\n"
    )
    assert capture_module.read_targets(listing) == [
        "http://127.0.0.1:9/a",
        "http://127.0.0.1:9/b",
        "http://127.0.0.1:9/c#fragment",
        "/tmp/notes #2.txt",
    ]


def test_a_target_given_twice_is_captured_once(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    (url,) = [http_server.url("/once")]
    http_server.route("/once", body=page(1))
    listing = tmp_path / "targets.txt"
    listing.write_text(f"{url}\n")
    result = backend.snap("fetch", url, url, "--from", str(listing))
    assert result.returncode == 0, result.stderr
    assert [line.split(" ", 2)[:2] for line in result.stdout.splitlines()] == [["stored", url]]
    assert http_server.paths().count("/once") == 1


def test_a_target_s_line_shows_it_cut_short_and_escaped(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    """A target is printed as a reason is: a control character escaped, so a name cannot
    recolour the terminal or forge a line, and a very long one cut in the middle."""
    http_server.route("/page", body=page(1))
    hostile = str(tmp_path / "a\x1b]0;title\x07b")
    long = str(tmp_path / ("x" * 5000))
    listing = tmp_path / "targets.txt"
    listing.write_text(f"{hostile}\n{long}\n{http_server.url('/page')}\n")
    result = backend.snap("fetch", "--from", str(listing))
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"failed {tmp_path}/a\\x1b]0;title\\x07b: no such file")
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout
    assert lines[1].startswith(f"failed {tmp_path}/")
    assert "characters]…" in lines[1]
    assert len(lines[1]) < 1000
    assert lines[2].startswith(f"stored {http_server.url('/page')} sha256:")


def test_json_lines_give_each_target_its_record_or_its_error(
    backend: Backend, http_server: LoopbackServer
) -> None:
    urls = serve(http_server, 2)
    result = backend.snap("fetch", "--json", urls[0], "http://127.0.0.1:1/x", urls[1])
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert [d.get("url") or d.get("target") for d in documents] == [
        urls[0],
        "http://127.0.0.1:1/x",
        urls[1],
    ]
    assert documents[1]["error"]["type"] == "FetchError"
    assert documents[1]["error"]["exitCode"] == result.returncode == 1
    assert documents[0]["snapshotId"].startswith("sha256:")


@pytest.mark.parametrize(("host_concurrency", "in_flight"), [(None, 2), ("1", 1), ("8", 2)])
def test_fetches_run_ahead_of_the_rest_at_most_host_concurrency_at_once(
    backend: Backend,
    http_server: LoopbackServer,
    monkeypatch: pytest.MonkeyPatch,
    host_concurrency: str | None,
    in_flight: int,
) -> None:
    """While one target is extracted and stored, the next ones are fetched, never more than
    ``SNAP_HOST_CONCURRENCY`` (default 2) nor ``FETCH_THREADS`` at once, and never by a
    thread of their own."""
    if host_concurrency is not None:
        backend.env["SNAP_HOST_CONCURRENCY"] = host_concurrency
    urls = serve(http_server, 7)
    for n in range(7):
        http_server.route(f"/p{n}", body=page(n), delay=0.05)
    real_fetch = fetch_module.fetch
    lock = threading.Lock()
    running, most, threads = [0], [0], set()

    def fetch(*args: Any, **kwargs: Any) -> Any:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            threads.add(threading.current_thread().name)
        try:
            return real_fetch(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(fetch_module, "fetch", fetch)
    with backend.opened() as workspace:
        outcomes = list(capture_sources(workspace, urls, batch_size=3))
    assert [outcome.target for outcome in outcomes] == urls
    assert all(outcome.record for outcome in outcomes)
    assert most[0] == in_flight
    assert capture_module.FETCH_THREADS == 2
    assert len(threads) <= capture_module.FETCH_THREADS


def test_a_fetch_in_its_turn_waits_for_a_request_in_flight_to_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A target left for its turn (``AHEAD_BYTES``) is fetched by the capturing thread as one of
    the batch's requests in flight: with one allowed, it starts only once the fetch ahead ended."""
    ahead_started, in_turn_started = threading.Event(), threading.Event()
    lock = threading.Lock()
    running, most = [0], [0]

    def fetch(target: str, options: Any, *, web_only: bool) -> Any:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        if target == "/none/ahead":
            ahead_started.set()
            in_turn_started.wait(timeout=0.5)  # ends at once if the fetch in turn did not wait
        else:
            in_turn_started.set()
        with lock:
            running[0] -= 1
        return FAKE_FETCHED

    monkeypatch.setattr(fetch_module, "fetch", fetch)
    fetches = capture_module._Fetches(in_flight=1)
    options: Any = None
    ahead = threading.Thread(
        target=fetches.fetch_ahead, args=("/none/ahead", options), kwargs={"web_only": False}
    )
    ahead.start()
    assert ahead_started.wait(timeout=5)
    assert fetches.fetch_in_turn("/none/in-turn", options, web_only=False) is FAKE_FETCHED
    ahead.join()
    assert most[0] == 1


def test_fetches_go_on_while_a_batch_is_recorded(
    backend: Backend, http_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's flush and record take the capturing thread for tens of milliseconds; the
    fetch threads spend them on the next batch's targets, not only the two in flight."""
    urls = serve(http_server, 12)
    real_fetch, real_record = fetch_module.fetch, capture_module._record_batch
    fetched = threading.Semaphore(0)
    fetched_before_recording: list[int] = []

    def fetch(*args: Any, **kwargs: Any) -> Any:
        try:
            return real_fetch(*args, **kwargs)
        finally:
            fetched.release()

    def record_batch(*args: Any, **kwargs: Any) -> Any:
        if not fetched_before_recording:  # the first batch: targets 0 and 1
            waited = 0
            while waited < 8 and fetched.acquire(timeout=5):
                waited += 1
            fetched_before_recording.append(waited)
        return real_record(*args, **kwargs)

    monkeypatch.setattr(fetch_module, "fetch", fetch)
    monkeypatch.setattr(capture_module, "_record_batch", record_batch)
    with backend.opened() as workspace:
        outcomes = list(capture_sources(workspace, urls, batch_size=2))
    assert all(outcome.record for outcome in outcomes)
    assert fetched_before_recording == [8]  # targets 0-7 fetched before the first is recorded


def each_batch_s_fetches(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every ``_Fetches`` a batch capture makes from now on, to read its count of waiting bytes
    once the capture is over."""
    made: list[Any] = []

    class Fetches(capture_module._Fetches):
        def __init__(self, in_flight: int) -> None:
            super().__init__(in_flight)
            made.append(self)

    monkeypatch.setattr(capture_module, "_Fetches", Fetches)
    return made


def test_large_bodies_wait_ahead_only_up_to_a_budget(
    backend: Backend, http_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body over ``SPOOL_BYTES`` waits for its turn in a temporary file: once
    ``AHEAD_BYTES`` of them wait, the queued targets are fetched in their turn instead, by the
    capturing thread, and captured all the same."""
    urls = serve_large(http_server, 8)
    monkeypatch.setattr(capture_module, "AHEAD_BYTES", 1)
    real_fetch, real_ahead = fetch_module.fetch, capture_module._Fetches.fetch_ahead
    real_extract = capture_module.extract_and_store
    answered = threading.Semaphore(0)
    fetched_by: list[str] = []
    extracted: list[bool] = []

    def fetch(*args: Any, **kwargs: Any) -> Any:
        fetched_by.append(threading.current_thread().name)
        return real_fetch(*args, **kwargs)

    def fetch_ahead(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return real_ahead(self, *args, **kwargs)
        finally:
            answered.release()

    def extract_and_store(*args: Any, **kwargs: Any) -> Any:
        if not extracted:  # the first page waits until every queued target's fetch answered
            for _ in urls:
                assert answered.acquire(timeout=10)
        extracted.append(True)
        return real_extract(*args, **kwargs)

    monkeypatch.setattr(fetch_module, "fetch", fetch)
    monkeypatch.setattr(capture_module._Fetches, "fetch_ahead", fetch_ahead)
    batches = each_batch_s_fetches(monkeypatch)
    monkeypatch.setattr(capture_module, "extract_and_store", extract_and_store)
    with backend.opened() as workspace:
        outcomes = list(capture_sources(workspace, urls, batch_size=4))
    assert [bool(outcome.record) for outcome in outcomes] == [True] * len(urls)
    assert [fetches._bytes for fetches in batches] == [0]  # each body done with after its turn
    ahead = [name for name in fetched_by if name.startswith("snap-fetch-ahead")]
    assert 1 <= len(ahead) <= capture_module.FETCH_THREADS  # started before any body waited
    assert len(fetched_by) == len(urls)  # the others once each, in their turn


def test_each_body_fetched_ahead_is_done_with_once(
    backend: Backend, http_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every large body is counted while it waits and uncounted once, when its turn is over:
    closing the batch after the last capture leaves the count at 0, not below."""
    urls = serve_large(http_server, 3)
    batches = each_batch_s_fetches(monkeypatch)
    with backend.opened() as workspace:
        outcomes = list(capture_sources(workspace, urls, batch_size=2))
    assert [bool(outcome.record) for outcome in outcomes] == [True] * len(urls)
    assert [fetches._bytes for fetches in batches] == [0]


def test_bodies_on_disk_count_against_the_budget_until_done_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(capture_module, "AHEAD_BYTES", 100)
    sizes = iter([(60, True), (500, False), (60, True), (10, True)])

    def fetch(target: str, options: Any, *, web_only: bool) -> Any:
        size, on_disk = next(sizes)
        return dataclasses.replace(FAKE_FETCHED, file=Path(target) if on_disk else None, size=size)

    monkeypatch.setattr(fetch_module, "fetch", fetch)
    fetches = capture_module._Fetches(in_flight=2)
    options: Any = None

    def ahead(target: str) -> Any:
        return fetches.fetch_ahead(target, options, web_only=False)

    first, in_memory, third = ahead("/none/a"), ahead("/none/b"), ahead("/none/c")
    assert None not in (first, in_memory, third)  # 0, 60 and 60 bytes waited before each
    assert ahead("/none/d") is None  # 120: left for its turn
    fetches.done_with(first)
    fetches.done_with(in_memory)  # held in memory: it never counted
    assert ahead("/none/d") is not None  # 60


FAKE_FETCHED = fetch_module.Fetched(
    file=None,
    raw_digest="sha256:" + "0" * 64,
    size=0,
    url="http://127.0.0.1/",
    final_url="http://127.0.0.1/",
    status=200,
    declared_content_type="text/html",
)


class BodiesFetched:
    """``snapshotter.fetch.fetch`` that keeps each body's file (a body held in memory is written
    to one, as a large body is) and counts the fetches still running."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.real_fetch = fetch_module.fetch
        self.bodies: list[Path] = []
        self.running = 0
        self.lock = threading.Lock()
        monkeypatch.setattr(fetch_module, "fetch", self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            self.running += 1
        try:
            fetched = self.real_fetch(*args, **kwargs)
            self.bodies.append(fetched.path)
            return fetched
        finally:
            with self.lock:
                self.running -= 1

    def left_behind(self) -> list[Path]:
        """The bodies still on disk once every fetch ended and cleaned up (a fetch still running
        when the batch ended deletes its body when done)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (
            self.running or any(body.exists() for body in self.bodies)
        ):
            time.sleep(0.01)
        return [body for body in self.bodies if body.exists()]


def test_an_interrupted_batch_leaves_no_body_of_a_fetch_made_ahead(
    backend: Backend, http_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    urls = serve(http_server, 6)
    fetched = BodiesFetched(monkeypatch)

    def extract_and_store(fetched: Any, store: Any) -> Any:
        raise Crash

    monkeypatch.setattr(capture_module, "extract_and_store", extract_and_store)
    with backend.opened() as workspace, pytest.raises(Crash):
        list(capture_sources(workspace, urls, batch_size=4))
    assert fetched.left_behind() == []
    assert fetched.bodies


def test_a_batch_interrupted_before_a_target_s_turn_leaves_no_body_of_its_fetch(
    backend: Backend, http_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target handed out for its turn whose capture never began (interrupted in between)
    owns a body fetched ahead: closing the batch deletes it, as for the targets still queued."""
    urls = serve(http_server, 6)
    fetched = BodiesFetched(monkeypatch)
    real_attempt = capture_module._attempt
    attempts: list[str] = []
    third_body: list[Path] = []

    def attempt(workspace: Any, store: Any, attestor: Any, planned: Any) -> Any:
        attempts.append(planned.target)
        if len(attempts) == 3:  # handed out, its body fetched ahead, and its capture not begun
            future, _ = planned.fetching
            third_body.append(future.result(timeout=10).path)
            raise Crash
        return real_attempt(workspace, store, attestor, planned)

    monkeypatch.setattr(capture_module, "_attempt", attempt)
    with backend.opened() as workspace, pytest.raises(Crash):
        list(capture_sources(workspace, urls, batch_size=4))
    assert fetched.left_behind() == []
    assert attempts == urls[:3]
    assert third_body[0] in fetched.bodies


class Crash(BaseException):
    """The process dying at this point (not an error anything may catch)."""


CRASH_POINTS = [
    "writing the third page",
    "before the files are durable",
    "before the links are durable",
    "in the recording transaction",
]


def crash_at(point: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if point == "writing the third page":
        real_put = batch_module.FolderBatch.put
        calls = {"n": 0}

        def put(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 9:
                raise Crash
            return real_put(self, *args, **kwargs)

        monkeypatch.setattr(batch_module.FolderBatch, "put", put)
    elif point == "before the files are durable":
        monkeypatch.setattr(batch_module, "_durability", lambda _root: CrashingDurability(0))
    elif point == "before the links are durable":
        monkeypatch.setattr(batch_module, "_durability", lambda _root: CrashingDurability(1))
    else:

        def record(*_args: Any, **_kwargs: Any) -> Any:
            raise Crash

        monkeypatch.setattr(capture_module, "record_capture_batch", record)


class CrashingDurability:
    def __init__(self, crash_on: int) -> None:
        self.calls = 0
        self.crash_on = crash_on
        self.inner = batch_module._EachFsync()

    def files(self, paths: list[Path]) -> None:
        self._step()
        self.inner.files(paths)

    def folders(self, paths: list[Path]) -> None:
        self._step()
        self.inner.folders(paths)

    def _step(self) -> None:
        self.calls += 1
        if self.calls > self.crash_on:
            raise Crash


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_a_batch_cut_short_records_nothing_without_its_durable_blobs(
    backend: Backend, http_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    if backend.name != "embedded" and point != "in the recording transaction":
        pytest.skip("S3 puts are durable when answered: nothing is deferred to a flush")
    urls = serve(http_server, 6)
    with backend.opened() as workspace:
        done = list(capture_sources(workspace, urls[:2], batch_size=2))  # one whole batch
        assert all(outcome.record for outcome in done)
        crash_at(point, monkeypatch)
        with pytest.raises(Crash):
            list(capture_sources(workspace, urls[2:], batch_size=4))
        monkeypatch.undo()
        recorded = captures(workspace)
        assert [c.url for c in recorded] == urls[:2]  # the cut batch recorded nothing
        for capture in recorded:
            for kind, digest in blobs_of(workspace, capture):
                workspace.store.get(kind, digest)
        if backend.name == "embedded":  # no file at a content address that is not whole
            for kind, digest in workspace.store.iterate():
                try:
                    workspace.store.get(kind, digest)
                except IntegrityError:  # pragma: no cover - the failure this test is for
                    pytest.fail(f"{kind} {digest} is at its address but not whole")
        # The same pages captured again, whole: nothing left behind is in the way.
        again = list(capture_sources(workspace, urls[2:], batch_size=4))
        assert all(outcome.record for outcome in again)
        assert verify_log(workspace).ok


def test_blobs_are_durable_before_the_batch_is_recorded(
    backend: Backend, http_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend.name != "embedded":
        pytest.skip("the folder store's deferred durability")
    urls = serve(http_server, 3)
    events: list[str] = []
    real = batch_module._durability

    class Watched:
        def __init__(self, root: Path) -> None:
            self.inner = real(root)

        def files(self, paths: list[Path]) -> None:
            self.inner.files(paths)
            events.append(f"files durable: {len(paths)}")

        def folders(self, paths: list[Path]) -> None:
            self.inner.folders(paths)
            events.append("folders durable")

    real_record = capture_module.record_capture_batch

    def record(*args: Any, **kwargs: Any) -> Any:
        events.append("recorded")
        return real_record(*args, **kwargs)

    monkeypatch.setattr(batch_module, "_durability", Watched)
    monkeypatch.setattr(capture_module, "record_capture_batch", record)
    with backend.opened() as workspace:
        list(capture_sources(workspace, urls, batch_size=10))
    # Three pages, two with the same body: 2 raw, 2 text, 3 headers and 3 manifests.
    assert events == ["files durable: 10", "folders durable", "recorded"]


def test_a_browser_capture_in_a_batch_records_both_of_its_texts(
    backend: Backend, http_server: LoopbackServer
) -> None:
    """A rendered text has columns the raw one has not (code spans): one statement takes
    both, each column it leaves out at its default."""
    urls = serve(http_server, 3)
    with backend.opened() as workspace:
        (outcome,) = capture_sources(workspace, urls[:1])
        assert outcome.record is not None
        text = b"Page 0 as the browser rendered it."
        digest = "sha256:" + hashlib.sha256(text).hexdigest()
        blob = workspace.store.put("text", digest, text, tags={"kind": "text"})
        rendered = RenderedText(
            extractor="browser-innertext/test",
            decoding="browser=test",
            content_type="text/plain",
            text_hash=digest,
            norm_hash=digest,
            text_size=len(text),
            text_blob=blob,
        )
        records = [
            dataclasses.replace(outcome.record, url=url, rendered=rendered) for url in urls[1:]
        ]
        with workspace.db.session() as session:
            recorded = record_capture_batch(session, records)
        assert all(isinstance(row, Capture) for row in recorded)
        with workspace.db.reading() as session:
            rows = session.scalars(select(Extraction).order_by(Extraction.id)).all()
            sources = sorted((row.source, row.code_hash is None) for row in rows)
        assert sources == [("raw", outcome.record.code_hash is None), ("rendered", True)]
        assert verify_log(workspace).ok
