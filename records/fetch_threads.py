"""A fixed set of daemon threads that run calls handed to them, each answered by a Future.

What a batch capture fetches ahead with (``records.capture``). Not ``ThreadPoolExecutor``: its
threads are joined when the interpreter exits, so a ``snap fetch --from`` stopped with Ctrl-C
would wait for a fetch still running, up to its deadline (ten read timeouts). These threads
die with the process; a body such a fetch was writing to a temporary file is deleted when the
interpreter exits (``snapshotter.tempfiles``), or by a later capture's sweep if the process was
killed.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
_Job = tuple[Future[Any], Callable[[], Any]]


class DaemonThreads:
    """``count`` daemon threads, started at the first ``submit`` and kept for the process."""

    def __init__(self, count: int, name: str) -> None:
        self.count = count
        self.name = name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._started = 0
        self._lock = threading.Lock()
        os.register_at_fork(after_in_child=self._forget)

    def submit(self, call: Callable[[], T]) -> Future[T]:
        """Run ``call`` on one of the threads; a Future not yet running can be cancelled."""
        future: Future[T] = Future()
        self._jobs.put((future, call))
        with self._lock:
            if self._started < self.count:
                self._started += 1
                name = f"{self.name}-{self._started}"
                threading.Thread(target=self._work, name=name, daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            future, call = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                result = call()
            except BaseException as error:  # handed to the caller, as an executor does
                future.set_exception(error)
            else:
                future.set_result(result)

    def _forget(self) -> None:
        """A forked child (a Celery worker process) has none of its parent's threads."""
        self._jobs = queue.SimpleQueue()
        self._started = 0
        self._lock = threading.Lock()
