"""Checkpoints of the log for a long-lived process (``snap serve``): a request that recorded
anything is the end of a batch, but a burst of requests must not make a TSA request each.

``CheckpointSchedule.appended`` is told, after each request that may have appended records;
``interval`` seconds after the first such request since the last checkpoint, a background
thread makes one checkpoint (``checkpoint_if_grown``: signed, stamped, nothing new when the log
did not grow) of everything appended by then, however many requests came in between: at most
one checkpoint (one TSA request) per interval, and every record in a checkpoint within about
an interval of its request. ``close`` makes the last one at shutdown. Each checkpoint is made
outside any request and holds no transaction across the TSA's network call
(``records.attest.checkpoints.make_checkpoint``). ``now`` makes one on demand, serialised with
the thread's, so two are never made of the same log at once. With several worker processes
(``snap serve --workers N``) each keeps its own schedule: at most N checkpoints an interval.
"""

from __future__ import annotations

import logging
import threading
import time

from records.attest.checkpoints import CheckpointResult, checkpoint_if_grown, make_checkpoint
from records.workspace import Workspace
from snapshotter.errors import SnapError

log = logging.getLogger("snap.checkpoints")


class CheckpointSchedule:
    def __init__(self, workspace: Workspace, interval: float) -> None:
        self.workspace = workspace
        self.interval = interval
        self._made = threading.Lock()  # one checkpoint at a time
        self._wake = threading.Condition()
        self._pending = False
        self._closing = False
        self._since = 0.0  # time.monotonic() of the first append not yet checkpointed
        self._thread = threading.Thread(target=self._run, name="snap-checkpoints", daemon=True)
        self._thread.start()

    def appended(self) -> None:
        """Records may have been appended: a checkpoint is due within ``interval`` seconds."""
        with self._wake:
            if not self._pending:
                self._pending, self._since = True, time.monotonic()
                self._wake.notify()

    def now(self) -> CheckpointResult:
        """A checkpoint now (on demand, as ``snap log checkpoint``): the newest one again when
        it already covers every entry."""
        with self._made:
            return make_checkpoint(self.workspace)

    def _grown(self) -> None:
        with self._made:
            checkpoint_if_grown(self.workspace)

    def close(self, timeout: float = 60.0) -> None:
        """Stop the thread, then make the last checkpoint of what was appended."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._thread.join(timeout)
        self._attempt()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._closing:
                    self._wake.wait()
                if self._closing:
                    return
                due = self._since + self.interval
                while not self._closing and time.monotonic() < due:
                    self._wake.wait(due - time.monotonic())
                if self._closing:
                    return
                self._pending = False
            self._attempt()

    def _attempt(self) -> None:
        """One checkpoint; a failure is logged and tried again an interval later
        (the records are in the log whatever happens: only their checkpoint waits)."""
        try:
            self._grown()
        except Exception as error:  # the service goes on; the next interval tries again
            self.appended()
            message = error.message if isinstance(error, SnapError) else repr(error)
            log.warning("checkpoint of the log failed (tried again): %s", message)
