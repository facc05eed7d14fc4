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

from records.attest.log_checks import LogProofs
from records.audit import CitationAudit, CitationRecord, VerificationRecord, audited
from records.evidence import Evidence, browser_blobs
from records.exports.evidence_html import (
    Changed,
    Closeness,
    Entry,
    Highlight,
    page_html,
    stored_capture,
)
from records.repository import choose_extraction, get_snapshot
from records.texts import SnapshotTexts
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
    workspace: Workspace, citation_ids: Sequence[str], log: LogProofs | None = None
) -> str:
    """One HTML document for ``citation_ids`` (each id as ``snap audit`` takes it).

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
    return page_html(entries, made_at=wire_time(now()), version=__version__)


def entry_for(
    workspace: Workspace, texts: SnapshotTexts, citation_id: str, log: LogProofs
) -> Entry:
    """What the page says about one citation: its audit report, and its stored text read now."""
    report, evidence = audited(
        workspace, citation_id=citation_id, url=None, snapshot_id=None, log=log
    )
    assert isinstance(report, CitationAudit)  # asked by citation id
    chosen = chosen_evidence(report.citation, evidence)
    if chosen is None:
        return Entry(report, problem="no snapshot of this source is recorded")
    if chosen.text_hash is None:
        return Entry(report, evidence=chosen, problem="the snapshot has no extracted text")
    try:
        source = texts.prepared(chosen)
    except (IntegrityError, BlobNotFound) as error:
        problem = f"the stored snapshot cannot be read back intact: {error.message}"
        return Entry(report, evidence=chosen, problem=problem)
    highlight = recorded_highlight(report, chosen) or found_now(report, source)
    closeness = None if highlight else closest_now(report, source)
    return Entry(
        report,
        screenshot=screenshot_of(workspace, report, chosen),
        evidence=chosen,
        text=source.source,
        highlight=highlight,
        closeness=closeness,
        link=live_link(report, source.source, highlight),
        changed=changed_copy(workspace, texts, report, chosen),
    )


def screenshot_of(
    workspace: Workspace, report: CitationAudit, chosen: Evidence
) -> tuple[str, bytes] | None:
    """The screenshot of the newest browser capture of the chosen snapshot, re-hashed as it is
    read; None when there is none or it cannot be read back intact (the blob list says so)."""
    captures = [c for c in report.captures if c.snapshot_id == chosen.snapshot_id]
    for capture in reversed(captures):
        for kind, digest, version in browser_blobs(dict(capture.provenance)):
            if kind != "screenshot":
                continue
            try:
                png = workspace.stores.store_for(chosen).get(kind, digest, version_id=version)
            except (IntegrityError, BlobNotFound):
                return None
            return digest, png
    return None


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
    capture = stored_capture(report)
    return wire_time(capture.fetched_at) if capture else None


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


def live_link(report: CitationAudit, text: str, highlight: Highlight | None) -> str | None:
    """The live page's URL with a ``#:~:text=`` directive for a verified quote; only for web
    pages (a link never points at a local file or another scheme)."""
    checks = report.verifications
    if highlight is None or highlight.status != Status.QUOTE_FOUND:
        return None
    if not checks or checks[-1].status is not Status.QUOTE_FOUND:
        return None  # found once, but not by the latest check: not a verified quote now
    url = live_url(report)
    if url is None:
        return None
    try:
        fragment = text_fragment(text, highlight.start, highlight.end)
    except ValueError:
        return None
    return url.split("#", 1)[0] + fragment


def live_url(report: CitationAudit) -> str | None:
    """The page snap fetched, as a browser will read the link: the WHATWG serialisation of a
    URL whose host snap and browsers read alike (``snapshotter.weburl``), else no link, so a
    live link never leads to another host than the one captured."""
    from snapshotter.weburl import InvalidURL, web_url

    capture = stored_capture(report)
    url = (capture and (capture.final_url or capture.url)) or report.citation.url
    if not url:
        return None
    try:
        return web_url(str(url)).href
    except InvalidURL:
        return None
