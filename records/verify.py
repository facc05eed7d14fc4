"""``snap verify``: check citations against stored, digest-checked snapshots and record each check.

The order of checks for one citation, and why:
1. resolve the snapshot through the database only (input never names a blob);
2. read its text through the store, which re-hashes it (a tampered blob is never matched);
3. compare the fingerprints the citation carries with the stored ones (stale citation);
4. match the quote, then its position and page (a quote found elsewhere is reported, not moved).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from records.attest.checks import seal_checks_of
from records.evidence import Evidence
from records.inputs import QUOTED, SNIPPET, UNQUOTED, CitationRequest, Position, VerifyInput
from records.offset_units import span_units_in
from records.outcome import (
    NO_QUOTE,
    NO_QUOTE_REASON,
    SNIPPET_NOT_VERBATIM,
    SNIPPET_REASON,
    CitationResult,
    Outcome,
    count_by_status,
    stored_details,
)
from records.rows import (
    CaptureRow,
    ExtractionRow,
    SnapshotRow,
    capture_rows_of_snapshot,
    chosen_extraction,
    citation_id_for,
    citation_rows,
    extraction_rows,
    idempotency_key,
    latest_capture_row,
    pin_first_snapshot,
    record_citations,
    record_verifications,
    snapshot_row,
)
from records.texts import SnapshotTexts
from records.urls import lookup_keys, without_tracking
from records.vocabulary import CaptureOutcome
from records.workspace import Workspace
from snapshotter.errors import BlobNotFound, InputError, IntegrityError, SnapError
from snapshotter.store.base import DIGEST_PATTERN
from snapshotter.weburl import has_web_scheme, refuse_control_characters
from verifier import (
    NORMALIZER_ID,
    VERIFIER_ID,
    Closest,
    PreparedSource,
    Status,
    TextPositionSelector,
    position_from_utf16,
    resolve,
)
from verifier.errors import OffsetError, VerifierError

NO_TEXT_REASONS = {
    "no_extractable_text": "the snapshot has no extractable text (encrypted or image-only PDF?)",
    "no_text_extractor": "no text extractor for this content type",
}
TOO_SHORT = "the stored text is too short to hold the page (a login wall or a script-only page?)"


@dataclass(frozen=True)
class AnswerCounts:
    """What the checks of one group of results found: a whole run's, or one answer's."""

    answer_id: str | None
    total: int
    quote_found: int
    by_status: dict[Status, int]

    @classmethod
    def of(cls, results: list[CitationResult], answer_id: str | None = None) -> AnswerCounts:
        found = sum(result.passed for result in results)
        return cls(answer_id, len(results), found, count_by_status(results))

    @property
    def share_verified(self) -> float:
        """The share of the claims whose quote was found (four places, as snap shows it)."""
        return round(self.quote_found / self.total, 4)


@dataclass(frozen=True)
class VerifyReport:
    """``records.wire.verify_report_json`` writes its JSON; the renderers read it here."""

    results: list[CitationResult]
    is_answer: bool = False
    answer_ids: tuple[str | None, ...] = ()  # of each result, for the per-answer summary
    input_format: str = "snap"

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    @property
    def counts(self) -> AnswerCounts:
        """The counts of the whole run."""
        return AnswerCounts.of(self.results)

    def per_answer(self) -> list[AnswerCounts]:
        """The same counts for each answer of the input (a conversation has several)."""
        grouped: dict[str | None, list[CitationResult]] = {}
        for answer_id, result in zip(self.answer_ids, self.results, strict=True):
            grouped.setdefault(answer_id, []).append(result)
        return [AnswerCounts.of(results, answer_id) for answer_id, results in grouped.items()]


@dataclass(frozen=True)
class _Planned:
    """One request with everything the database says about it, read before any blob I/O."""

    request: CitationRequest
    item: int  # its place in the input: part of the verification's idempotency key
    evidence: Evidence | None
    url: str | None
    early: Outcome | None = None  # decided without reading any blob (unknown snapshot)


@dataclass
class _Checked:
    planned: _Planned
    outcome: Outcome
    source: PreparedSource | None

    @property
    def request(self) -> CitationRequest:
        return self.planned.request

    @property
    def evidence(self) -> Evidence | None:
        return self.planned.evidence


def no_checkpoint() -> None:
    """The default checkpoint: a run is never stopped from outside."""


CaptureMissing = Callable[[Workspace, str], None]
"""How ``--fetch`` captures one cited web URL it found without a snapshot: returns once one is
recorded, raises SnapError when it cannot be (``capture_if_still_missing``; the HTTP service
passes one that shares a capture between its requests for the same URL)."""


def capture_if_still_missing(workspace: Workspace, url: str) -> None:
    """Capture ``url`` unless a stored capture of it was recorded since the run looked: by
    another run at the same time (another request of the service, another process), so a
    capture that just ended is not made again. One short read, then the capture, which holds
    no transaction across the network or the store."""
    from records.capture import capture_source  # only --fetch captures

    with workspace.db.reading() as session:
        if latest_capture_row(session.connection(), url) is not None:
            return
    capture_source(workspace, url, web_only=True)


def verify_citations(
    workspace: Workspace,
    given: VerifyInput,
    *,
    fetch_missing: bool = False,
    checkpoint: Callable[[], None] = no_checkpoint,
    capture_missing: CaptureMissing = capture_if_still_missing,
) -> VerifyReport:
    """Check every citation in ``given``; every check is recorded, whatever its status.

    Three steps, so no transaction is ever held across blob I/O or matching: read what the
    database knows (one short read), check against the stored blobs (no transaction), record
    citations and verifications (one short write, one multi-row insert).

    ``checkpoint`` is called before each capture, each citation's planning and each check; it
    stops the run by raising (the HTTP service's deadline). Nothing is recorded then: the
    checks are written in the last step only, so a stopped run leaves no partial record.
    ``capture_missing`` makes each capture of ``fetch_missing``."""
    refuse_unstorable_input(given)
    fetch_errors = (
        capture_missing_sources(workspace, given, checkpoint, capture_missing)
        if fetch_missing
        else {}
    )
    try:
        with workspace.db.reading() as session:
            lookups = _Lookups(session, [citation_id_of(r) for r in given.requests])
            planned = []
            for item, request in enumerate(given.requests):
                checkpoint()
                planned.append(plan_request(lookups, request, item, fetch_errors))
            documents = plan_documents(lookups, given) if given.is_answer else []
        workspace.stores.check_all(
            [p.evidence for p in [*planned, *documents] if p.evidence is not None]
        )
        seals = seal_checks_of(workspace)
        texts = SnapshotTexts(workspace.stores, shared=workspace.shared_prepared(), seals=seals)
        checked = []
        for planned_request in planned:
            checkpoint()
            checked.append(check_planned(texts, planned_request))
        if given.is_answer:
            everything = checked + read_documents(texts, documents)
            checked = [mark_found_elsewhere(item, everything) for item in checked]
        run_id = uuid.uuid4().hex
        with workspace.db.session() as session:
            results = record_checks(session, checked, run_id)
    except (InputError, VerifierError) as error:
        if given.origin is None:
            raise
        raise InputError(f"{given.origin}: {error.message}") from None
    return VerifyReport(
        results,
        is_answer=given.is_answer,
        answer_ids=tuple(request.answer_id for request in given.requests),
        input_format=given.input_format,
    )


def refuse_unstorable_input(given: VerifyInput) -> None:
    """Refuse (exit 2, HTTP 400) a citation whose id, URL, snapshot id or quote holds a NUL or
    another character the database cannot store, before anything is looked up or recorded."""
    for request in given.requests:
        for name in ("citation_id", "url", "snapshot_id", "answer_id", "page"):
            value = getattr(request, name)
            if value is not None:
                refuse_control_characters(value, f"{request.label}: {name}")
        texts = [request.claim_text, request.claim.text if request.claim else None]
        if request.quote is not None:
            texts += [request.quote.exact, request.quote.prefix, request.quote.suffix]
        for text in texts:
            if text is not None:
                refuse_control_characters(text, f"{request.label}: the quote", free_text=True)
    for document in given.documents:
        for value in (document.url, document.snapshot_id):
            if value is not None:
                refuse_control_characters(value, "a given document")


def capture_missing_sources(
    workspace: Workspace,
    given: VerifyInput,
    checkpoint: Callable[[], None] = no_checkpoint,
    capture_missing: CaptureMissing = capture_if_still_missing,
) -> dict[str, str]:
    """``--fetch``: capture each cited web URL that has no snapshot yet, one after the other
    (``capture_missing``), after one read of which have none.

    Only http and https: citations come from model output, and a model naming a local path
    must never make snap read a file from this machine. Returns why each failed capture failed
    (it is also recorded as a failed capture).
    """
    cited = [(r.url, r.snapshot_id) for r in given.requests]
    cited += [(d.url, d.snapshot_id) for d in given.documents]
    with workspace.db.reading() as session:
        connection = session.connection()
        missing = {
            url
            for url, snapshot_id in cited
            if snapshot_id is None and url and latest_capture_row(connection, url) is None
        }
    from records.capture import web_url_refusal  # only --fetch captures

    errors = {}
    for url in sorted(u for u in missing if u):
        checkpoint()
        refused = web_url_refusal(url, "--fetch captures only http and https URLs")
        if refused is not None:
            errors[url] = refused
            continue
        try:
            capture_missing(workspace, url)
        except SnapError as error:  # recorded as failed where it got that far; others go on
            errors[url] = error.message
    return errors


class _Lookups:
    """What planning asks the database, asked once per input: an answer's claims mostly cite
    a few URLs, so each URL's latest capture, each snapshot's extractions and captures are
    looked up once, and the recorded citations are read in one query. Plain rows read by Core
    statements (``records.repository``): planning only reads, and ORM objects cost more to
    load than the statements do."""

    def __init__(self, session: Session, citation_ids: list[str]) -> None:
        self.connection = session.connection()
        self.citations = citation_rows(self.connection, citation_ids)
        self._captures: dict[str, CaptureRow | None] = {}
        self._extractions: dict[str, list[ExtractionRow]] = {}
        self._snapshots: dict[str, SnapshotRow | None] = {}
        self._of_snapshot: dict[str, list[CaptureRow]] = {}

    def snapshot(self, snapshot_id: str) -> SnapshotRow | None:
        if snapshot_id not in self._snapshots:
            self._snapshots[snapshot_id] = snapshot_row(self.connection, snapshot_id)
        return self._snapshots[snapshot_id]

    def latest_capture(self, url: str) -> CaptureRow | None:
        if url not in self._captures:
            self._captures[url] = latest_capture_row(self.connection, url)
        return self._captures[url]

    def extraction(
        self, snapshot_id: str, pinned: int | None, text_hash: str | None
    ) -> ExtractionRow | None:
        """``records.repository.choose_extraction``'s choice."""
        if snapshot_id not in self._extractions:
            self._extractions[snapshot_id] = extraction_rows(self.connection, snapshot_id)
        return chosen_extraction(self._extractions[snapshot_id], pinned, text_hash)

    def url_of_snapshot(self, snapshot_id: str) -> str | None:
        captures = self.captures_of_snapshot(snapshot_id)
        return captures[0].url if captures else None

    def captures_of_snapshot(self, snapshot_id: str) -> list[CaptureRow]:
        if snapshot_id not in self._of_snapshot:
            self._of_snapshot[snapshot_id] = capture_rows_of_snapshot(self.connection, snapshot_id)
        return self._of_snapshot[snapshot_id]

    def sealed(self, request: CitationRequest, evidence: Evidence) -> Evidence:
        """The evidence with the capture it is read through, whose seal the check reads with
        the blobs: the URL's latest capture when the citation names no snapshot, else the
        snapshot's newest stored capture (from the captures planning reads anyway)."""
        if request.snapshot_id is None:
            return evidence.sealed_by(self.latest_capture(request.url or ""))
        stored = [
            c
            for c in self.captures_of_snapshot(evidence.snapshot_id)
            if c.outcome == CaptureOutcome.STORED
        ]
        return evidence.sealed_by(stored[-1] if stored else None)


def resolve_snapshot(lookups: _Lookups, request: CitationRequest) -> SnapshotRow | None:
    if request.snapshot_id is not None:
        if not DIGEST_PATTERN.match(request.snapshot_id):
            return None
        return lookups.snapshot(request.snapshot_id)
    capture = lookups.latest_capture(request.url or "")
    if capture is None or capture.snapshot_id is None:
        return None
    return lookups.snapshot(capture.snapshot_id)


def plan_request(
    lookups: _Lookups, request: CitationRequest, item: int, fetch_errors: dict[str, str]
) -> _Planned:
    snapshot = resolve_snapshot(lookups, request)
    if snapshot is None:
        return _Planned(request, item, None, request.url, unknown_snapshot(request, fetch_errors))
    captures = lookups.captures_of_snapshot(snapshot.id) if request.snapshot_id else ()
    if request.url and request.snapshot_id and not captured_from(captures, request.url):
        reason = f"snapshot {snapshot.id} was never captured from {request.url}"
        return _Planned(
            request, item, None, request.url, Outcome(Status.UNKNOWN_SNAPSHOT, reason=reason)
        )
    recorded = lookups.citations.get(citation_id_of(request))
    pinned = recorded.extraction_id if recorded and recorded.snapshot_id == snapshot.id else None
    extraction = lookups.extraction(snapshot.id, pinned, (request.hashes or {}).get("text"))
    url = request.url or lookups.url_of_snapshot(snapshot.id)
    evidence = lookups.sealed(request, Evidence.of(snapshot, extraction))
    return _Planned(request, item, evidence, url)


def plan_documents(lookups: _Lookups, given: VerifyInput) -> list[_Planned]:
    """Sources the model was given but that no citation of this input names: a quote missing
    from its cited document is looked for in these too (``foundElsewhere``)."""
    planned = []
    for document in given.documents:
        request = CitationRequest(
            label="document",
            quote=None,
            url=document.url,
            snapshot_id=document.snapshot_id,
            kind=UNQUOTED,
            details={"documentIndex": document.index},
        )
        snapshot = resolve_snapshot(lookups, request)
        if snapshot is None:
            continue
        extraction = lookups.extraction(snapshot.id, None, None)
        evidence = lookups.sealed(request, Evidence.of(snapshot, extraction))
        if evidence.text_hash is not None:
            planned.append(_Planned(request, -1, evidence, request.url))
    return planned


def read_documents(texts: SnapshotTexts, documents: list[_Planned]) -> list[_Checked]:
    """The given documents' texts, re-hashed like every read; one that fails is left out."""
    read = []
    for document in documents:
        assert document.evidence is not None
        try:
            source = texts.prepared(document.evidence)
        except (IntegrityError, BlobNotFound):
            continue
        # a document given with the answer is searched for quotes, never checked or recorded
        read.append(_Checked(document, Outcome(Status.NO_QUOTE), source))
    return read


def check_planned(texts: SnapshotTexts, planned: _Planned) -> _Checked:
    if planned.early is not None or planned.evidence is None:
        return _Checked(planned, planned.early or Outcome(Status.UNKNOWN_SNAPSHOT), None)
    outcome, source = check_against(texts, planned.evidence, planned.request)
    return _Checked(planned, outcome, source)


def captured_from(captures: Sequence[CaptureRow], url: str) -> bool:
    """A citation naming both a URL and a snapshot is only as good as a capture linking them
    (the URL without tracking parameters links them too: ``records.urls``)."""
    untracked = without_tracking(url)
    keys = {*lookup_keys(url), *(lookup_keys(untracked) if untracked else [])}
    return any(keys & {c.url_key, c.final_url_key} for c in captures)


def unknown_snapshot(request: CitationRequest, fetch_errors: dict[str, str]) -> Outcome:
    if request.details.get("sourceProblem"):
        reason = str(request.details["sourceProblem"])
    elif request.snapshot_id is None and request.url in fetch_errors:
        reason = f"could not capture {request.url}: {fetch_errors[request.url]}"
    elif request.snapshot_id is None:
        reason = f"no snapshot of {request.url} has been captured ({_how_to_capture(request.url)})"
    elif not DIGEST_PATTERN.match(request.snapshot_id):
        reason = "the snapshot id is not of the form sha256:<64 lowercase hex>"
    else:
        reason = "no snapshot with this id is recorded"
    return Outcome(Status.UNKNOWN_SNAPSHOT, reason=reason)


def _is_file_url(url: str | None) -> bool:
    return (url or "").strip().lower().startswith("file:")


def _how_to_capture(url: str | None) -> str:
    """The advice that works for this URL: ``--fetch`` captures only http and https; a local
    file is captured by its path; anything else (``ftp:``) snap cannot capture at all."""
    if _is_file_url(url):
        return "capture it with snap fetch PATH"
    if has_web_scheme(url or ""):  # in every shell's terms: this line is also the service's
        return "capture it with snap fetch URL, or verify with --fetch; fetch=true over HTTP"
    return "snap captures only http and https URLs, and local files by their path"


def check_against(
    texts: SnapshotTexts, evidence: Evidence, request: CitationRequest
) -> tuple[Outcome, PreparedSource | None]:
    """Integrity (the blobs and the seal of the capture they are read through), then
    fingerprints, then the quote, its position and its page; the seal as checked is kept on
    the outcome (``seal``), so a capture that was never signed or stamped says so.

    ``integrity_failure`` only for bytes that do not hash, blobs gone from the store they
    were written to, or a seal that does not hold; a store that cannot be reached raises
    StoreError (nothing is recorded)."""
    outcome, source = _check_against(texts, evidence, request)
    seal = texts.seal(evidence) if evidence.text_hash is not None else None
    if seal is None:
        return outcome, source
    return replace(outcome, details={**outcome.details, "seal": seal}), source


def _check_against(
    texts: SnapshotTexts, evidence: Evidence, request: CitationRequest
) -> tuple[Outcome, PreparedSource | None]:
    snapshot_id = evidence.snapshot_id
    if evidence.text_hash is None:
        reason = next(
            (NO_TEXT_REASONS[f] for f in evidence.flags if f in NO_TEXT_REASONS),
            "the snapshot has no text",
        )
        return Outcome(Status.COULD_NOT_CHECK, snapshot_id, reason=reason), None
    try:
        source = texts.prepared(evidence)
    except (IntegrityError, BlobNotFound) as error:
        return Outcome(Status.INTEGRITY_FAILURE, snapshot_id, reason=error.message), None
    position = to_codepoints(request.position, source.source, request.label)
    stale = stale_fingerprint(request, evidence)
    if stale is not None:
        return Outcome(Status.STALE_FINGERPRINT, snapshot_id, reason=stale), source
    if request.kind == UNQUOTED or request.quote is None:
        return unquoted(source, snapshot_id, request), source
    outcome = match_quote(source, evidence, request, position)
    if request.kind == SNIPPET and outcome.status == Status.NOT_FOUND:
        return replace(outcome, status=SNIPPET_NOT_VERBATIM, reason=SNIPPET_REASON), source
    return outcome, source


def unquoted(source: PreparedSource, snapshot_id: str, request: CitationRequest) -> Outcome:
    """A citation that quotes nothing never passes; the passage of the source closest to the
    claim is shown as a hint for the reader to judge, never as proof."""
    closest = None
    if request.claim_text:
        found = source.check(request.claim_text)
        if found.found and found.start is not None and found.end is not None:
            text = source.source[found.start : found.end]
            closest = Closest(1.0, text, found.start, found.end, ())
        else:
            closest = found.closest
    return Outcome(NO_QUOTE, snapshot_id, closest=closest, reason=NO_QUOTE_REASON)


def stale_fingerprint(request: CitationRequest, evidence: Evidence) -> str | None:
    stored = evidence.hashes
    for kind, claimed in (request.hashes or {}).items():
        if kind in stored and claimed != stored[kind]:
            return f"the citation's {kind} hash {claimed} differs from the stored {stored[kind]}"
    return None


def to_codepoints(position: Position | None, text: str, label: str) -> TextPositionSelector | None:
    if position is None:
        return None
    try:
        if position.unit == "utf16":
            return position_from_utf16(text, position.start, position.end)
        if position.end > len(text):
            raise OffsetError(f"offset {position.end} is past the end of the text ({len(text)})")
    except OffsetError as error:
        raise OffsetError(f"{label}: selector.position: {error.message}") from None
    return TextPositionSelector(position.start, position.end)


def match_quote(
    source: PreparedSource,
    evidence: Evidence,
    request: CitationRequest,
    position: TextPositionSelector | None,
) -> Outcome:
    assert request.quote is not None
    resolution = resolve(source, request.quote, position)
    outcome = Outcome(
        resolution.status,
        evidence.snapshot_id,
        resolution.start,
        resolution.end,
        resolution.matches,
        resolution.closest,
        resolution.reason,
    )
    if resolution.status in (Status.POSITION_MISMATCH, Status.CONTEXT_MISMATCH):
        found_at = [list(s) for s in resolution.spans]
        offsets = [span_units_in(source.offsets, start, end) for start, end in resolution.spans]
        outcome = replace(outcome, details={"foundAt": found_at, "foundAtOffsets": offsets})
    if resolution.status == Status.NOT_FOUND and "too_short" in evidence.flags:
        return replace(outcome, status=Status.COULD_NOT_CHECK, reason=TOO_SHORT)
    if resolution.status == Status.POSITION_MISMATCH:
        return replace(
            outcome,
            reason=outcome.reason or "the quote is in the source, but not at the cited position",
        )
    if resolution.status == Status.QUOTE_FOUND and request.page is not None:
        spans = resolution.spans or ((outcome.start or 0, outcome.end or 0),)
        return check_page(outcome, spans, evidence, request.page)
    return outcome


def check_page(
    outcome: Outcome, spans: tuple[tuple[int, int], ...], evidence: Evidence, page: str
) -> Outcome:
    """A PDF citation naming a page must find its quote on that page (any occurrence); a quote
    that runs across a page break is on each page it spans, so naming any of them is right."""
    pages = list(evidence.pages)
    if not pages:  # nothing to compare the page with: not a wrong position
        reason = f"the cited page {page} cannot be checked: the source has no pages"
        return replace(outcome, status=Status.COULD_NOT_CHECK, reason=reason)
    named = [p for p in pages if str(p["label"]) == page] or [
        p for p in pages if page.isdigit() and p["index"] == int(page) - 1
    ]
    for start, end in spans:
        if named and start < named[0]["end"] and named[0]["start"] < end:
            return replace(outcome, start=start, end=end, details={"page": page})
    first = spans[0][0] if spans else 0
    actual = next((p for p in pages if p["start"] <= first < p["end"]), None)
    where = f"page {actual['label']}" if actual else "no page"
    reason = (
        f"the quote is on {where}, not on page {page}"
        if named
        else f"the snapshot has no page {page}; the quote is on {where}"
    )
    return replace(
        outcome,
        status=Status.POSITION_MISMATCH,
        reason=reason,
        details={"page": page, "foundOnPage": actual["label"] if actual else None},
    )


def mark_found_elsewhere(item: _Checked, everything: list[_Checked]) -> _Checked:
    """A quote missing from its cited source but present in another source of the same answer
    stays not found, and says where it is: the model cited the wrong document."""
    quote = item.request.quote
    if item.outcome.status not in (Status.NOT_FOUND, SNIPPET_NOT_VERBATIM) or item.evidence is None:
        return item
    if quote is None:
        return item
    elsewhere = []
    seen = {item.evidence.snapshot_id}
    for other in everything:
        if other.evidence is None or other.source is None or other.evidence.snapshot_id in seen:
            continue
        seen.add(other.evidence.snapshot_id)
        found = other.source.check(quote.exact)
        if found.found and found.start is not None and found.end is not None:
            elsewhere.append(
                {
                    "snapshotId": other.evidence.snapshot_id,
                    "url": other.request.url,
                    "start": found.start,
                    "end": found.end,
                    "offsets": span_units_in(other.source.offsets, found.start, found.end),
                    **document_of(other.request),
                }
            )
    if not elsewhere:
        return item
    details = {**item.outcome.details, "foundElsewhere": elsewhere}
    return replace(item, outcome=replace(item.outcome, details=details))


def document_of(request: CitationRequest) -> dict[str, Any]:
    """How the input names a source (a provider's document index), for foundElsewhere."""
    index = request.details.get("documentIndex")
    return {} if index is None else {"documentIndex": index}


def with_request_details(outcome: Outcome, request: CitationRequest) -> Outcome:
    """The provider's own fields (type, document, position hints) and the claim's span, kept
    on the result and on the verification row: the claim stays apart from the quote."""
    extra = {k: v for k, v in request.details.items() if k != "sourceProblem"}
    if request.claim is not None and request.claim.span is not None:
        extra["claimSpan"] = dict(request.claim.span)
    if not extra:
        return outcome
    return replace(outcome, details={**extra, **outcome.details})


def asserted_of(request: CitationRequest) -> dict[str, Any]:
    """What the input asserts about the citation: its identity, whatever the database says."""
    return {
        "url": request.url,
        "snapshotId": request.snapshot_id,
        "exact": request.quote.exact if request.quote else "",
        "page": request.page,
        "answerId": request.answer_id,
        "claim": request.claim_text,
    }


def citation_id_of(request: CitationRequest) -> str:
    return citation_id_for(request.citation_id, asserted_of(request))


def record_checks(session: Session, checked: list[_Checked], run_id: str) -> list[CitationResult]:
    """Citations first (insert or confirm, pin), then every verification in one insert."""
    rows, citation_ids, outcomes = [], [], []
    citations = record_citations(
        session,
        [
            (
                citation_values(item.request, item.evidence, item.planned.url),
                asserted_of(item.request),
            )
            for item in checked
        ],
    )
    for item, citation in zip(checked, citations, strict=True):
        request, evidence = item.request, item.evidence
        if evidence is not None:
            citation = pin_first_snapshot(
                session, citation, evidence.snapshot_id, evidence.extraction_id
            )
        outcome = with_request_details(item.outcome, request)
        checked_outcome = replace(
            outcome, details={**outcome.details, "checked": checked_selector(request)}
        )
        extraction_id = evidence.extraction_id if evidence else None
        key = idempotency_key(
            citation.id, outcome.snapshot_id, extraction_id, run_id, item.planned.item
        )
        rows.append(verification_values(citation.id, checked_outcome, extraction_id, run_id, key))
        citation_ids.append(citation.id)
        outcomes.append(outcome)
    ids = record_verifications(session, rows)
    return [
        CitationResult.of(
            citation_id,
            item.planned.url,
            outcome,
            item.source,
            item.request.claim_text,
            ids.get(row["idempotency_key"]),
        )
        for citation_id, item, row, outcome in zip(
            citation_ids, checked, rows, outcomes, strict=True
        )
    ]


def checked_selector(request: CitationRequest) -> dict[str, Any]:
    """Exactly what this check was asked, kept on the verification row: a later reader sees
    what passed or failed, even when one citation id is checked with different selectors."""
    quote = request.quote
    checked: dict[str, Any] = {
        "quote": None
        if quote is None
        else {"exact": quote.exact, "prefix": quote.prefix, "suffix": quote.suffix}
    }
    if request.kind != QUOTED:
        checked["kind"] = request.kind
    if request.position is not None:
        position = request.position
        checked["position"] = {"start": position.start, "end": position.end, "unit": position.unit}
    if request.page is not None:
        checked["page"] = request.page
    if request.hashes:
        checked["hashes"] = dict(request.hashes)
    return checked


def citation_values(
    request: CitationRequest, evidence: Evidence | None, url: str | None
) -> dict[str, Any]:
    position = request.position
    return {
        "id": request.citation_id,
        "url": url,
        "snapshot_id": evidence.snapshot_id if evidence else None,
        "extraction_id": evidence.extraction_id if evidence else None,
        "claimed_snapshot": None if evidence else (request.snapshot_id or "")[:200] or None,
        "claimed_hashes": dict(request.hashes) if request.hashes else None,
        "exact": request.quote.exact if request.quote else "",
        "prefix": request.quote.prefix if request.quote else "",
        "suffix": request.quote.suffix if request.quote else "",
        "position_start": position.start if position else None,
        "position_end": position.end if position else None,
        "position_unit": position.unit if position else None,
        "page": request.page,
        "claim_text": request.claim_text,
        "answer_id": request.answer_id,
    }


def verification_values(
    citation_id: str, outcome: Outcome, extraction_id: int | None, run_id: str, key: str
) -> dict[str, Any]:
    closest = outcome.closest
    return {
        "citation_id": citation_id,
        "snapshot_id": outcome.snapshot_id,
        "extraction_id": extraction_id if outcome.snapshot_id else None,
        "run_id": run_id,
        "idempotency_key": key,
        "status": outcome.status,
        "span_start": outcome.start,
        "span_end": outcome.end,
        "matches": outcome.matches,
        "closest_text": closest.text.replace("\x00", "\ufffd") if closest else None,
        "closest_score": closest.score if closest else None,
        "reason": outcome.reason,
        "details": stored_details(outcome.details),
        "verifier": VERIFIER_ID,
        "normalizer": NORMALIZER_ID,
    }
