"""The tasks: capture a URL, re-verify one snapshot group, re-extract one snapshot.

Each takes a batch item's id and its batch's id, claims that item in the database only when
both match there (an item id alone is only unique in one database), runs the same use case as
the command line (records/jobs.py), and records the outcome there. Idempotent: a capture is
recorded only by the delivery whose compare-and-set marks the item done (its blobs are
content-addressed), a re-verification's checks carry idempotency keys under the batch's run
id, a re-extraction of the same bytes adds no extraction. Transient failures
(snap.errors.is_transient) are retried with exponential backoff and full jitter, up to
SNAP_TASK_RETRIES more tries; any other failure fails the item at once.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Task
from celery.signals import worker_process_shutdown, worker_shutdown
from celery.utils.log import get_task_logger
from celery.utils.time import get_exponential_backoff_interval

from records import jobs
from records.vocabulary import BatchKind
from records.workspace import Workspace
from snap.errors import SnapError, is_transient
from snap.workers.broker import app, safe_url, settings
from snap.workers.politeness import Politeness

BACKOFF_FACTOR = 2  # seconds, doubled each try
BACKOFF_MAX = 300
_opened: dict[int, tuple[Workspace, Politeness]] = {}  # per process: pool processes fork
logger = get_task_logger(__name__)


def opened() -> tuple[Workspace, Politeness]:
    """One workspace (database engine, store client) per process, opened on first use."""
    pid = os.getpid()
    if pid not in _opened:
        _opened.clear()  # a forked child must not use its parent's connections
        _opened[pid] = (Workspace.open(settings()), Politeness(settings()))
    return _opened[pid]


@worker_process_shutdown.connect
@worker_shutdown.connect
def close_opened(**_signal: Any) -> None:
    """A worker process that ends closes its workspace, and with it the browser of its
    browser captures: no Chromium outlives the worker that started it."""
    for workspace, _politeness in list(_opened.values()):
        workspace.close()
    _opened.clear()


def backoff(attempts: int) -> float:
    return float(
        get_exponential_backoff_interval(
            BACKOFF_FACTOR, attempts - 1, BACKOFF_MAX, full_jitter=True
        )
    )


def run(task: Task[Any, Any], item_id: int, batch_id: str | None) -> str | None:
    if batch_id is None:
        refuse_bare_id(item_id)
        return None
    workspace, politeness = opened()
    claimed = jobs.claim_item(workspace.db, item_id, batch_id)
    if claimed is None:  # done or failed (a duplicate or stale message), or not ours
        if not jobs.item_recorded(workspace.db, item_id, batch_id):
            refuse_foreign(workspace, item_id, batch_id)
        return None
    try:
        if claimed.kind is BatchKind.CAPTURE:
            with politeness.slot(str(claimed.payload.get("url", claimed.key))):
                result = jobs.run_item(workspace, claimed)
        else:
            result = jobs.run_item(workspace, claimed)
        jobs.checkpoint_when_finished(workspace, claimed.batch_id)
        return result.stored()
    except SnapError as error:
        transient = is_transient(error)
        retrying = transient and claimed.attempts <= settings().task_retries
        jobs.mark_failed(workspace.db, item_id, error, retrying=retrying, transient=transient)
        if retrying:
            raise task.retry(countdown=backoff(claimed.attempts), max_retries=None) from None
        return None


def refuse_foreign(workspace: Workspace, item_id: int, batch_id: str) -> None:
    """A message naming an item this database does not record: workers of another database
    share this queue. It is dropped (acknowledged), not requeued, and said once, here.

    Dropping loses nothing: the item's state lives in its own database, where it stays
    pending, so ``snap jobs`` there shows it and ``snap jobs --resume`` queues it again. A
    requeue would hand the message straight back to a worker of the same queue, often this
    one (prefetch 1), spinning it hot and repeating this line for as long as the deployment is
    wrong; with a delay it would still reach the right database only by chance, and hide the
    mistake that needs fixing: one SNAP_QUEUE per database."""
    logger.error(
        "refused item %s of batch %s: this worker's database %s records no such item, "
        "so workers of another database share the queue %r; the item was not run and stays "
        "pending in its own database: give each database its own SNAP_QUEUE, then run "
        "`snap jobs --resume %s` there",
        item_id,
        batch_id,
        workspace.db.safe_url,
        settings().queue,
        batch_id,
    )


def refuse_bare_id(item_id: int) -> None:
    """A message of the shape before batch ids were sent (only an item id), still queued
    across an upgrade. An item id alone may name another database's item, so it is not run;
    it is dropped for the reasons of ``refuse_foreign``: its item stays pending in its own
    database, and ``snap jobs --resume`` queues it again with its batch id."""
    logger.warning(
        "refused a message naming only item %s, without its batch (queued by an older "
        "snap): an item id alone may name another database's item, so it was not run; the "
        "database that queued it still has it pending: `snap jobs` lists its batch, and "
        "`snap jobs --resume BATCH` queues it again",
        item_id,
    )


TASK_OPTIONS: dict[str, Any] = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
}


@app.task(name="snap.capture", **TASK_OPTIONS)
def capture_url(self: Task[Any, Any], item_id: int, batch_id: str | None = None) -> str | None:
    """Capture one URL of a batch (with per-host politeness) and record it."""
    return run(self, item_id, batch_id)


@app.task(name="snap.reverify", **TASK_OPTIONS)
def reverify_group(self: Task[Any, Any], item_id: int, batch_id: str | None = None) -> str | None:
    """Re-verify the citations of one snapshot group of a batch."""
    return run(self, item_id, batch_id)


@app.task(name="snap.reextract", **TASK_OPTIONS)
def reextract_snapshot(
    self: Task[Any, Any], item_id: int, batch_id: str | None = None
) -> str | None:
    """Re-extract one snapshot of a batch."""
    return run(self, item_id, batch_id)


TASKS = {
    BatchKind.CAPTURE: capture_url,
    BatchKind.REVERIFY: reverify_group,
    BatchKind.REEXTRACT: reextract_snapshot,
}


def publish(kind: BatchKind, batch_id: str, item_ids: list[int]) -> None:
    """One message per item, naming the item and its batch (``run`` claims only that pair),
    over one broker connection; a broker that cannot be reached is one line (exit 3). The
    items are already recorded, so nothing is lost: ``snap jobs --resume`` publishes them
    again."""
    from kombu.exceptions import OperationalError

    task = TASKS[kind]
    queue = settings().queue
    policy = {"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5}
    try:  # a connection of its own: made from the settings configured last, not a pooled one
        with app.connection_for_write() as connection, connection.Producer() as producer:
            for item_id in item_ids:
                task.apply_async(
                    (item_id, batch_id),
                    producer=producer,
                    queue=queue,
                    retry=True,
                    retry_policy=policy,
                )
    except (OperationalError, OSError) as error:
        from snap.errors import BrokerError

        shown = safe_url(settings().broker_url or "")
        raise BrokerError(f"the broker at {shown} cannot be reached: {error}") from None
