"""What an export holds: the captures (with their snapshots) and the citations a selection names.

A selection is exactly one of a citation id, a snapshot id, a URL, or an answer file in any
format ``snap verify`` reads. Everything is read in one short read transaction into plain data,
so the blob reads and archive writing that follow hold no transaction open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from records.audit import find_citation
from records.errors import RecordNotFound
from records.evidence import Evidence
from records.ids import resolve_citation_id, resolve_snapshot_id
from records.inputs import CitationRequest, DocumentMap, load_verify_input
from records.inputs.documents import NO_DOCUMENTS
from records.models import Capture, Citation, Snapshot
from records.repository import (
    captures_of,
    captures_of_snapshot,
    choose_extraction,
    citations_matching,
    get_snapshot,
    latest_capture,
    verifications_of,
)
from records.urls import canonical_url
from records.verify import citation_id_of
from records.vocabulary import CaptureOutcome
from records.workspace import Workspace
from snapshotter.errors import InputError
from snapshotter.store.base import DIGEST_PATTERN


@dataclass(frozen=True)
class CaptureItem:
    """One stored capture: becomes one response (or resource) record."""

    capture_id: int
    url: str
    final_url: str
    fetched_at: datetime
    status: int | None
    provenance: dict[str, Any]
    content_type: str
    raw_size: int
    evidence: Evidence  # the snapshot, and the extraction whose text is exported

    @property
    def snapshot_id(self) -> str:
        return self.evidence.snapshot_id


@dataclass(frozen=True)
class VerificationItem:
    id: int
    status: str
    snapshot_id: str | None
    span_start: int | None
    span_end: int | None
    reason: str | None
    verifier: str
    normalizer: str
    checked_at: datetime
    run_id: str | None


@dataclass(frozen=True)
class CitationItem:
    id: str
    url: str | None
    snapshot_id: str | None
    exact: str
    prefix: str
    suffix: str
    page: str | None
    claim_text: str | None
    answer_id: str | None
    created_at: datetime
    verifications: tuple[VerificationItem, ...] = ()


@dataclass(frozen=True)
class Selection:
    """What was asked for, in words (for the archive's description), and what it holds."""

    described: str
    captures: tuple[CaptureItem, ...]
    citations: tuple[CitationItem, ...] = ()
    not_recorded: tuple[str, ...] = field(default=())  # file citations never checked by snap

    @property
    def snapshot_ids(self) -> list[str]:
        return list(dict.fromkeys(item.snapshot_id for item in self.captures))

    @property
    def citation_ids(self) -> list[str]:
        return [citation.id for citation in self.citations]


def select(
    workspace: Workspace,
    *,
    citation_id: str | None = None,
    snapshot_id: str | None = None,
    url: str | None = None,
    file: Path | None = None,
    documents: DocumentMap = NO_DOCUMENTS,
) -> Selection:
    """Exactly one of the four must be given (InputError otherwise); RecordNotFound when what
    it names has no stored capture."""
    given = [v for v in (citation_id, snapshot_id, url, file) if v is not None]
    if len(given) != 1:
        raise InputError("give exactly one of --citation ID, --snapshot ID, --url URL or FILE")
    requests = load_verify_input(file, documents).requests if file is not None else ()
    with workspace.db.reading() as session:
        if citation_id is not None:
            selection = _of_citations(session, [resolve_citation_id(session, citation_id)])
            selection = _described(selection, f"citation {selection.citation_ids[0]}")
        elif snapshot_id is not None:
            selection = _of_snapshot(session, resolve_snapshot_id(session, snapshot_id))
        elif url is not None:
            selection = _of_url(session, url)
        else:
            selection = _of_file(session, requests, str(file))
    if not selection.captures:
        raise RecordNotFound(f"{selection.described} has no stored capture to export")
    return selection


def _described(selection: Selection, text: str) -> Selection:
    return Selection(text, selection.captures, selection.citations, selection.not_recorded)


def _of_snapshot(session: Session, snapshot_id: str) -> Selection:
    captures = _stored(session, captures_of_snapshot(session, snapshot_id))
    items = [
        _citation_item(session, c) for c in citations_matching(session, snapshot_id=snapshot_id)
    ]
    return Selection(f"snapshot {snapshot_id}", tuple(captures), tuple(items))


def _of_url(session: Session, url: str) -> Selection:
    captures = _stored(session, captures_of(session, url))
    items = [_citation_item(session, c) for c in citations_matching(session, url=url)]
    return Selection(f"URL {url}", tuple(captures), tuple(items))


def _of_citations(session: Session, ids: list[str], *, missing: tuple[str, ...] = ()) -> Selection:
    """The citations, and for each snapshot they were pinned to or checked against, its first
    capture from the citation's URL (else its first capture)."""
    citations = [_citation_item(session, find_citation(session, i)) for i in dict.fromkeys(ids)]
    wanted: dict[str, str | None] = {}
    for citation in citations:
        snapshots = [citation.snapshot_id, *(v.snapshot_id for v in citation.verifications)]
        for snapshot_id in snapshots:
            if snapshot_id is not None:
                wanted.setdefault(snapshot_id, citation.url)
    captures = [
        item
        for snapshot_id, cited_url in wanted.items()
        if (item := _first_capture(session, snapshot_id, cited_url)) is not None
    ]
    return Selection("", tuple(captures), tuple(citations), missing)


def _of_file(session: Session, requests: tuple[CitationRequest, ...], name: str) -> Selection:
    """Every citation of the file that snap has recorded; a citation never checked still brings
    the snapshot it names (or the latest capture of its URL)."""
    recorded: list[str] = []
    extra: list[str] = []
    missing: list[str] = []
    for request in requests:
        citation_id = citation_id_of(request)
        if session.get(Citation, citation_id) is not None:
            recorded.append(citation_id)
            continue
        missing.append(request.label)  # never checked, whether or not its source is stored
        snapshot = _named_snapshot(session, request)
        if snapshot is not None:
            extra.append(snapshot.id)
    selection = _of_citations(session, recorded, missing=tuple(missing))
    have = set(selection.snapshot_ids)
    more = [
        item
        for snapshot_id in dict.fromkeys(extra)
        if snapshot_id not in have and (item := _first_capture(session, snapshot_id, None))
    ]
    return Selection(
        f"the citations of {name}",
        selection.captures + tuple(more),
        selection.citations,
        selection.not_recorded,
    )


def _named_snapshot(session: Session, request: CitationRequest) -> Snapshot | None:
    """The snapshot a citation names, else the latest capture of its URL (as verify reads it)."""
    if request.snapshot_id is not None:
        return (
            get_snapshot(session, request.snapshot_id)
            if DIGEST_PATTERN.match(request.snapshot_id)
            else None
        )
    capture = latest_capture(session, request.url or "")
    if capture is None or capture.snapshot_id is None:
        return None
    return get_snapshot(session, capture.snapshot_id)


def _citation_item(session: Session, citation: Citation) -> CitationItem:
    verifications = tuple(
        VerificationItem(
            id=v.id,
            status=v.status,
            snapshot_id=v.snapshot_id,
            span_start=v.span_start,
            span_end=v.span_end,
            reason=v.reason,
            verifier=v.verifier,
            normalizer=v.normalizer,
            checked_at=v.checked_at,
            run_id=v.run_id,
        )
        for v in verifications_of(session, citation.id)
    )
    return CitationItem(
        id=citation.id,
        url=citation.url,
        snapshot_id=citation.snapshot_id,
        exact=citation.exact,
        prefix=citation.prefix or "",
        suffix=citation.suffix or "",
        page=citation.page,
        claim_text=citation.claim_text,
        answer_id=citation.answer_id,
        created_at=citation.created_at,
        verifications=verifications,
    )


def _first_capture(session: Session, snapshot_id: str, url: str | None) -> CaptureItem | None:
    captures = _stored(session, captures_of_snapshot(session, snapshot_id))
    key = canonical_url(url) if url else None
    from_url = [
        c
        for c in captures
        if key is not None and key in (canonical_url(c.url), canonical_url(c.final_url))
    ]
    chosen = from_url or captures
    return chosen[0] if chosen else None


def _stored(session: Session, captures: Any) -> list[CaptureItem]:
    items = []
    for capture in captures:
        if capture.outcome != CaptureOutcome.STORED or capture.snapshot_id is None:
            continue
        snapshot = get_snapshot(session, capture.snapshot_id)
        if snapshot is not None:
            items.append(_capture_item(session, capture, snapshot))
    return items


def _capture_item(session: Session, capture: Capture, snapshot: Snapshot) -> CaptureItem:
    extraction = choose_extraction(session, snapshot.id)
    return CaptureItem(
        capture_id=capture.id,
        url=capture.url,
        final_url=capture.final_url or capture.url,
        fetched_at=capture.fetched_at,
        status=capture.http_status,
        provenance=dict(capture.provenance or {}),
        content_type=snapshot.content_type,
        raw_size=snapshot.raw_size,
        evidence=Evidence.of(snapshot, extraction),
    )
