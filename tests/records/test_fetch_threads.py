"""The batch capture's fetch threads (``records.fetch_threads``): a fixed number of daemon
threads, so a run stopped with Ctrl-C never waits for a fetch still running."""

from __future__ import annotations

import threading

import pytest

from records.fetch_threads import DaemonThreads


def test_calls_are_answered_by_their_futures_on_a_fixed_set_of_daemon_threads() -> None:
    threads = DaemonThreads(2, "test-fetch-threads")
    seen: list[threading.Thread] = []

    def call(n: int) -> int:
        seen.append(threading.current_thread())
        return n * n

    futures = [threads.submit(lambda n=n: call(n)) for n in range(20)]
    assert [future.result(timeout=10) for future in futures] == [n * n for n in range(20)]
    assert len({thread.name for thread in seen}) <= 2
    assert all(thread.daemon for thread in seen)
    assert threading.current_thread() not in seen


def test_an_error_is_raised_by_the_future_and_the_thread_goes_on() -> None:
    threads = DaemonThreads(1, "test-fetch-threads")

    def fail() -> None:
        raise ValueError("no")

    failed = threads.submit(fail)
    with pytest.raises(ValueError, match="no"):
        failed.result(timeout=10)
    assert threads.submit(lambda: 7).result(timeout=10) == 7


def test_a_call_cancelled_before_it_starts_never_runs() -> None:
    threads = DaemonThreads(1, "test-fetch-threads")
    release = threading.Event()
    ran: list[str] = []
    blocking = threads.submit(release.wait)
    waiting = threads.submit(lambda: ran.append("ran"))
    assert waiting.cancel()
    release.set()
    assert blocking.result(timeout=10) is True
    assert threads.submit(lambda: "after").result(timeout=10) == "after"
    assert ran == []
