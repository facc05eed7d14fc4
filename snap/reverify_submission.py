"""One submission of a re-verification, for every shell: ``snap reverify``, ``POST
/v1/reverify`` and the workers' batches all go through ``plan_reverify`` then ``submit_reverify``.

The decision is made once, here: a request is queued as a batch of snapshot groups (one task per
group, recorded under the batch id as run id, exactly what a worker runs with
``records.jobs.run_item``) or run in this process. The command line queues only when asked
(``--enqueue``) and refuses what cannot be queued; the service queues whenever a broker is
configured and the request can be queued, and otherwise runs it in-process, synchronously. A
refetch (``--refetch``) captures sources again and a continued run (``--run``) needs its earlier
checks in this process, so neither is ever queued. The same filters select the same citations
either way, and the same one-line errors answer a request that matches nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, overload

from records.errors import RecordNotFound
from records.vocabulary import BatchKind
from records.workspace import Workspace
from snap.config import settings_of
from snap.errors import InputError

if TYPE_CHECKING:  # loaded when used: a run in this process needs no queue, and no Celery
    from records.jobs import Item
    from records.reverify import CitationKey, ReverifyReport
    from snap.workers.submit import Submitted

NOTHING_MATCHES = "no recorded citation matches url/since"
CANNOT_QUEUE = "--enqueue cannot be combined with --refetch or --run"


class Queueing(Enum):
    """When a re-verification is queued for the workers rather than run here."""

    ASKED = "asked"  # the command line's --enqueue: queue it, or refuse
    WITH_BROKER = "with-broker"  # the service: queue it when a broker is configured and it can be
    NEVER = "never"  # the command line without --enqueue: run it here


@dataclass(frozen=True)
class ReverifyRequest:
    url: str | None = None
    since: datetime | None = None
    refetch: bool = False
    run_id: str | None = None  # an earlier run to continue (its id, or a unique prefix)

    @property
    def can_be_queued(self) -> bool:
        return not (self.refetch or self.run_id)

    @property
    def filtered(self) -> bool:
        return bool(self.url or self.since)

    def params(self) -> dict[str, str | None]:
        """The batch's recorded parameters (``snap jobs`` shows them)."""
        return {"url": self.url, "since": None if self.since is None else self.since.isoformat()}


@dataclass(frozen=True)
class QueuedPlan:
    """Snapshot groups to record as a batch (and publish, or run here with no broker)."""

    request: ReverifyRequest
    items: list[Item]

    @property
    def size(self) -> int:
        return len(self.items)


@dataclass(frozen=True)
class InProcessPlan:
    """Citations to re-check in this process, under a new run id (``new_run``) or a recorded
    one: their keys, the citations themselves being loaded a chunk at a time when re-checked.
    The id is known before the run starts, so an interrupted run can be named."""

    request: ReverifyRequest
    citations: list[CitationKey]
    run_id: str
    new_run: bool

    @property
    def size(self) -> int:
        return len(self.citations)

    @property
    def refetches(self) -> int:
        """The sources captured again before the checks (``--refetch``), each once."""
        from records.reverify import refetch_targets

        return len(refetch_targets(self.citations)) if self.request.refetch else 0


ReverifyPlan = QueuedPlan | InProcessPlan


def queued(workspace: Workspace, request: ReverifyRequest, queueing: Queueing) -> bool:
    """The one rule for queue-or-run."""
    if queueing is Queueing.ASKED:
        if not request.can_be_queued:
            raise InputError(CANNOT_QUEUE)
        return True
    if queueing is Queueing.WITH_BROKER:
        return request.can_be_queued and settings_of(workspace).broker_url is not None
    return False


def plan_reverify(
    workspace: Workspace, request: ReverifyRequest, queueing: Queueing
) -> ReverifyPlan:
    """What will be done, decided and checked before anything is: a run id never recorded is
    refused (``UnknownRun``, exit 2), never started as a new run under that id; filters that
    match nothing are ``RecordNotFound`` (exit 1, 404)."""
    if queued(workspace, request, queueing):
        from records.jobs import reverify_items

        items = reverify_items(workspace, url=request.url, since=request.since)
        if not items and request.filtered:
            raise RecordNotFound(NOTHING_MATCHES)
        return QueuedPlan(request, items)
    from records.reverify import new_run_id, recorded_run, select_citation_keys

    run_id = recorded_run(workspace, request.run_id) if request.run_id else None
    citations = select_citation_keys(workspace, url=request.url, since=request.since)
    if not citations and request.filtered:
        raise RecordNotFound(NOTHING_MATCHES)
    return InProcessPlan(request, citations, run_id or new_run_id(), new_run=run_id is None)


@overload
def submit_reverify(
    workspace: Workspace,
    plan: QueuedPlan,
    *,
    progress: Callable[[int], None] | None = None,
    refetched: Callable[[int], None] | None = None,
) -> Submitted: ...


@overload
def submit_reverify(
    workspace: Workspace,
    plan: InProcessPlan,
    *,
    progress: Callable[[int], None] | None = None,
    refetched: Callable[[int], None] | None = None,
) -> ReverifyReport: ...


def submit_reverify(
    workspace: Workspace,
    plan: ReverifyPlan,
    *,
    progress: Callable[[int], None] | None = None,
    refetched: Callable[[int], None] | None = None,
) -> Submitted | ReverifyReport:
    """Carry the plan out: the batch as submitted, or the in-process run's report (each
    snapshot group recorded as it finishes; ``progress`` is called after each, and may stop
    the run by raising). With ``--refetch``, ``refetched`` is told of each source captured
    again first, ``plan.refetches`` of them: a bar can count those too."""
    if isinstance(plan, QueuedPlan):
        from snap.workers.submit import submit

        return submit(
            workspace, BatchKind.REVERIFY, plan.request.params(), plan.items, progress=progress
        )
    from records.reverify import refetch_sources, reverify_in_chunks

    errors = {}
    if plan.request.refetch:
        errors = refetch_sources(workspace, plan.citations, refetched)
    return reverify_in_chunks(
        workspace,
        plan.citations,
        refetch_errors=errors,
        run_id=plan.run_id,
        new_run=plan.new_run,
        progress=progress,
    )
