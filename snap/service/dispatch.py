"""How ``POST /v1/reverify`` runs: the one place to change when re-verification is queued.

Here it runs in-process, synchronously, with exactly the filters of ``snap reverify``; the
answer is what ``snap reverify --json`` prints. A queue (Celery workers) replaces
``dispatch_reverify`` and answers 202 with the batch to follow instead; nothing else in the
service needs to know.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from records.workspace import Workspace
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


def dispatch_reverify(workspace: Workspace, filters: ReverifyFilters) -> Dispatched:
    from records.reverify import refetch_sources, reverify, select_citations

    citations = select_citations(workspace, url=filters.url, since=filters.since)
    if not citations and (filters.url or filters.since):
        raise RecordNotFound("no recorded citation matches url/since")
    errors = refetch_sources(workspace, citations) if filters.refetch else {}
    report = reverify(workspace, citations, refetch_errors=errors, run_id=filters.run_id)
    summary = report.summary()
    return Dispatched(200, report.to_json(), summary["byStatus"], len(errors))
