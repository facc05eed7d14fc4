"""How ``POST /v1/reverify`` runs: queued for the workers when a broker is configured,
otherwise in-process.

With ``SNAP_BROKER_URL`` set, the citations are split into snapshot groups and recorded as a
batch, exactly as ``snap reverify --enqueue`` does (``snap.workers.submit``), and the answer is
202 with the batch to follow at ``GET /v1/jobs/{batch}``. ``refetch`` and ``run`` are not
queued (as on the command line): such a request, like every request without a broker, runs
in-process, synchronously, with exactly the filters of ``snap reverify``; the answer is what
``snap reverify --json`` prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from records.vocabulary import BatchKind
from records.workspace import Workspace
from snap.config import settings_of
from snap.errors import RecordNotFound


@dataclass(frozen=True)
class ReverifyFilters:
    url: str | None = None
    since: datetime | None = None
    refetch: bool = False
    run_id: str | None = None


@dataclass(frozen=True)
class Dispatched:
    status_code: int
    body: dict[str, Any]
    by_status: dict[str, int]  # citations checked now, for the metrics
    refetch_failures: int


def no_checkpoint() -> None:
    """Never stop a run from outside."""


def dispatch_reverify(
    workspace: Workspace,
    filters: ReverifyFilters,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> Dispatched:
    """``checkpoint`` is called after each snapshot group of an in-process run (each group is
    recorded as it finishes) and stops the run by raising: the request's deadline."""
    if settings_of(workspace).broker_url is not None and not (filters.refetch or filters.run_id):
        return enqueue_reverify(workspace, filters)
    from records.reverify import recorded_run, refetch_sources, reverify, select_citations

    # a run to continue must be recorded (the full id or a unique prefix, as on the command
    # line): an unknown id is refused (400), never started as a new run under that id
    run_id = recorded_run(workspace, filters.run_id) if filters.run_id else None
    citations = select_citations(workspace, url=filters.url, since=filters.since)
    if not citations and (filters.url or filters.since):
        raise RecordNotFound("no recorded citation matches url/since")
    errors = refetch_sources(workspace, citations) if filters.refetch else {}
    report = reverify(
        workspace,
        citations,
        refetch_errors=errors,
        run_id=run_id,
        progress=lambda _done: checkpoint(),
    )
    summary = report.summary()
    return Dispatched(200, report.to_json(), summary["byStatus"], len(errors))


def enqueue_reverify(workspace: Workspace, filters: ReverifyFilters) -> Dispatched:
    """One task per snapshot group, through the same submission as the command line."""
    from records.jobs import reverify_items
    from snap.workers.submit import submit

    items = reverify_items(workspace, url=filters.url, since=filters.since)
    if not items and (filters.url or filters.since):
        raise RecordNotFound("no recorded citation matches url/since")
    params = {"url": filters.url, "since": filters.since and filters.since.isoformat()}
    submitted = submit(workspace, BatchKind.REVERIFY, params, items)
    body = {
        "batchId": submitted.batch_id,
        "kind": submitted.kind,
        "items": submitted.items,
        "queue": submitted.queue,
        "progress": f"/v1/jobs/{submitted.batch_id}",
    }
    return Dispatched(202, body, {}, 0)
