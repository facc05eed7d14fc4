"""``snap reverify``: re-check recorded citations against the latest snapshot of their source.

Work is grouped by snapshot, so each snapshot's text is read, digest-checked and tokenized once
however many citations point at it; that is what makes re-checking thousands of citations after
a source changes cheap.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from records.attest.checks import seal_checks_of
from records.capture import capture_source, web_url_refusal
from records.evidence import Evidence
from records.inputs import QUOTED, UNQUOTED, CitationRequest, Position
from records.models import Batch, Capture, Citation, Verification
from records.outcome import CitationResult, Outcome, count_by_status, details_of_row
from records.repository import (
    capture_time,
    choose_extraction,
    citation_keys_matching,
    citations_by_id,
    citations_matching,
    get_snapshot,
    latest_capture,
    newest_stored_capture,
)
from records.rows import idempotency_key, record_verifications
from records.texts import SnapshotTexts
from records.verify import check_against, verification_values
from records.vocabulary import BatchKind
from records.workspace import Workspace
from snapshotter.errors import InputError, SnapError
from snapshotter.times import wire_time_or_none
from verifier import Status, TextQuoteSelector
from verifier.errors import OffsetError

Progress = Callable[[int], None]


@dataclass(frozen=True)
class ReverifyReport:
    """``records.wire.reverify_report_json`` writes its JSON; the renderers read it here."""

    results: list[CitationResult]
    refetch_errors: dict[str, str]
    run_id: str = ""
    resumed: int = 0  # results already recorded by an earlier, interrupted try of this run

    @property
    def passed(self) -> bool:
        """A failed refetch fails the job: a cron job must not see success when nothing was
        captured again."""
        return not self.refetch_errors and all(result.passed for result in self.results)

    @property
    def by_status(self) -> dict[Status, int]:
        return count_by_status(self.results)


def select_citations(
    workspace: Workspace, *, url: str | None = None, since: datetime | None = None
) -> list[Citation]:
    with workspace.db.reading() as session:
        return list(citations_matching(session, url=url, since=since))


class CitationKey(NamedTuple):
    """What planning a run needs of a citation before its words are read: which source it is
    of.  A large run holds these for every citation and the citations themselves a chunk at a
    time (``reverify_in_chunks``)."""

    id: str
    url: str | None
    snapshot_id: str | None


class Sourced(Protocol):
    """A citation, or its key: what names the source to capture again."""

    @property
    def url(self) -> str | None: ...


def select_citation_keys(
    workspace: Workspace, *, url: str | None = None, since: datetime | None = None
) -> list[CitationKey]:
    """The keys of the citations ``select_citations`` gives, in the same order."""
    with workspace.db.reading() as session:
        return [CitationKey(*row) for row in citation_keys_matching(session, url=url, since=since)]


CHUNK = 5000
"""Citations a run holds at once: a run of more is re-verified a chunk at a time, each chunk the
citations of whole sources, so memory stays flat however many citations there are."""


def reverify_in_chunks(
    workspace: Workspace,
    keys: Sequence[CitationKey],
    *,
    progress: Progress | None = None,
    refetch_errors: dict[str, str] | None = None,
    run_id: str | None = None,
    new_run: bool = False,
    chunk: int = CHUNK,
) -> ReverifyReport:
    """``reverify`` of the citations ``keys`` name, loaded ``chunk`` at a time: up to ``chunk``
    citations, one call in their order; more, sorted by source (stable) and cut only between
    sources, so each source's text is read in one chunk and a chunk's citations are released
    before the next is loaded.  One run id for all: an interrupted run continues as a whole.
    ``new_run``: ``run_id`` is a new one (``new_run_id``), which has recorded nothing yet."""
    new_run = new_run or run_id is None
    run_id = run_id or new_run_id()
    results: list[CitationResult] = []
    resumed = 0
    for ids in source_chunks(keys, chunk):
        with workspace.db.reading() as session:
            citations = citations_by_id(session, ids)
        report = reverify(workspace, citations, progress=progress, run_id=run_id, new_run=new_run)
        del citations
        results += report.results
        resumed += report.resumed
    return ReverifyReport(results, refetch_errors or {}, run_id, resumed)


def new_run_id() -> str:
    """The id of a new run, known before it starts, so that a caller can name it even when the
    run is interrupted (``snap reverify --run`` continues it)."""
    return uuid.uuid4().hex


def source_chunks(keys: Sequence[CitationKey], chunk: int) -> Iterator[list[str]]:
    """The ids of ``keys`` in chunks of at least ``chunk`` (the last may be smaller), each
    holding whole sources: a source cut across two chunks would be read and planned twice."""
    if len(keys) <= chunk:
        yield [key.id for key in keys]
        return
    ordered = sorted(keys, key=_source_of)
    ids: list[str] = []
    for index, key in enumerate(ordered):
        ids.append(key.id)
        following = ordered[index + 1] if index + 1 < len(ordered) else None
        if following is None or (len(ids) >= chunk and _source_of(following) != _source_of(key)):
            yield ids
            ids = []


def _source_of(key: CitationKey) -> tuple[str, str]:
    """Citations of a URL are grouped by its latest snapshot, the others by their own."""
    return (key.url, "") if key.url else ("", key.snapshot_id or "")


def refetch_targets(citations: Sequence[Sourced]) -> list[str]:
    """The cited URLs ``refetch_sources`` tries, each once, in its order."""
    return sorted({c.url for c in citations if c.url})


def refetch_sources(
    workspace: Workspace,
    citations: Sequence[Sourced],
    progress: Callable[[int], None] | None = None,
) -> dict[str, str]:
    """Capture every cited web URL again; failures are recorded and reported, not fatal.
    ``progress`` is told of each URL tried (a capture can take seconds: a bar that waits
    for the checks would stand still meanwhile).

    Local paths and file URLs are never captured here: citations come from model output.
    """
    errors = {}
    for url in refetch_targets(citations):
        refused = web_url_refusal(url, "only http and https sources are captured again")
        if refused is not None:
            errors[url] = refused
        else:
            try:
                capture_source(workspace, url, web_only=True)
            except SnapError as error:
                errors[url] = error.message
        if progress is not None:
            progress(1)
    return errors


@dataclass(frozen=True)
class LatestCapture:
    """When a URL's latest capture was made, and the page it reached when that was another
    (a redirect): what a ``source_changed`` reason says of the newer capture."""

    fetched_at: str | None
    redirected_to: str | None

    @classmethod
    def of(cls, capture: Capture) -> LatestCapture:
        final = capture.final_url if capture.final_url_key != capture.url_key else None
        return cls(wire_time_or_none(capture.fetched_at), final)


@dataclass(frozen=True)
class _Group:
    latest: Evidence | None
    citations: list[Citation]


@dataclass
class _Plan:
    """Everything the database says about a reverify run, read in one short transaction."""

    groups: list[_Group]
    pinned: dict[str, Evidence]  # citation id -> the snapshot and extraction it is pinned to
    captured_at: dict[str, str | None]  # snapshot id -> when it was first captured
    done: list[CitationResult]  # already recorded by this run id (an interrupted earlier try)
    latest_of_url: dict[str, LatestCapture] = field(default_factory=dict)

    def evidence(self) -> list[Evidence]:
        latest = [g.latest for g in self.groups if g.latest is not None]
        return [*latest, *self.pinned.values()]


def reverify(
    workspace: Workspace,
    citations: Sequence[Citation],
    *,
    progress: Progress | None = None,
    refetch_errors: dict[str, str] | None = None,
    run_id: str | None = None,
    new_run: bool = False,
) -> ReverifyReport:
    """Re-check ``citations``, one short write transaction per snapshot group: an interrupted
    run keeps every group it finished, and the same ``run_id`` given again continues it
    without checking or recording those groups a second time.  A run id made here, or by a
    caller that says so (``new_run``), has recorded nothing: its earlier checks are not read."""
    new_run = new_run or run_id is None
    run_id = run_id or new_run_id()
    with workspace.db.reading() as session:
        plan = plan_reverify(session, citations, run_id, new_run=new_run)
    workspace.stores.check_all(plan.evidence())
    seals = seal_checks_of(workspace)
    texts = SnapshotTexts(workspace.stores, shared=workspace.shared_prepared(), seals=seals)
    results = list(plan.done)
    if progress is not None and plan.done:
        progress(len(plan.done))
    for group in plan.groups:
        results += check_group(workspace, texts, plan, group, run_id)
        if progress is not None:
            progress(len(group.citations))
    return ReverifyReport(results, refetch_errors or {}, run_id, len(plan.done))


MIN_RUN_PREFIX = 6  # as for batches (records.jobs.resolve_batch): one rule for every command


class UnknownRun(InputError):
    """``--run`` names no run snap recorded: continuing it would silently start a new run
    under an id the user mistyped (exit 2)."""


def recorded_run(workspace: Workspace, given: str) -> str:
    """The full id of the recorded run ``given`` names (``resolve_run``), for a command that
    continues a run: ``reverify`` itself runs under any id it is handed (a worker hands it its
    batch id; a caller may name a new run), so a user's id is checked before it is."""
    with workspace.db.reading() as session:
        return resolve_run(session, given)


def resolve_run(session: Session, given: str) -> str:
    """The run ``given`` names: a run id some check was recorded under, or a re-verification
    batch (whose run id is its batch id, recorded before any check), given whole or by a
    unique prefix of 6+ characters, as ``snap jobs`` takes batch ids."""
    if session.scalar(select(Batch.id).where(Batch.id == given, Batch.kind == BatchKind.REVERIFY)):
        return given
    if session.scalar(select(Verification.id).where(Verification.run_id == given).limit(1)):
        return given
    found: set[str] = set()
    if len(given) >= MIN_RUN_PREFIX and given.isalnum():
        runs = select(Verification.run_id).where(Verification.run_id.startswith(given))
        found |= {str(run) for run in session.scalars(runs.distinct().limit(2))}
        batches = select(Batch.id).where(
            Batch.id.startswith(given), Batch.kind == BatchKind.REVERIFY
        )
        found |= set(session.scalars(batches.limit(2)))
    if len(found) == 1:
        return found.pop()
    if found:
        raise InputError(f"several runs start with {given[:100]!r}: give more of the id")
    raise UnknownRun(
        f"no reverify run {given[:100]!r} is recorded: give the run id snap reverify printed"
        " (or a unique prefix of it), or leave out --run to start a new run"
    )


def check_group(
    workspace: Workspace, texts: SnapshotTexts, plan: _Plan, group: _Group, run_id: str
) -> list[CitationResult]:
    """Check a group with no transaction open, then record it in one multi-row insert."""
    checked = []
    for citation in group.citations:
        pinned = plan.pinned.get(citation.id)
        outcome, source, used = recheck(texts, citation, pinned, group.latest, plan)
        extraction_id = used.extraction_id if used is not None else None
        key = idempotency_key(citation.id, outcome.snapshot_id, extraction_id, run_id, 0)
        row = verification_values(citation.id, outcome, extraction_id, run_id, key)
        checked.append((citation, outcome, source, row))
    with workspace.db.session() as session:
        ids = record_verifications(session, [row for *_, row in checked])
    return [
        CitationResult.of(
            citation.id,
            citation.url,
            outcome,
            source,
            citation.claim_text,
            ids.get(row["idempotency_key"]),
        )
        for citation, outcome, source, row in checked
    ]


def plan_reverify(
    session: Session, citations: Sequence[Citation], run_id: str, *, new_run: bool = False
) -> _Plan:
    done_rows = {} if new_run else verifications_of_run(session, run_id, [c.id for c in citations])
    done = [result_of_row(c, done_rows[c.id]) for c in citations if c.id in done_rows]
    todo = [c for c in citations if c.id not in done_rows]
    latest_of_url: dict[str, LatestCapture] = {}
    groups = group_by_latest_snapshot(session, todo, latest_of_url)
    pinned = {}
    known: dict[
        tuple[str, int | None], Evidence | None
    ] = {}  # one query per snapshot, not per citation
    for citation in todo:
        if citation.snapshot_id is None:
            continue
        key = (citation.snapshot_id, citation.extraction_id)
        if key not in known:
            known[key] = pinned_evidence(session, *key)
        evidence = known[key]
        if evidence is not None:
            pinned[citation.id] = evidence
    snapshot_ids = {e.snapshot_id for e in [*pinned.values()]} | {
        g.latest.snapshot_id for g in groups if g.latest is not None
    }
    captured_at = {i: wire_time_or_none(capture_time(session, i)) for i in sorted(snapshot_ids)}
    return _Plan(groups, pinned, captured_at, done, latest_of_url)


def pinned_evidence(
    session: Session, snapshot_id: str, extraction_id: int | None
) -> Evidence | None:
    snapshot = get_snapshot(session, snapshot_id)
    if snapshot is None:
        return None
    extraction = choose_extraction(session, snapshot.id, pinned=extraction_id)
    # read through the snapshot's newest capture, whose seal is checked with the blobs
    return Evidence.of(snapshot, extraction).sealed_by(newest_stored_capture(session, snapshot.id))


def result_of_row(citation: Citation, row: Verification) -> CitationResult:
    """A check recorded by an earlier try of this run, as a result (without the stored quote:
    the blob is not read again)."""
    start, end = row.span_start, row.span_end
    outcome = Outcome(
        Status(row.status),
        row.snapshot_id,
        start,
        end,
        row.matches,
        None,
        row.reason,
        details_of_row(row.details),
    )
    return CitationResult(
        citation.id, citation.url, outcome, None, None, citation.claim_text, row.id
    )


def group_by_latest_snapshot(
    session: Session,
    citations: Sequence[Citation],
    captures_of_url: dict[str, LatestCapture] | None = None,
) -> list[_Group]:
    """Citations keyed by the newest snapshot of their URL (their own, if they have no URL),
    each snapshot read at its newest extraction. ``captures_of_url`` is told, for each URL,
    when its latest capture was made and where it led: two URLs may share a snapshot (one now
    redirects to the other), and a report says when and how this URL was captured."""
    latest_of_url: dict[str | None, str | None] = {}
    read_through: dict[str, Capture] = {}  # snapshot id -> the URL's latest capture of it
    groups: dict[str | None, list[Citation]] = defaultdict(list)
    for citation in citations:
        if citation.url not in latest_of_url:
            capture = latest_capture(session, citation.url) if citation.url else None
            latest_of_url[citation.url] = capture.snapshot_id if capture else None
            if capture is not None and capture.snapshot_id is not None:
                read_through.setdefault(capture.snapshot_id, capture)
            if capture is not None and citation.url and captures_of_url is not None:
                captures_of_url[citation.url] = LatestCapture.of(capture)
        groups[latest_of_url[citation.url] or citation.snapshot_id].append(citation)
    planned = []
    for key, group in groups.items():
        snapshot = get_snapshot(session, key) if key else None
        latest = None
        if snapshot is not None:
            capture = read_through.get(snapshot.id) or newest_stored_capture(session, snapshot.id)
            latest = Evidence.of(snapshot, choose_extraction(session, snapshot.id))
            latest = latest.sealed_by(capture)  # its seal is checked with the blobs
        planned.append(_Group(latest, group))
    return planned


def recheck(
    texts: SnapshotTexts,
    citation: Citation,
    pinned: Evidence | None,
    latest: Evidence | None,
    plan: _Plan,
) -> tuple[Outcome, Any, Evidence | None]:
    """First the citation in its own snapshot and extraction, with its position and
    fingerprints: a citation that was never right there stays broken, whatever newer captures
    or extractions say. Then the latest capture at its newest extraction."""
    if citation.snapshot_id is None and citation.claimed_snapshot:
        reason = f"the cited snapshot {citation.claimed_snapshot} was never captured"
        if citation.url:  # a citation may name its snapshot alone
            reason += f" from {citation.url}"
        return Outcome(Status.UNKNOWN_SNAPSHOT, reason=reason), None, None
    if pinned is not None:
        own, source = check_stored(texts, pinned, request_of(citation, in_own_snapshot=True))
        if own.status != Status.QUOTE_FOUND or latest is None or same_text(latest, pinned):
            return own, source, pinned
    if latest is None:
        reason = "no snapshot of this citation's source"
        return Outcome(Status.UNKNOWN_SNAPSHOT, reason=reason), None, None
    outcome, source = check_stored(texts, latest, request_of(citation, in_own_snapshot=False))
    if outcome.status == Status.NOT_FOUND and pinned is not None:
        newest = plan.latest_of_url.get(citation.url or "")
        return changed(outcome, pinned, latest, plan.captured_at, newest), source, latest
    return outcome, source, latest


def same_text(one: Evidence, other: Evidence) -> bool:
    return (one.snapshot_id, one.text_hash) == (other.snapshot_id, other.text_hash)


def changed(
    outcome: Outcome,
    pinned: Evidence,
    latest: Evidence,
    captured_at: dict[str, str | None],
    latest_capture: LatestCapture | None = None,
) -> Outcome:
    """``source_changed``: found where it was cited, not in the newer capture or extraction."""
    if pinned.snapshot_id == latest.snapshot_id:
        details: dict[str, Any] = {
            "pinnedExtractionId": pinned.extraction_id,
            "latestExtractionId": latest.extraction_id,
            "latestExtractor": latest.extractor,
        }
        reason = (
            f"the quote is in the cited extraction {pinned.extraction_id} of {pinned.snapshot_id}"
            f" but not in its newer extraction {latest.extraction_id} ({latest.extractor}):"
            " the same bytes, extracted differently"
        )
        return replace(
            outcome,
            status=Status.SOURCE_CHANGED,
            reason=reason,
            details={**outcome.details, **details},
        )
    latest_at = latest_capture.fetched_at if latest_capture else captured_at.get(latest.snapshot_id)
    details = {
        "pinnedSnapshotId": pinned.snapshot_id,
        "pinnedCapturedAt": captured_at.get(pinned.snapshot_id),
        "latestCapturedAt": latest_at,
    }
    redirected = latest_capture.redirected_to if latest_capture else None
    reached = f", reached by redirect to {redirected}" if redirected else ""
    reason = (
        f"the quote is in the cited snapshot {pinned.snapshot_id} (captured "
        f"{details['pinnedCapturedAt']}) but not in the latest capture {latest.snapshot_id} "
        f"(captured {latest_at}{reached})"
    )
    return replace(
        outcome, status=Status.SOURCE_CHANGED, reason=reason, details={**outcome.details, **details}
    )


def check_stored(
    texts: SnapshotTexts, evidence: Evidence, request: CitationRequest
) -> tuple[Outcome, Any]:
    """A stored citation with an impossible position fails alone; it never stops the batch."""
    try:
        return check_against(texts, evidence, request)
    except OffsetError as error:
        return Outcome(Status.POSITION_MISMATCH, evidence.snapshot_id, reason=error.message), None


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


RUN_FILTER_LIMIT = 2 * CHUNK  # beyond this many citations, reading the whole run is cheaper
IDS_PER_QUERY = 1000  # citation ids in one IN list


def verifications_of_run(
    session: Session, run_id: str, citation_ids: Sequence[str] = ()
) -> dict[str, Verification]:
    """The checks an earlier try of this run recorded, by citation. A worker checks one
    snapshot group of a run of many, and ``reverify_in_chunks`` one chunk: each reads only its
    own citations' rows (a thousand ids a query), not the run's, which grows as it goes."""
    query = select(Verification).where(Verification.run_id == run_id)
    if not 0 < len(citation_ids) <= RUN_FILTER_LIMIT:
        return {row.citation_id: row for row in session.scalars(query)}
    found: dict[str, Verification] = {}
    for start in range(0, len(citation_ids), IDS_PER_QUERY):
        part = citation_ids[start : start + IDS_PER_QUERY]
        rows = session.scalars(query.where(Verification.citation_id.in_(part)))
        found.update((row.citation_id, row) for row in rows)
    return found
