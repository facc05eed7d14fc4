"""What an export holds: the captures (with their snapshots) and the citations a selection names.

A selection is exactly one of a citation id, a snapshot id, a URL, or an answer file in any
format ``snap verify`` reads. Everything is read in one short read transaction into plain data,
so the blob reads and archive writing that follow hold no transaction open.

Which captures (``docs/evidence.md``, "What an export holds"):

* every selected citation brings the capture each of its checks read the snapshot through
  (``StoredCaptures.read_by``: the capture whose seal the check recorded), with the extraction
  that check was made against; the latest check's capture and text are the ones the evidence
  page shows, so the page and the archives describe the same capture. A snapshot the citation
  is pinned to but was never checked against brings its first capture from the citation's URL;
* ``--snapshot`` and ``--url`` bring every stored capture of the snapshot or URL besides;
* each capture carries every extraction of its snapshot, so the writer finds every text the
  capture's manifest names at its recorded version (``records.exports.warc``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from records.audit import find_citation, sealed_capture_id
from records.errors import RecordNotFound
from records.evidence import Evidence
from records.ids import resolve_citation_id, resolve_snapshot_id
from records.inputs import CitationRequest, DocumentMap, load_verify_input
from records.inputs.documents import NO_DOCUMENTS
from records.models import Capture, Citation, Extraction, Snapshot, Verification
from records.repository import (
    captures_of,
    captures_of_snapshot,
    citations_matching,
    extractions_of,
    get_snapshot,
    latest_capture,
    verifications_of,
)
from records.rows import chosen_extraction
from records.urls import lookup_keys
from records.verify import citation_id_of
from records.vocabulary import CaptureOutcome, ExtractionSource
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
    # the snapshot, and the text the latest selected check through this capture read (for a
    # capture no selected check read, the snapshot's newest extraction)
    evidence: Evidence
    texts: tuple[Evidence, ...] = ()  # the other texts selected checks read through it
    extractions: tuple[Evidence, ...] = ()  # every extraction of the snapshot, oldest first

    @property
    def snapshot_id(self) -> str:
        return self.evidence.snapshot_id

    @property
    def checked_texts(self) -> tuple[Evidence, ...]:
        """The texts checks read through this capture, the latest check's first."""
        return (self.evidence, *self.texts)


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
    extraction_id: int | None = None
    capture_id: int | None = None  # the stored capture it read the snapshot through


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
    extraction_id: int | None = None  # the extraction it is pinned to


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
    stored = StoredCaptures(session)
    citations = citations_matching(session, snapshot_id=snapshot_id)
    items = [_citation_item(stored, c) for c in citations]
    wanted = _Wanted.of([c.id for c in stored.of(snapshot_id) if c.snapshot_id], items)
    return Selection(f"snapshot {snapshot_id}", _capture_items(session, wanted), tuple(items))


def _of_url(session: Session, url: str) -> Selection:
    stored = StoredCaptures(session)
    items = [_citation_item(stored, c) for c in citations_matching(session, url=url)]
    wanted = _Wanted.of(_stored_ids(captures_of(session, url)), items)
    return Selection(f"URL {url}", _capture_items(session, wanted), tuple(items))


def _of_citations(session: Session, ids: list[str], *, missing: tuple[str, ...] = ()) -> Selection:
    """The citations, with the capture each of their checks read (``_Wanted.of``)."""
    stored = StoredCaptures(session)
    citations = [_citation_item(stored, find_citation(session, i)) for i in dict.fromkeys(ids)]
    wanted = _Wanted.of([], citations)
    for citation in citations:
        checked = {v.snapshot_id for v in citation.verifications}
        if citation.snapshot_id is not None and citation.snapshot_id not in checked:
            first = stored.first(citation.snapshot_id, citation.url)
            if first is not None:
                wanted.add(first, citation.extraction_id)
    return Selection("", _capture_items(session, wanted), tuple(citations), missing)


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
    stored = StoredCaptures(session)
    wanted = _Wanted()
    for snapshot_id in dict.fromkeys(extra):
        first = stored.first(snapshot_id, None) if snapshot_id not in have else None
        if first is not None:
            wanted.add(first, None)
    return Selection(
        f"the citations of {name}",
        selection.captures + _capture_items(session, wanted),
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


class StoredCaptures:
    """Each snapshot's stored captures, oldest first, read once for a whole selection."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._found: dict[str, list[Capture]] = {}

    def of(self, snapshot_id: str) -> list[Capture]:
        if snapshot_id not in self._found:
            self._found[snapshot_id] = [
                c
                for c in captures_of_snapshot(self.session, snapshot_id)
                if c.outcome == CaptureOutcome.STORED
            ]
        return self._found[snapshot_id]

    def read_by(
        self,
        snapshot_id: str,
        *,
        details: Mapping[str, Any] | None,
        checked_at: datetime,
        url: str | None,
    ) -> Capture | None:
        """The stored capture a check of ``snapshot_id`` read it through: the one whose seal
        the check recorded. For a check recorded before seals were, the capture ``snap verify``
        read then: the snapshot's newest stored capture from the cited URL (from anywhere when
        the citation names none, or none is from it) recorded no later than the check, else
        its first. One rule for the exports and the evidence page, so both show the same
        capture."""
        captures = self.of(snapshot_id)
        sealed = sealed_capture_id(details)
        named = [c for c in captures if c.id == sealed]
        if named:
            return named[0]
        chosen = _from_url(captures, url) or captures
        before = [c for c in chosen if c.fetched_at <= checked_at]
        if before:
            return before[-1]
        return chosen[0] if chosen else None

    def first(self, snapshot_id: str, url: str | None) -> int | None:
        """The snapshot's first stored capture from ``url`` (else its first): for a snapshot
        no selected check read."""
        captures = self.of(snapshot_id)
        found = (_from_url(captures, url) or captures)[:1]
        return found[0].id if found else None


def _citation_item(stored: StoredCaptures, citation: Citation) -> CitationItem:
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
            extraction_id=v.extraction_id,
            capture_id=_read_by(stored, v, citation.url),
        )
        for v in verifications_of(stored.session, citation.id)
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
        extraction_id=citation.extraction_id,
    )


def _read_by(stored: StoredCaptures, check: Verification, url: str | None) -> int | None:
    if check.snapshot_id is None:
        return None
    capture = stored.read_by(
        check.snapshot_id, details=check.details, checked_at=check.checked_at, url=url
    )
    return None if capture is None else capture.id


@dataclass
class _Wanted:
    """The captures an export holds, in the order first wanted, each with the extractions the
    selected checks read through it (the latest check's last; None: the newest)."""

    checked: dict[int, list[int | None]] = field(default_factory=dict)

    @classmethod
    def of(cls, capture_ids: list[int], citations: list[CitationItem]) -> _Wanted:
        """``capture_ids``, then the capture of each check of ``citations``, oldest first."""
        wanted = cls({capture_id: [] for capture_id in capture_ids})
        for citation in citations:
            for check in citation.verifications:
                if check.capture_id is not None:
                    wanted.add(check.capture_id, check.extraction_id)
        return wanted

    def add(self, capture_id: int, extraction_id: int | None) -> None:
        read = self.checked.setdefault(capture_id, [])
        if extraction_id in read:
            read.remove(extraction_id)
        read.append(extraction_id)


def _from_url(captures: list[Capture], url: str | None) -> list[Capture]:
    """The captures of ``url``, asked for or reached by redirect (none without a URL)."""
    keys = set(lookup_keys(url)) if url else set()
    return [c for c in captures if keys & {c.url_key, c.final_url_key}]


def _stored_ids(captures: Sequence[Capture]) -> list[int]:
    return [
        c.id for c in captures if c.outcome == CaptureOutcome.STORED and c.snapshot_id is not None
    ]


def _capture_items(session: Session, wanted: _Wanted) -> tuple[CaptureItem, ...]:
    items = []
    for capture_id, checked in wanted.checked.items():
        capture = session.get(Capture, capture_id)
        if capture is None or capture.snapshot_id is None:
            continue
        snapshot = get_snapshot(session, capture.snapshot_id)
        if snapshot is not None:
            items.append(_capture_item(session, capture, snapshot, checked))
    return tuple(items)


def _capture_item(
    session: Session, capture: Capture, snapshot: Snapshot, checked: list[int | None]
) -> CaptureItem:
    """The capture with the latest check's text as its evidence, the other checked texts, and
    every extraction of its snapshot."""
    extractions = extractions_of(session, snapshot.id)
    found: dict[int | None, Evidence] = {}
    for extraction_id in reversed(checked or [None]):  # the latest check's first
        text = _text(snapshot, chosen_extraction(extractions, extraction_id, None))
        found.setdefault(text.extraction_id, text)
    texts = list(found.values())
    return CaptureItem(
        capture_id=capture.id,
        url=capture.url,
        final_url=capture.final_url or capture.url,
        fetched_at=capture.fetched_at,
        status=capture.http_status,
        provenance=dict(capture.provenance or {}),
        content_type=snapshot.content_type,
        raw_size=snapshot.raw_size,
        evidence=texts[0],
        texts=tuple(texts[1:]),
        extractions=tuple(_text(snapshot, e) for e in extractions),
    )


def _text(snapshot: Snapshot, extraction: Extraction | None) -> Evidence:
    """The snapshot with one extraction, and what its text was made from (the snapshot's own
    columns describe its first extraction, made from the raw bytes)."""
    source = extraction.source if extraction is not None else ExtractionSource.RAW
    return replace(Evidence.of(snapshot, extraction), source=source)
