"""The evidence page: one self-contained HTML file for a citation, or for every citation of an
answer, that someone who does not run snap can open in a browser, offline, and print.

Everything on it comes from the audit use case (``records.audit.audited``: the citation, its
snapshot with every blob re-hashed now at its recorded version, the captures of its URL and the
append-only verification log) and from the stored text, read back through the digest-checked
path (``records.texts.SnapshotTexts``). Nothing is asked of the database twice, and nothing is
fetched: the page is evidence of what snap holds, not of what the live page says today.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from records.attest.attest import CHECK_INCLUSION
from records.attest.log_checks import LogProofs
from records.audit import (
    CaptureRecord,
    CitationAudit,
    CitationRecord,
    ExtractionRecord,
    VerificationRecord,
    audited,
    audited_captures,
)
from records.evidence import Evidence, browser_blobs
from records.exports.evidence_html import (
    Changed,
    CheckRead,
    Closeness,
    Entry,
    Highlight,
    page_html,
)
from records.exports.selection import StoredCaptures
from records.models import Capture, Extraction
from records.repository import choose_extraction, get_snapshot
from records.texts import SnapshotTexts
from records.vocabulary import ExtractionSource
from records.workspace import Workspace
from snapshotter.errors import BlobNotFound, InputError, IntegrityError
from snapshotter.times import now, wire_time
from snapshotter.version import __version__
from verifier import PreparedSource
from verifier.closest import SIMILAR_ENOUGH_TO_SHOW
from verifier.status import Status
from verifier.text_fragments import text_fragment

MISMATCHES = (Status.POSITION_MISMATCH, Status.CONTEXT_MISMATCH)


def render_evidence_page(
    workspace: Workspace,
    citation_ids: Sequence[str],
    log: LogProofs | None = None,
    attestations: Sequence[dict[str, Any]] | None = None,
) -> str:
    """One HTML document for ``citation_ids`` (each id as ``snap audit`` takes it).

    ``attestations``: the lines an export gathered (``records.attest.attest.
    export_attestations``), embedded as they are for the captures and checks each citation
    shows; without them the page gathers its own from ``log``.

    RecordNotFound (exit 1) for an id that is not recorded; StoreError (exit 3) when a store a
    snapshot was written to cannot be reached. A blob that is damaged or missing is not an
    error: the page says so, as ``snap audit`` does.
    """
    wanted = list(dict.fromkeys(citation_ids))
    if not wanted:
        raise InputError("give at least one citation id for the evidence page")
    texts = SnapshotTexts(workspace.stores, shared=workspace.shared_prepared())
    log = log or LogProofs(workspace)  # one read of the log for every citation's proofs
    entries = [entry_for(workspace, texts, citation_id, log) for citation_id in wanted]
    lines = (
        list(attestations)
        if attestations is not None
        else page_attestations(workspace, entries, log)
    )
    entries = [replace(entry, attestations=lines_of(entry, lines)) for entry in entries]
    return page_html(
        entries,
        made_at=wire_time(now()),
        version=__version__,
        check_inclusion=CHECK_INCLUSION,
    )


def entry_for(
    workspace: Workspace, texts: SnapshotTexts, citation_id: str, log: LogProofs
) -> Entry:
    """What the page says about one citation: its audit report, the capture and text each
    check read, and the stored text read now."""
    report, evidence = audited(
        workspace, citation_id=citation_id, url=None, snapshot_id=None, log=log
    )
    assert isinstance(report, CitationAudit)  # asked by citation id
    chosen = chosen_evidence(report.citation, evidence)
    reads, shown_id, extractions = what_checks_read(workspace, report)
    capture = shown_capture(workspace, report, shown_id, log)
    base = Entry(report, reads=reads, capture=capture)
    if chosen is None:
        return replace(base, problem="no snapshot of this source is recorded")
    base = replace(
        base,
        evidence=chosen,
        checked_text=extractions.get(chosen.extraction_id or -1),
        rendered=rendered_text(report, capture, chosen),
    )
    if chosen.text_hash is None:
        return replace(base, problem="the snapshot has no extracted text")
    try:
        source = texts.prepared(chosen)
    except (IntegrityError, BlobNotFound) as error:
        problem = f"the stored snapshot cannot be read back intact: {error.message}"
        return replace(base, problem=problem)
    highlight = recorded_highlight(report, chosen) or found_now(report, source)
    closeness = None if highlight else closest_now(report, source)
    return replace(
        base,
        screenshot=screenshot_of(workspace, capture, chosen),
        text=source.source,
        highlight=highlight,
        closeness=closeness,
        link=live_link(report, capture, source.source, highlight),
        changed=changed_copy(workspace, texts, report, chosen),
    )


def what_checks_read(
    workspace: Workspace, report: CitationAudit
) -> tuple[dict[int, CheckRead], int | None, dict[int, ExtractionRecord]]:
    """For each check, the capture it read its snapshot through and the extraction it was
    made against (``records.exports.selection.StoredCaptures.read_by``, the rule the exports
    select captures by); the capture the page shows, the one the latest check of the cited
    snapshot read (else the snapshot's first capture from the cited URL, as an export takes
    it); and every extraction named, by id."""
    citation = report.citation
    reads: dict[int, CheckRead] = {}
    extractions: dict[int, ExtractionRecord] = {}
    with workspace.db.reading() as session:
        stored = StoredCaptures(session)
        wanted = {v.extraction_id for v in report.verifications} | {citation.extraction_id}
        for extraction_id in wanted - {None}:
            row = session.get(Extraction, extraction_id)
            if row is not None:
                extractions[row.id] = ExtractionRecord.of(row)
        for check in report.verifications:
            capture = None
            if check.snapshot_id is not None:
                capture = stored.read_by(
                    check.snapshot_id,
                    details=check.details,
                    checked_at=check.checked_at,
                    url=citation.url,
                )
            reads[check.verification_id] = CheckRead(
                capture_id=None if capture is None else capture.id,
                method=None if capture is None else capture.method,
                extraction=extractions.get(check.extraction_id or -1),
            )
        shown = [
            reads[v.verification_id].capture_id
            for v in report.verifications
            if v.snapshot_id == citation.snapshot_id
        ]
        if shown and shown[-1] is not None:
            shown_id: int | None = shown[-1]
        elif citation.snapshot_id is not None:
            shown_id = stored.first(citation.snapshot_id, citation.url)
        else:
            shown_id = None
    return reads, shown_id, extractions


def shown_capture(
    workspace: Workspace, report: CitationAudit, capture_id: int | None, log: LogProofs
) -> CaptureRecord | None:
    """The capture the page shows, with its seal checked now and its inclusion proof: as the
    audit of the cited URL reports it, or read alone when the URL's audit does not list it."""
    if capture_id is None:
        return None
    listed = [c for c in report.captures if c.capture_id == capture_id]
    if listed:
        return listed[0]
    found = audited_captures(workspace, [capture_id], log)
    return found[0] if found else None


def rendered_text(
    report: CitationAudit, capture: CaptureRecord | None, checked: Evidence
) -> ExtractionRecord | None:
    """The text a browser rendered from the cited bytes, when the check read another text:
    the shown capture's rendered text if it is a browser capture, else the snapshot's newest
    rendered text. None when the check read a rendered text (or a text equal to one), or none
    was ever rendered."""
    snapshot = report.snapshot
    if snapshot is None:
        return None
    rendered = [e for e in snapshot.extractions if e.source == ExtractionSource.RENDERED]
    if any(e.text_hash == checked.text_hash for e in rendered):
        return None  # the check read a rendered text, or one the very same as it
    drawn = {d for kind, d, _ in browser_blobs(dict(capture.provenance))} if capture else set()
    own = [e for e in rendered if e.text_hash in drawn]
    chosen = own or rendered
    return chosen[-1] if chosen else None


def screenshot_of(
    workspace: Workspace, capture: CaptureRecord | None, chosen: Evidence
) -> tuple[str, bytes] | None:
    """The screenshot of the capture the page shows, when it is a browser capture, re-hashed
    as it is read; None when it has none or it cannot be read back intact (the blob list says
    so). A browser capture no check read is not shown: the exports do not hold it."""
    if capture is None:
        return None
    for kind, digest, version in browser_blobs(dict(capture.provenance)):
        if kind != "screenshot":
            continue
        try:
            png = workspace.stores.store_for(chosen).get(kind, digest, version_id=version)
        except (IntegrityError, BlobNotFound):
            return None
        return digest, png
    return None


def page_attestations(
    workspace: Workspace, entries: list[Entry], log: LogProofs
) -> list[dict[str, Any]]:
    """The attestation lines of every capture and check the page shows, as an export gathers
    them (``records.attest.attest.export_attestations``), when no export handed them in."""
    from records.attest.attest import export_attestations

    captures: dict[int, dict[str, Any]] = {}
    checks: list[int] = []
    for entry in entries:
        for capture in shown_captures(entry):
            captures.setdefault(capture.capture_id, dict(capture.provenance))
        checks += [v.verification_id for v in entry.report.verifications]
    if not captures and not checks:
        return []
    with workspace.db.reading() as session:  # the checks' captures the URL's audit lacks
        for capture_id in entry_capture_ids(entries):
            if capture_id not in captures:
                row = session.get(Capture, capture_id)
                if row is not None:
                    captures[capture_id] = dict(row.provenance or {})
    return export_attestations(workspace, list(captures.items()), list(dict.fromkeys(checks)), log)


def shown_captures(entry: Entry) -> list[CaptureRecord]:
    return [entry.capture] if entry.capture is not None else []


def entry_capture_ids(entries: list[Entry]) -> list[int]:
    """Every capture a check of the page's citations read, and each capture shown."""
    ids: list[int] = []
    for entry in entries:
        ids += [c.capture_id for c in shown_captures(entry)]
        ids += [read.capture_id for read in entry.reads.values() if read.capture_id is not None]
    return list(dict.fromkeys(ids))


def lines_of(entry: Entry, lines: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """The attestation lines of what this entry shows: the capture shown and the captures its
    checks read, then its checks."""
    captures = set(entry_capture_ids([entry]))
    checks = {v.verification_id for v in entry.report.verifications}
    return tuple(
        line
        for line in lines
        if line.get("captureId") in captures or line.get("verificationId") in checks
    )


def changed_copy(
    workspace: Workspace, texts: SnapshotTexts, report: CitationAudit, cited: Evidence
) -> Changed | None:
    """For a citation whose latest check is ``source_changed``: the newer copy it was checked
    against, with its capture time and the passage of it closest to the quote, so the page
    shows what the source says now beside what it said in the copy cited."""
    checks = report.verifications
    if not checks or checks[-1].status is not Status.SOURCE_CHANGED:
        return None
    check = checks[-1]
    details = check.details or {}
    latest = latest_evidence(workspace, check)
    when = details.get("latestCapturedAt")
    cited_at = details.get("pinnedCapturedAt") or cited_capture_time(report)
    if latest is None or latest.text_hash is None:
        return Changed(cited_at, when, latest, None, None, "the newer copy has no stored text")
    try:
        source = texts.prepared(latest)
    except (IntegrityError, BlobNotFound) as error:
        problem = f"the newer copy cannot be read back intact: {error.message}"
        return Changed(cited_at, when, latest, None, None, problem)
    if latest.snapshot_id == cited.snapshot_id:
        when = cited_at  # the same bytes, extracted again: the same capture
    return Changed(cited_at, when, latest, source.source, closest_now(report, source), None)


def latest_evidence(workspace: Workspace, check: VerificationRecord) -> Evidence | None:
    """The snapshot and extraction a check read, from the records."""
    if not check.snapshot_id:
        return None
    with workspace.db.reading() as session:
        snapshot = get_snapshot(session, check.snapshot_id)
        if snapshot is None:
            return None
        extraction = choose_extraction(session, snapshot.id, pinned=check.extraction_id)
        evidence = Evidence.of(snapshot, extraction)
    workspace.stores.check_all([evidence])
    return evidence


def cited_capture_time(report: CitationAudit) -> str | None:
    """When the cited snapshot was captured: its latest capture from the cited URL."""
    snapshot_id = None if report.snapshot is None else report.snapshot.snapshot_id
    stored = [c for c in report.captures if c.snapshot_id == snapshot_id]
    return wire_time(stored[-1].fetched_at) if stored else None


def chosen_evidence(citation: CitationRecord, evidence: list[Evidence]) -> Evidence | None:
    """The extraction the citation is pinned to, else the newest (as ``snap verify`` reads)."""
    pinned = [e for e in evidence if e.extraction_id == citation.extraction_id]
    chosen = pinned or evidence[-1:]
    return chosen[0] if chosen else None


def checks_here(report: CitationAudit, evidence: Evidence) -> list[VerificationRecord]:
    """The recorded checks made against exactly this snapshot and extraction."""
    return [
        v
        for v in report.verifications
        if v.snapshot_id == evidence.snapshot_id
        and v.extraction_id in (evidence.extraction_id, None)
    ]


def recorded_highlight(report: CitationAudit, evidence: Evidence) -> Highlight | None:
    """Where the latest check of this text found the quote, as recorded in the log."""
    for check in reversed(checks_here(report, evidence)):
        status = check.status
        checked_at = wire_time(check.checked_at)
        if status is Status.QUOTE_FOUND and check.span:
            start, end = check.span
            return Highlight(start, end, Status.QUOTE_FOUND, checked_at)
        found_at = (check.details or {}).get("foundAt")
        if status in MISMATCHES and found_at:
            return Highlight(found_at[0][0], found_at[0][1], status, checked_at)
    return None


def found_now(report: CitationAudit, source: PreparedSource) -> Highlight | None:
    """A quote never recorded as found here (a stale fingerprint, say) whose words are in
    the text anyway: shown, and labelled as found while making this page."""
    exact = report.citation.exact
    if not exact:
        return None
    check = source.check(exact, closest=False)
    if not check.found or check.start is None or check.end is None:
        return None
    return Highlight(check.start, check.end, None, None)


def closest_now(report: CitationAudit, source: PreparedSource) -> Closeness | None:
    """The passage of the stored text closest to the quote (or, for a citation that quotes
    nothing, to the claim), with the words that differ, as the verifier finds it now."""
    citation = report.citation
    to = "quote"
    wanted = citation.exact
    if not wanted and citation.claim:
        to, wanted = "claim", citation.claim
    if not wanted:
        return None
    check = source.check(wanted)
    if check.closest is None or check.closest.score < SIMILAR_ENOUGH_TO_SHOW:
        return Closeness(to, None)
    return Closeness(to, check.closest)


def live_link(
    report: CitationAudit, capture: CaptureRecord | None, text: str, highlight: Highlight | None
) -> str | None:
    """The live page's URL with a ``#:~:text=`` directive for a verified quote; only for web
    pages (a link never points at a local file or another scheme)."""
    checks = report.verifications
    if highlight is None or highlight.status != Status.QUOTE_FOUND:
        return None
    if not checks or checks[-1].status is not Status.QUOTE_FOUND:
        return None  # found once, but not by the latest check: not a verified quote now
    url = live_url(report, capture)
    if url is None:
        return None
    try:
        fragment = text_fragment(text, highlight.start, highlight.end)
    except ValueError:
        return None
    return url.split("#", 1)[0] + fragment


def live_url(report: CitationAudit, capture: CaptureRecord | None = None) -> str | None:
    """The page snap fetched (``capture``, the one the page shows; else the latest capture of
    the cited URL that stored the cited snapshot), as a browser will read the link: the WHATWG
    serialisation of a URL whose host snap and browsers read alike (``snapshotter.weburl``),
    else no link, so a live link never leads to another host than the one captured."""
    from snapshotter.weburl import InvalidURL, web_url

    if capture is None:
        snapshot_id = None if report.snapshot is None else report.snapshot.snapshot_id
        stored = [c for c in report.captures if c.snapshot_id == snapshot_id]
        capture = stored[-1] if stored else None
    url = (capture and (capture.final_url or capture.url)) or report.citation.url
    if not url:
        return None
    try:
        return web_url(str(url)).href
    except InvalidURL:
        return None
