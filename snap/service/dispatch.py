"""How ``POST /v1/reverify`` runs: queued for the workers when a broker is configured,
otherwise in-process.

With ``SNAP_BROKER_URL`` set, the citations are split into snapshot groups and recorded as a
batch, exactly as ``snap reverify --enqueue`` does (one submission for both:
``snap.reverify_submission``), and the answer is
202 with the batch to follow at ``GET /v1/jobs/{batch}``. ``refetch`` and ``run`` are not
queued (as on the command line): such a request, like every request without a broker, runs
in-process, synchronously, with exactly the filters of ``snap reverify``; the answer is what
``snap reverify --json`` prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from records.wire import reverify_report_json
from records.workspace import Workspace
from snap.reverify_submission import (
    QueuedPlan,
    Queueing,
    ReverifyRequest,
    plan_reverify,
    submit_reverify,
)
from verifier.status import Status


@dataclass(frozen=True)
class Dispatched:
    status_code: int
    body: dict[str, Any]
    by_status: dict[Status, int]  # citations checked now, for the metrics
    refetch_failures: int


def no_checkpoint() -> None:
    """Never stop a run from outside."""


def dispatch_reverify(
    workspace: Workspace,
    request: ReverifyRequest,
    checkpoint: Callable[[], None] = no_checkpoint,
) -> Dispatched:
    """``checkpoint`` is called after each snapshot group of an in-process run (each group is
    recorded as it finishes) and stops the run by raising: the request's deadline. Whether it
    is queued is decided by ``snap.reverify_submission``, as for the command line."""
    plan = plan_reverify(workspace, request, Queueing.WITH_BROKER)
    if isinstance(plan, QueuedPlan):
        submitted = submit_reverify(workspace, plan)
        body = {
            "batchId": submitted.batch_id,
            "kind": submitted.kind,
            "items": submitted.items,
            "queue": submitted.queue,
            "progress": f"/v1/jobs/{submitted.batch_id}",
        }
        return Dispatched(202, body, {}, 0)
    report = submit_reverify(workspace, plan, progress=lambda _done: checkpoint())
    body = reverify_report_json(report)
    return Dispatched(200, body, report.by_status, len(report.refetch_errors))
