"""One capture per URL at a time in this process, however many ``fetch=true`` requests ask.

Requests run in the service's threadpool; four verify requests with ``fetch=true`` citing
one URL never captured would each find it missing and each capture it: four requests to the
origin at once, four snapshots. Here the first one captures and the others, arriving while it
runs, wait for it and take its outcome: its capture (which they then read from the database,
as any request would) or its error. Nothing is remembered after it ends, so a request after a
failed capture tries again. Only within one process: ``snap serve --workers N`` has N of
these (docs/http.md says what that leaves).

No transaction is open while a request waits or captures: ``records.verify`` reads which URLs
are missing in one short read, and the capture holds none across the network or the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from records.workspace import Workspace


class _Flight:
    """One run of a key's work, and its outcome once ``done`` is set."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: BaseException | None = None


class SingleFlight:
    """Calls with the same key at the same time run its work once.

    The first call runs ``work``, in its own thread; a call arriving while it runs waits for it
    and ends as it did: returns, or raises the same exception. The key is forgotten before the
    waiters are woken, so a call arriving after that runs the work anew (a failure is never
    served from memory). A waiter holds no lock, and a caller runs one work at a time, so no
    two callers can wait on each other."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, _Flight] = {}

    def run(self, key: str, work: Callable[[], None]) -> None:
        with self._lock:
            flight = self._running.get(key)
            leading = flight is None
            if flight is None:
                flight = self._running[key] = _Flight()
        if not leading:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return
        try:
            work()
        except BaseException as error:
            flight.error = error
            raise
        finally:
            with self._lock:
                del self._running[key]
            flight.done.set()

    def running(self) -> int:
        """Keys whose work is running now (for tests)."""
        with self._lock:
            return len(self._running)


class SharedCaptures:
    """``records.verify.CaptureMissing`` for the service: one capture at a time per URL (by
    its canonical key, ``records.urls.canonical_url``) across the process's requests."""

    def __init__(self) -> None:
        self.flights = SingleFlight()

    def __call__(self, workspace: Workspace, url: str) -> None:
        from records.urls import canonical_url
        from records.verify import capture_if_still_missing  # loaded by the first verify

        self.flights.run(canonical_url(url), lambda: capture_if_still_missing(workspace, url))
