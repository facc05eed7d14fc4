"""Capturing a source and recording the attempt, stored or failed."""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.orm import Session

from records.errors import ExtractionConflict
from records.fetch_threads import DaemonThreads
from records.repository import (
    FailedAttempt,
    record_capture_batch,
    record_failed_capture,
    record_snapshot,
)
from records.workspace import Workspace
from snapshotter.capture import SnapshotRecord, capture, extract_and_store
from snapshotter.errors import CaptureError, ConfigError, InputError, SnapError, StoreError
from snapshotter.store import BlobStore
from snapshotter.weburl import InvalidURL, has_web_scheme, web_url

if TYPE_CHECKING:
    from records.attest.seal import Attestor
    from snapshotter.fetch import Fetched, FetchOptions


def capture_source(
    workspace: Workspace,
    target: str,
    *,
    claim: Callable[[Session, SnapshotRecord], bool] | None = None,
    web_only: bool = False,
    method: str | None = None,
) -> SnapshotRecord:
    """Fetch, extract and store ``target``, then record the capture and its snapshot.

    A capture that fails for any reason is recorded as a failed capture before the error is
    raised again: an auditor asking "what did snap see at that URL?" must see the failure too.
    Only input that never became a capture attempt (an empty target, a missing local file, a
    FIFO) is not recorded.  An unexpected error is recorded and raised as a CaptureError, so
    one bad source never ends a run with an internal error.

    ``claim`` (workers) runs in the transaction that records the capture; when it returns False
    (another delivery of the same task recorded it first) nothing is recorded: the blobs are
    content-addressed, so storing them twice changed nothing either.

    ``web_only`` (the HTTP service, model output, the workers): ``target`` must be an absolute
    http(s) URL with a host; a local path or ``file:`` URL is refused (InputError, exit 2).
    ``method`` (http, browser or auto; default ``SNAP_CAPTURE``) picks the HTTP path or the
    browser (``snapshotter.browser``); the record says which was used.
    """
    from records.attest.seal import attestor_of, seal  # cryptography: only commands that capture

    attestor = attestor_of(workspace)  # an unusable key or TSA setting is refused before fetching
    chosen = capture_method(workspace, target, method or workspace.settings.capture)
    try:
        if chosen == "browser":
            record = _capture_in_browser(workspace, target)
        else:
            record = capture(target, workspace.store, workspace.fetch_options, web_only=web_only)
    except (InputError, ConfigError):
        raise
    except CaptureError as error:
        _record_failure(workspace, target, error)
        raise
    except SnapError as error:  # the store failed: recorded, and still exit 3
        _record_failure(workspace, target, CaptureError(error.message, url=target))
        raise
    except Exception as error:
        summary = f"{type(error).__name__}: {error}"[:300]
        failure = CaptureError(f"could not capture {target[:300]}: {summary}", url=target)
        _record_failure(workspace, target, failure)
        raise failure from error
    record = seal(attestor, workspace.store, record)  # blob and TSA I/O: no transaction
    with workspace.db.session() as session:
        if claim is None or claim(session, record):
            record_snapshot(session, record)
    return record


def web_url_refusal(target: str, not_web: str) -> str | None:
    """Why ``target`` is not captured on behalf of model output, or None when it may be: only
    absolute http(s) URLs with a host, so a model naming a local path (or ``http:x.txt``)
    never makes snap read a file on this machine. ``not_web`` is the line for a target that
    is no http(s) URL at all."""
    if not has_web_scheme(target):
        return not_web
    try:
        web_url(target)
    except InvalidURL as error:
        return error.message
    return None


def capture_method(workspace: Workspace, target: str, asked: str) -> str:
    """``http`` or ``browser`` for ``asked``: auto is the browser when one is installed and the
    target is an http(s) URL, HTTP otherwise. An explicit browser capture that cannot be made
    (no Chromium, a local file) is refused before anything is fetched (exit 2)."""
    if asked == "http":
        return "http"
    from snapshotter.browser import BrowserUnavailable, browser_installed

    installed = browser_installed(workspace.browser_options)
    if asked == "auto":
        return "browser" if installed and has_web_scheme(target) else "http"
    if not installed:
        raise BrowserUnavailable(
            "a browser capture needs Chromium and Playwright: apt-get install chromium,"
            " or name the executable with SNAP_BROWSER"
        )
    if not has_web_scheme(target):
        raise InputError(
            "a browser capture takes an http(s) URL; capture a local file without --browser"
        )
    return "browser"


def _capture_in_browser(workspace: Workspace, target: str) -> SnapshotRecord:
    from snapshotter.browser import capture_in_browser

    return capture_in_browser(
        target,
        workspace.store,
        workspace.fetch_options,
        workspace.browser_options,
        workspace.browser_session,
    )


def _record_failure(workspace: Workspace, target: str, error: CaptureError) -> None:
    with workspace.db.session() as session:
        record_failed_capture(session, target, error)


BATCH_SIZE = 100  # captures stored and recorded together (snap fetch --batch-size)
# A comment after a URL on its line: a browser would send the space as %20 and take the rest for
# the URL's fragment, so without this the line would capture another page than the one meant.
_INLINE_COMMENT = re.compile(r"[ \t]+#.*\Z", re.DOTALL)
MAX_TARGET_LIST_BYTES = 64 * 2**20


def read_targets(path: Path) -> list[str]:
    """The targets of ``snap fetch --from FILE``: one URL or path a line, as TARGET is given;
    blank lines and ``#`` comments skipped, and on a URL's line a ``#`` after a space or tab
    starts a comment too (a path's line is taken whole: a file name may hold " #"); repeats
    dropped (each target captured once). A target that cannot be captured fails on its own
    line when its turn comes."""
    from records.inputs.reader import decode_text, read_input_bytes

    text = decode_text(read_input_bytes(path, MAX_TARGET_LIST_BYTES), str(path))
    targets: dict[str, None] = {}
    for line in text.split("\n"):
        target = line.strip(" \t\r")
        if has_web_scheme(target):
            target = _INLINE_COMMENT.sub("", target)
        if target and not target.startswith("#"):
            targets[target] = None
    if not targets:
        raise InputError(f"{path}: no target in the file")
    return list(targets)


@dataclass(frozen=True)
class CaptureOutcome:
    """One target of a batch capture: its record when stored, else the error that ended it
    (a CaptureError was recorded as a failed capture; an InputError or ConfigError was not: it
    never became a capture attempt; an ExtractionConflict was not recorded either)."""

    target: str
    record: SnapshotRecord | None = None
    error: SnapError | None = None
    failure: CaptureError | None = None  # what was recorded as the failed capture, if anything


def capture_sources(
    workspace: Workspace,
    targets: Iterable[str],
    *,
    batch_size: int = BATCH_SIZE,
    web_only: bool = False,
    method: str | None = None,
    fetch_ahead: int | None = None,
) -> Iterator[CaptureOutcome]:
    """``capture_source`` for many targets, a batch at a time; each batch's outcomes are
    yielded, in the targets' order, once the batch is recorded.

    The fetches run ahead of the rest: while this thread extracts, hashes, stores and seals a
    target, the next ``fetch_ahead`` targets (default ``FETCH_AHEAD``) are queued for the
    process's ``FETCH_THREADS`` fetch threads (made once, never a thread per page), so the
    network's waits overlap the CPU's work, a batch's flush and record included. At most
    ``SNAP_HOST_CONCURRENCY`` (and ``FETCH_THREADS``) requests are in flight at once; a fetch
    goes through the same guard and deadline as ``snap fetch URL``'s. 0: each target is
    fetched when its turn comes, in this thread.
    A batch writes its targets' blobs and manifests without waiting for each to be durable,
    makes them all durable at once (``snapshotter.store.batch``), and only then records the
    batch in one transaction, so no record is ever committed before its blobs are durable and
    no transaction is open across the network or the store. A failed target is recorded as
    failed and the batch goes on. Sealing is as ``capture_source``'s; with
    ``SNAP_TSA_PER=batch`` each batch ends with a checkpoint of the log, the one TSA request
    that stamps the batch's manifests.

    Raises StoreError (after recording the batch's captures as failed) when the store cannot
    make a batch durable, and DatabaseError when it cannot be recorded: a later batch would
    fail the same way."""
    from records.attest.checkpoints import checkpoint_if_grown
    from records.attest.seal import attestor_of

    attestor = attestor_of(workspace)  # an unusable key or TSA setting is refused first
    ahead = FETCH_AHEAD if fetch_ahead is None else max(fetch_ahead, 0)
    plans = _planned(workspace, iter(targets), web_only=web_only, method=method, ahead=ahead)
    with closing(plans):
        while (first := next(plans, None)) is not None:
            chunk = chain([first], islice(plans, max(batch_size, 1) - 1))
            yield from _capture_batch(workspace, attestor, chunk)
            if attestor.per_batch and attestor.tsa is not None:
                checkpoint_if_grown(workspace)


# Fetch threads of the process, for batch captures. Two is SNAP_HOST_CONCURRENCY's default; a
# batch keeps no more requests in flight than that setting allows (``_Fetches``), so a batch of one
# host's pages never has more requests open to it than the workers would.
FETCH_THREADS = 2

# Targets whose fetch is queued ahead of the one being captured. More than the threads, so they go
# on fetching while a batch is made durable and recorded (70-80 ms a batch of 100 on the 2-core
# development machine: eight fetches of 20 ms on two threads). Each fetched page waits for its
# turn with its body: in memory up to 256 KiB, in a temporary file beyond (see AHEAD_BYTES).
FETCH_AHEAD = 16

# Bytes of bodies fetched ahead that may wait on disk for their turn. Once they reach it, a fetch
# thread leaves its target to be fetched in its turn by the capturing thread, so a queue of large
# files holds at most this much on disk, and what the fetches already running bring, whatever
# SNAP_MAX_BYTES allows a body.
AHEAD_BYTES = 64 * 1024 * 1024


class _Fetches:
    """What one batch capture's fetches share: the requests in flight, at most ``in_flight``
    whichever thread makes them, and the bodies fetched ahead that wait on disk, in bytes."""

    def __init__(self, in_flight: int) -> None:
        self._requests = threading.BoundedSemaphore(max(in_flight, 1))
        self._bytes = 0
        self._lock = threading.Lock()

    def fetch_ahead(self, target: str, options: FetchOptions, *, web_only: bool) -> Fetched | None:
        """The target fetched ahead of its turn, or None (to be fetched in its turn) while
        ``AHEAD_BYTES`` of bodies wait on disk. Its body counts until ``done_with``."""
        with self._requests:
            with self._lock:
                if self._bytes >= AHEAD_BYTES:
                    return None
            fetched = _fetch(target, options, web_only=web_only)
        if fetched.file is not None:
            with self._lock:
                self._bytes += fetched.size
        return fetched

    def fetch_in_turn(self, target: str, options: FetchOptions, *, web_only: bool) -> Fetched:
        """The target fetched by the capturing thread in its turn, as one of the requests in
        flight; its body never waits, so it does not count (the caller cleans it up)."""
        with self._requests:
            return _fetch(target, options, web_only=web_only)

    def done_with(self, fetched: Fetched) -> None:
        """``fetched`` (from ``fetch_ahead``) has had its turn, or never will: its body is
        deleted, and no longer waits."""
        fetched.cleanup()
        if fetched.file is not None:
            with self._lock:
                self._bytes -= fetched.size


def _fetch(target: str, options: FetchOptions, *, web_only: bool) -> Fetched:
    """``snapshotter.fetch.fetch``, looked up when called (the network stack loads only for a
    batch that fetches)."""
    from snapshotter import fetch as fetch_module

    return fetch_module.fetch(target, options, web_only=web_only)


class _Planned:
    """One target of a batch capture: how it is captured, its fetch when started ahead, or
    why it cannot be captured (raised when its turn comes, so it fails in its place)."""

    def __init__(
        self,
        target: str,
        *,
        web_only: bool,
        browser: bool = False,
        fetching: tuple[Future[Fetched | None], _Fetches] | None = None,
        refused: Exception | None = None,
    ) -> None:
        self.target = target
        self.web_only = web_only
        self.browser = browser
        self.fetching = fetching  # its fetch, and what the batch's fetches share
        self.refused = refused

    def run(self, workspace: Workspace, store: BlobStore) -> SnapshotRecord:
        """The capture's record, its blobs put into ``store``; raises as ``capture`` does."""
        if self.refused is not None:
            raise self.refused
        if self.browser:
            return _capture_in_browser(workspace, self.target)
        fetching = self.take()
        if fetching is None:
            return capture(self.target, store, workspace.fetch_options, web_only=self.web_only)
        future, fetches = fetching
        fetched = _fetched_ahead(future, fetches)
        if fetched is not None:
            try:
                return extract_and_store(fetched, store)
            finally:
                fetches.done_with(fetched)
        # left for its turn (AHEAD_BYTES)
        options = workspace.fetch_options
        fetched = fetches.fetch_in_turn(self.target, options, web_only=self.web_only)
        try:
            return extract_and_store(fetched, store)
        finally:
            fetched.cleanup()

    def take(self) -> tuple[Future[Fetched | None], _Fetches] | None:
        """Its fetch started ahead, now owned by the one caller that takes it: ``abandon``
        leaves a taken fetch alone, so a body is never both captured and deleted."""
        fetching, self.fetching = self.fetching, None
        return fetching

    def abandon(self) -> None:
        """Drop a fetch started ahead whose turn will not come (or came, but its capture never
        began): its body file is deleted when (if) it arrives; a fetch not yet started is not
        made. Nothing to do once its capture took the fetch."""
        fetching = self.take()
        if fetching is not None:
            _abandon(*fetching)


def _fetched_ahead(future: Future[Fetched | None], fetches: _Fetches) -> Fetched | None:
    try:
        return future.result()
    except BaseException as error:
        if not isinstance(error, Exception):  # interrupted while waiting: not ours to wait
            _abandon(future, fetches)
        raise


def _abandon(future: Future[Fetched | None], fetches: _Fetches) -> None:
    if not future.cancel():
        future.add_done_callback(partial(_clean_up_fetched, fetches))


def _clean_up_fetched(fetches: _Fetches, done: Future[Fetched | None]) -> None:
    if not done.cancelled() and done.exception() is None:
        fetched = done.result()
        if fetched is not None:
            fetches.done_with(fetched)


def _planned(
    workspace: Workspace,
    targets: Iterator[str],
    *,
    web_only: bool,
    method: str | None,
    ahead: int,
) -> Generator[_Planned, None, None]:
    """The targets in order, each HTTP capture's fetch started ``ahead`` targets before its
    turn; on close, the fetches of targets whose capture never began are abandoned (those
    queued, and the one handed out last when it was never run)."""
    window: deque[_Planned] = deque()
    in_flight = min(FETCH_THREADS, workspace.settings.host_concurrency)
    fetches = _Fetches(in_flight) if ahead else None
    handed: _Planned | None = None  # the last target handed out: its capture may not have begun
    try:
        for target in targets:
            planned = _plan(workspace, target, web_only=web_only, method=method, fetches=fetches)
            window.append(planned)
            if len(window) > ahead:
                handed = window.popleft()
                yield handed
        while window:
            handed = window.popleft()
            yield handed
    finally:
        for planned in window if handed is None else [handed, *window]:
            planned.abandon()


def _plan(
    workspace: Workspace,
    target: str,
    *,
    web_only: bool,
    method: str | None,
    fetches: _Fetches | None,
) -> _Planned:
    """How ``target`` is captured, its fetch queued for the fetch threads and held to the
    batch's ``fetches``; None: each target is fetched in its turn."""
    try:
        chosen = capture_method(workspace, target, method or workspace.settings.capture)
    except Exception as error:  # refused (exit 2) or failed, in its turn, as capture_source
        return _Planned(target, web_only=web_only, refused=error)
    if chosen == "browser":
        return _Planned(target, web_only=web_only, browser=True)
    if fetches is None:
        return _Planned(target, web_only=web_only)
    options = workspace.fetch_options
    started = _FETCH_THREADS.submit(
        partial(fetches.fetch_ahead, target, options, web_only=web_only)
    )
    return _Planned(target, web_only=web_only, fetching=(started, fetches))


_FETCH_THREADS = DaemonThreads(FETCH_THREADS, "snap-fetch-ahead")  # the process's, made once


def _capture_batch(
    workspace: Workspace,
    attestor: Attestor,
    plans: Iterable[_Planned],
) -> list[CaptureOutcome]:
    from snapshotter.store.batch import batched

    batch = batched(workspace.store)
    try:
        outcomes = [_attempt(workspace, batch, attestor, planned) for planned in plans]
    except BaseException:  # interrupted: nothing of the batch is recorded or kept
        batch.discard()
        raise
    try:
        batch.flush()
    except StoreError as error:  # nothing stored is durable: every attempt failed
        _record_failures(workspace, [_unstored(outcome, error) for outcome in outcomes])
        raise
    return _record_batch(workspace, outcomes)


def _attempt(
    workspace: Workspace,
    store: BlobStore,
    attestor: Attestor,
    planned: _Planned,
) -> CaptureOutcome:
    """Capture and seal one target into the batch; any failure is the outcome, never raised."""
    from records.attest.seal import seal

    target = planned.target
    try:
        record = planned.run(workspace, store)
        return CaptureOutcome(target, seal(attestor, store, record))
    except (InputError, ConfigError) as error:
        return CaptureOutcome(target, error=error)
    except CaptureError as error:
        return CaptureOutcome(target, error=error, failure=error)
    except SnapError as error:  # the store failed for this one: recorded, its own exit code
        return CaptureOutcome(target, error=error, failure=CaptureError(error.message, url=target))
    except Exception as error:
        summary = f"{type(error).__name__}: {error}"[:300]
        failure = CaptureError(f"could not capture {target[:300]}: {summary}", url=target)
        return CaptureOutcome(target, error=failure, failure=failure)


def _record_batch(workspace: Workspace, outcomes: list[CaptureOutcome]) -> list[CaptureOutcome]:
    """One transaction for the batch: stored captures, failed ones; the rest pass through."""
    to_record: list[SnapshotRecord | FailedAttempt] = []
    for outcome in outcomes:
        if outcome.record is not None:
            to_record.append(outcome.record)
        elif outcome.failure is not None:
            to_record.append((outcome.target, outcome.failure))
    if not to_record:
        return outcomes
    with workspace.db.session() as session:
        recorded = iter(record_capture_batch(session, to_record))
    results = []
    for outcome in outcomes:
        if outcome.record is None and outcome.failure is None:
            results.append(outcome)
            continue
        result = next(recorded)
        if isinstance(result, ExtractionConflict):
            outcome = CaptureOutcome(outcome.target, error=result)
        results.append(outcome)
    return results


def _unstored(outcome: CaptureOutcome, error: StoreError) -> CaptureOutcome:
    if outcome.record is None:
        return outcome
    failure = CaptureError(error.message, url=outcome.target)
    return CaptureOutcome(outcome.target, error=error, failure=failure)


def _record_failures(workspace: Workspace, outcomes: list[CaptureOutcome]) -> None:
    failures = [(o.target, o.failure) for o in outcomes if o.failure is not None]
    if failures:
        with workspace.db.session() as session:
            record_capture_batch(session, failures)
