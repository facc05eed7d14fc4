"""``snap reverify``: re-check recorded citations against the latest snapshot of their source.

Work is grouped by snapshot, so each snapshot's text is read, digest-checked and tokenized once
however many citations point at it; that is what makes re-checking thousands of citations after
a source changes cheap.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from records.capture import capture_source, is_web_url
from records.inputs import QUOTED, UNQUOTED, CitationRequest, Position
from records.models import Citation, Snapshot
from records.outcome import CitationResult, Outcome, count_by_status
from records.repository import (
    capture_time,
    citations_matching,
    get_snapshot,
    latest_capture,
    record_verification,
)
from records.texts import SnapshotTexts
from records.verify import check_against, verification_values
from records.workspace import Workspace
from snap.errors import OffsetError, SnapError
from snapshotter.capture import rfc3339
from verifier import TextQuoteSelector

Progress = Callable[[int], None]


@dataclass(frozen=True)
class ReverifyReport:
    results: list[CitationResult]
    refetch_errors: dict[str, str]

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    def summary(self) -> dict[str, Any]:
        return {
            "total": len(self.results),
            "byStatus": count_by_status(self.results),
            "refetchErrors": self.refetch_errors,
        }

    def to_json(self) -> dict[str, Any]:
        return {"results": [r.to_json() for r in self.results], "summary": self.summary()}


def select_citations(
    workspace: Workspace, *, url: str | None = None, since: datetime | None = None
) -> list[Citation]:
    with workspace.db.session() as session:
        return list(citations_matching(session, url=url, since=since))


def refetch_sources(workspace: Workspace, citations: Sequence[Citation]) -> dict[str, str]:
    """Capture every cited web URL again; failures are recorded and reported, not fatal.

    Local paths and file URLs are never captured here: citations come from model output.
    """
    errors = {}
    for url in sorted({c.url for c in citations if c.url}):
        if not is_web_url(url):
            errors[url] = "only http and https sources are captured again"
            continue
        try:
            capture_source(workspace, url)
        except SnapError as error:
            errors[url] = error.message
    return errors


def reverify(
    workspace: Workspace,
    citations: Sequence[Citation],
    *,
    progress: Progress | None = None,
    refetch_errors: dict[str, str] | None = None,
) -> ReverifyReport:
    texts = SnapshotTexts(workspace.store)
    results: list[CitationResult] = []
    with workspace.db.session() as session:
        for snapshot, group in group_by_latest_snapshot(session, citations):
            for citation in group:
                outcome, source = recheck(session, texts, citation, snapshot)
                verification = record_verification(
                    session, verification_values(citation.id, outcome)
                )
                results.append(
                    CitationResult.of(
                        citation.id,
                        citation.url,
                        outcome,
                        source,
                        citation.claim_text,
                        verification.id,
                    )
                )
                if progress is not None:
                    progress(1)
    return ReverifyReport(results, refetch_errors or {})


def group_by_latest_snapshot(
    session: Session, citations: Sequence[Citation]
) -> list[tuple[Snapshot | None, list[Citation]]]:
    """Citations keyed by the newest snapshot of their URL (their own, if they have no URL)."""
    latest_of_url: dict[str | None, str | None] = {}
    groups: dict[str | None, list[Citation]] = defaultdict(list)
    for citation in citations:
        if citation.url not in latest_of_url:
            capture = latest_capture(session, citation.url) if citation.url else None
            latest_of_url[citation.url] = capture.snapshot_id if capture else None
        groups[latest_of_url[citation.url] or citation.snapshot_id].append(citation)
    return [(get_snapshot(session, key) if key else None, group) for key, group in groups.items()]


def recheck(
    session: Session, texts: SnapshotTexts, citation: Citation, latest: Snapshot | None
) -> tuple[Outcome, Any]:
    """First the citation in its own snapshot, with its position and fingerprints: a citation
    that was never right there stays broken, whatever newer captures say. Then the latest."""
    if citation.snapshot_id is None and citation.claimed_snapshot:
        reason = (
            f"the cited snapshot {citation.claimed_snapshot} was never captured from {citation.url}"
        )
        return Outcome("unknown_snapshot", reason=reason), None
    pinned = get_snapshot(session, citation.snapshot_id) if citation.snapshot_id else None
    if pinned is not None:
        own = check_stored(texts, pinned, request_of(citation, in_own_snapshot=True))
        if own[0].status != "quote_found" or latest is None or latest.id == pinned.id:
            return own
    if latest is None:
        return Outcome("unknown_snapshot", reason="no snapshot of this citation's source"), None
    outcome, source = check_stored(texts, latest, request_of(citation, in_own_snapshot=False))
    if outcome.status == "not_found" and pinned is not None:
        details = {
            "pinnedSnapshotId": pinned.id,
            "pinnedCapturedAt": rfc3339(capture_time(session, pinned.id)),
            "latestCapturedAt": rfc3339(capture_time(session, latest.id)),
        }
        reason = (
            f"the quote is in the cited snapshot {pinned.id} (captured "
            f"{details['pinnedCapturedAt']}) but not in the latest capture {latest.id} "
            f"(captured {details['latestCapturedAt']})"
        )
        return replace(outcome, status="source_changed", reason=reason, details=details), source
    return outcome, source


def check_stored(
    texts: SnapshotTexts, snapshot: Snapshot, request: CitationRequest
) -> tuple[Outcome, Any]:
    """A stored citation with an impossible position fails alone; it never stops the batch."""
    try:
        return check_against(texts, snapshot, request)
    except OffsetError as error:
        return Outcome("position_mismatch", snapshot.id, reason=error.message), None


def request_of(citation: Citation, *, in_own_snapshot: bool) -> CitationRequest:
    """A stored citation as a request; its position, page and fingerprints only hold in the
    snapshot it was made on."""
    position = None
    keep_position = in_own_snapshot
    if keep_position and citation.position_start is not None and citation.position_end is not None:
        position = Position(
            citation.position_start, citation.position_end, citation.position_unit or "codepoint"
        )
    quoted = bool(citation.exact)  # a citation that quoted nothing is stored with no words
    return CitationRequest(
        label=f"citation {citation.id}",
        quote=TextQuoteSelector(citation.exact, citation.prefix, citation.suffix)
        if quoted
        else None,
        kind=QUOTED if quoted else UNQUOTED,
        claim_text=citation.claim_text,
        citation_id=citation.id,
        url=citation.url,
        position=position,
        page=citation.page if keep_position else None,
        hashes=citation.claimed_hashes if in_own_snapshot else None,
    )
