"""Starting a batch: record it, then publish its items to the broker, or, with no broker
configured, run them in this process. One function for every shell that starts batches (the
command line, the HTTP service); Celery is imported only when there is a broker."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from records import jobs
from records.vocabulary import BatchKind
from records.workspace import Workspace
from snap.config import settings_of


@dataclass(frozen=True)
class Submitted:
    batch_id: str
    kind: BatchKind
    items: int
    queue: str | None  # None: no broker, the items were run in this process


def submit(
    workspace: Workspace,
    kind: BatchKind,
    params: dict[str, Any],
    items: Sequence[jobs.Item],
    *,
    progress: Callable[[int], None] | None = None,
) -> Submitted:
    batch_id, item_ids = jobs.create_batch(workspace.db, kind, params, items)
    return dispatch(workspace, batch_id, kind, item_ids, progress=progress)


def resume(
    workspace: Workspace, batch: str, *, progress: Callable[[int], None] | None = None
) -> Submitted:
    """Re-queue what a batch has not finished (see ``records.jobs.resumable_items``)."""
    batch_id, item_ids = jobs.resumable_items(workspace.db, batch)
    kind = jobs.kind_of(workspace.db, batch_id)
    return dispatch(workspace, batch_id, kind, item_ids, progress=progress)


def dispatch(
    workspace: Workspace,
    batch_id: str,
    kind: BatchKind,
    item_ids: list[int],
    *,
    progress: Callable[[int], None] | None = None,
) -> Submitted:
    settings = settings_of(workspace)
    if settings.broker_url is None:
        jobs.run_here(workspace, batch_id, item_ids, progress=progress)
        return Submitted(batch_id, kind, len(item_ids), None)
    from snap.workers.app import configure
    from snap.workers.tasks import publish

    configure(settings)
    publish(kind, batch_id, item_ids)
    return Submitted(batch_id, kind, len(item_ids), settings.queue)
