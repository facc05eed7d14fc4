"""``snap audit``: everything recorded about a citation, a URL or a snapshot, for a dispute.

Every blob the report mentions is read back through the store it was written to, at the version
recorded at capture, and re-hashed while the report is made, so the answer to "is the evidence
still intact?" is current, not remembered. Each blob is intact, shadowed, damaged or missing
(see records.fsck).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from records.attest.checks import SealChecks, SealState, seal_blobs, seal_checks_of
from records.attest.log_checks import LogProofs, Proofs, record_keys
from records.errors import RecordNotFound
from records.evidence import BlobCheck, Evidence, blob_state, capture_blobs, recorded_blobs
from records.ids import resolve_citation_id, resolve_snapshot_id
from records.models import Capture, Citation, Extraction, Snapshot, Verification
from records.repository import (
    captures_of,
    captures_of_snapshot,
    citations_matching,
    extractions_of,
    get_snapshot,
    verifications_of,
)
from records.vocabulary import CaptureOutcome, Status
from records.workspace import Workspace
from snapshotter.errors import InputError

BlobRef = tuple[str, str, str | None]  # kind, digest, recorded version
LogProof = Mapping[str, Any]  # an inclusion proof and its checkpoint (records.attest.log_checks)


@dataclass(frozen=True)
class QuotePosition:
    start: int
    end: int | None
    unit: str | None  # "codepoint" | "utf16", as the citation gave it


@dataclass(frozen=True)
class CitationRecord:
    """A recorded citation: what was quoted, from where, as given."""

    citation_id: str
    url: str | None
    snapshot_id: str | None
    extraction_id: int | None
    claimed_snapshot_id: str | None
    exact: str
    prefix: str
    suffix: str
    position: QuotePosition | None
    page: str | None
    claim: str | None
    answer_id: str | None
    created_at: datetime

    @classmethod
    def of(cls, citation: Citation) -> CitationRecord:
        position = None
        if citation.position_start is not None:
            position = QuotePosition(
                citation.position_start, citation.position_end, citation.position_unit
            )
        return cls(
            citation_id=citation.id,
            url=citation.url,
            snapshot_id=citation.snapshot_id,
            extraction_id=citation.extraction_id,
            claimed_snapshot_id=citation.claimed_snapshot,
            exact=citation.exact,
            prefix=citation.prefix,
            suffix=citation.suffix,
            position=position,
            page=citation.page,
            claim=citation.claim_text,
            answer_id=citation.answer_id,
            created_at=citation.created_at,
        )


@dataclass(frozen=True)
class VerificationRecord:
    """One check in the append-only log, with its inclusion proof (``log_proof``)."""

    verification_id: int
    checked_at: datetime
    status: Status
    snapshot_id: str | None
    extraction_id: int | None
    span: tuple[int, int] | None  # code points, as recorded
    matches: int | None
    closest_text: str | None
    closest_score: float | None
    reason: str | None
    details: Mapping[str, Any]
    verifier: str | None
    normalizer: str | None
    log_proof: LogProof | None = None

    @property
    def capture_id(self) -> int | None:
        """The capture the check read its snapshot through, as its seal names it."""
        return sealed_capture_id(self.details)

    @classmethod
    def of(cls, verification: Verification) -> VerificationRecord:
        span = None
        if verification.span_start is not None and verification.span_end is not None:
            span = (verification.span_start, verification.span_end)
        return cls(
            verification_id=verification.id,
            checked_at=verification.checked_at,
            status=Status(verification.status),
            snapshot_id=verification.snapshot_id,
            extraction_id=verification.extraction_id,
            span=span,
            matches=verification.matches,
            closest_text=verification.closest_text,
            closest_score=verification.closest_score,
            reason=verification.reason,
            details=verification.details,
            verifier=verification.verifier,
            normalizer=verification.normalizer,
        )


def sealed_capture_id(details: Mapping[str, Any] | None) -> int | None:
    """The capture whose seal a check recorded (``details.seal.captureId``): the capture it
    read the snapshot through. None for a check recorded before seals were."""
    seal = (details or {}).get("seal")
    capture_id = seal.get("captureId") if isinstance(seal, Mapping) else None
    return capture_id if isinstance(capture_id, int) else None


@dataclass(frozen=True)
class CaptureRecord:
    """One attempt to capture a URL. A stored capture's seal is checked now (``seal``: None for
    one recorded before seals were kept); a failed capture has no seal to check."""

    capture_id: int
    url: str
    final_url: str | None
    fetched_at: datetime
    http_status: int | None
    outcome: CaptureOutcome
    error: str | None
    snapshot_id: str | None
    method: str | None
    provenance: Mapping[str, Any]
    log_proof: LogProof | None = None
    seal: SealState | None = None

    @classmethod
    def of(cls, capture: Capture) -> CaptureRecord:
        return cls(
            capture_id=capture.id,
            url=capture.url,
            final_url=capture.final_url,
            fetched_at=capture.fetched_at,
            http_status=capture.http_status,
            outcome=CaptureOutcome(capture.outcome),
            error=capture.error,
            snapshot_id=capture.snapshot_id,
            method=capture.method,
            provenance=capture.provenance,
        )

    @property
    def stored(self) -> bool:
        return self.outcome is CaptureOutcome.STORED


@dataclass(frozen=True)
class ExtractionRecord:
    extraction_id: int
    extractor: str
    decoding: str
    content_type: str | None
    text_hash: str | None
    norm_hash: str | None
    text_size: int | None
    normalizer: str
    source: str | None
    text_version_id: str | None
    pages: int
    flags: tuple[str, ...]
    recorded_at: datetime

    @classmethod
    def of(cls, extraction: Extraction) -> ExtractionRecord:
        return cls(
            extraction_id=extraction.id,
            extractor=extraction.extractor,
            decoding=extraction.decoding,
            content_type=extraction.content_type,
            text_hash=extraction.text_hash,
            norm_hash=extraction.norm_hash,
            text_size=extraction.text_size,
            normalizer=extraction.normalizer,
            source=extraction.source,
            text_version_id=extraction.text_version_id,
            pages=len(extraction.pages or []),
            flags=tuple(extraction.flags or ()),
            recorded_at=extraction.created_at,
        )


@dataclass(frozen=True)
class AuditedSnapshot:
    """A snapshot as recorded, with every blob it names re-hashed now (``blobs``)."""

    snapshot_id: str
    raw_hash: str
    text_hash: str | None
    norm_hash: str | None
    raw_size: int
    text_size: int | None
    content_type: str | None
    extractor: str
    normalizer: str
    store: str
    raw_version_id: str | None
    text_version_id: str | None
    lock_mode: str | None
    retain_until: datetime | None
    pages: tuple[Any, ...]
    flags: tuple[str, ...]
    recorded_at: datetime
    extractions: tuple[ExtractionRecord, ...]
    blobs: tuple[BlobCheck, ...] = ()

    @property
    def intact(self) -> bool:
        return all(blob.holds for blob in self.blobs)


@dataclass(frozen=True)
class CitationChecks:
    """A citation with every check of it, oldest first."""

    citation: CitationRecord
    verifications: tuple[VerificationRecord, ...]


@dataclass(frozen=True)
class CitationAudit:
    """``snap audit CITATION``: the citation, its snapshot, the captures of its URL, its checks."""

    citation: CitationRecord
    snapshot: AuditedSnapshot | None
    captures: tuple[CaptureRecord, ...]
    verifications: tuple[VerificationRecord, ...]

    @property
    def snapshots(self) -> tuple[AuditedSnapshot, ...]:
        return () if self.snapshot is None else (self.snapshot,)


@dataclass(frozen=True)
class UrlAudit:
    """``snap audit --url``: every capture of the URL, its snapshots and the citations of it."""

    url: str
    captures: tuple[CaptureRecord, ...]
    snapshots: tuple[AuditedSnapshot, ...]
    citations: tuple[CitationChecks, ...]


@dataclass(frozen=True)
class SnapshotAudit:
    """``snap audit --snapshot``: the snapshot, its captures and the citations of it."""

    snapshot: AuditedSnapshot
    captures: tuple[CaptureRecord, ...]
    citations: tuple[CitationChecks, ...]

    @property
    def snapshots(self) -> tuple[AuditedSnapshot, ...]:
        return (self.snapshot,)


AuditReport = CitationAudit | UrlAudit | SnapshotAudit


def evidence_intact(report: AuditReport) -> bool:
    """Every blob re-hashed now holds and every stored capture's seal holds: ``snap audit``
    exits 1 otherwise."""
    seals = [capture.seal for capture in report.captures if capture.seal is not None]
    return all(s.intact for s in report.snapshots) and all(seal.intact for seal in seals)


def all_checks(report: AuditReport) -> list[VerificationRecord]:
    """Every check the report shows, of its citation or of each of its citations."""
    if isinstance(report, CitationAudit):
        return list(report.verifications)
    return [check for item in report.citations for check in item.verifications]


@dataclass
class _Read:
    """What the read transaction found that is checked after it: each snapshot's evidence
    and its captures' blobs (no transaction is held across blob I/O)."""

    evidence: dict[str, list[Evidence]] = field(default_factory=dict)
    heads: dict[str, list[BlobRef]] = field(default_factory=dict)


def audit_citation(session: Session, citation_id: str, read: _Read) -> CitationAudit:
    citation = find_citation(session, resolve_citation_id(session, citation_id))
    snapshot = get_snapshot(session, citation.snapshot_id) if citation.snapshot_id else None
    return CitationAudit(
        citation=CitationRecord.of(citation),
        snapshot=audited_snapshot(session, snapshot, read) if snapshot else None,
        captures=tuple(CaptureRecord.of(c) for c in captures_of(session, citation.url or "")),
        verifications=checks_of(session, citation),
    )


def audit_url(session: Session, url: str, read: _Read) -> UrlAudit:
    captures = captures_of(session, url)
    citations = citations_matching(session, url=url)
    if not captures and not citations:
        raise RecordNotFound(f"nothing is recorded for {url}")
    ids = sorted({c.snapshot_id for c in captures if c.snapshot_id})
    snapshots = [get_snapshot(session, snapshot_id) for snapshot_id in ids]
    return UrlAudit(
        url=url,
        captures=tuple(CaptureRecord.of(c) for c in captures),
        snapshots=tuple(audited_snapshot(session, s, read) for s in snapshots if s is not None),
        citations=tuple(
            CitationChecks(CitationRecord.of(c), checks_of(session, c)) for c in citations
        ),
    )


def audit_snapshot(session: Session, snapshot_id: str, read: _Read) -> SnapshotAudit:
    snapshot = find_snapshot(session, resolve_snapshot_id(session, snapshot_id))
    citations = citations_matching(session, snapshot_id=snapshot.id)
    return SnapshotAudit(
        snapshot=audited_snapshot(session, snapshot, read),
        captures=tuple(CaptureRecord.of(c) for c in captures_of_snapshot(session, snapshot.id)),
        citations=tuple(
            CitationChecks(CitationRecord.of(c), checks_of(session, c)) for c in citations
        ),
    )


def checks_of(session: Session, citation: Citation) -> tuple[VerificationRecord, ...]:
    return tuple(VerificationRecord.of(v) for v in verifications_of(session, citation.id))


def audit(
    workspace: Workspace, *, citation_id: str | None, url: str | None, snapshot_id: str | None
) -> AuditReport:
    """The record, read in one short read transaction; then every blob it names is re-hashed
    at its recorded version, in its recorded store, with no transaction open."""
    report, _ = audited(workspace, citation_id=citation_id, url=url, snapshot_id=snapshot_id)
    return report


def audited(
    workspace: Workspace,
    *,
    citation_id: str | None,
    url: str | None,
    snapshot_id: str | None,
    log: LogProofs | None = None,
) -> tuple[AuditReport, list[Evidence]]:
    """``audit``, with the evidence (snapshot and extraction, store and versions) of every
    snapshot it reports, so an export can read those same blobs without asking again. An
    export auditing many citations hands in one ``log``, read once for all of them."""
    chosen = [value for value in (citation_id, url, snapshot_id) if value]
    if len(chosen) != 1:
        raise InputError("give exactly one of: a CITATION_ID, --url URL, --snapshot ID")
    read = _Read()
    report: AuditReport
    with workspace.db.reading() as session:
        if citation_id:
            report = audit_citation(session, citation_id, read)
        elif url:
            report = audit_url(session, url, read)
        else:
            report = audit_snapshot(session, snapshot_id or "", read)
    evidence = [item for items in read.evidence.values() for item in items]
    workspace.stores.check_all(evidence)
    blobs = {
        snapshot_id: blob_states(workspace, read.evidence[snapshot_id], read.heads[snapshot_id])
        for snapshot_id in read.evidence
    }
    return checked_now(workspace, report, blobs, log or LogProofs(workspace)), evidence


def checked_now(
    workspace: Workspace,
    report: AuditReport,
    blobs: Mapping[str, tuple[BlobCheck, ...]],
    log: LogProofs,
) -> AuditReport:
    """The report with what was checked after the read: each snapshot's blobs, each capture's
    and check's inclusion proof (``logProof``, so the other side can check it offline) and
    each stored capture's manifest, signature and token (``seal``)."""
    checks = all_checks(report)
    capture_ids = (c.capture_id for c in report.captures)
    proofs = log.of(record_keys(capture_ids, (v.verification_id for v in checks)))
    seals = seal_checks_of(workspace)

    def snapshot(item: AuditedSnapshot) -> AuditedSnapshot:
        return replace(item, blobs=blobs.get(item.snapshot_id, ()))

    def capture(item: CaptureRecord) -> CaptureRecord:
        return sealed_and_proved(workspace, item, proofs, seals)

    def check(item: VerificationRecord) -> VerificationRecord:
        return replace(item, log_proof=proofs.get(("verification", str(item.verification_id))))

    def citation(item: CitationChecks) -> CitationChecks:
        return replace(item, verifications=tuple(check(v) for v in item.verifications))

    captures = tuple(capture(c) for c in report.captures)
    if isinstance(report, CitationAudit):
        return replace(
            report,
            snapshot=None if report.snapshot is None else snapshot(report.snapshot),
            captures=captures,
            verifications=tuple(check(v) for v in report.verifications),
        )
    if isinstance(report, UrlAudit):
        return replace(
            report,
            snapshots=tuple(snapshot(s) for s in report.snapshots),
            captures=captures,
            citations=tuple(citation(c) for c in report.citations),
        )
    return replace(
        report,
        snapshot=snapshot(report.snapshot),
        captures=captures,
        citations=tuple(citation(c) for c in report.citations),
    )


def sealed_and_proved(
    workspace: Workspace, item: CaptureRecord, proofs: Proofs, seals: SealChecks
) -> CaptureRecord:
    """A capture with its inclusion proof and, stored, its seal checked now."""
    proof = proofs.get(("capture", str(item.capture_id)))
    if not item.stored:
        return replace(item, log_proof=proof)
    seal = seals.state(
        workspace.store,
        dict(item.provenance),
        item.snapshot_id,
        capture_id=item.capture_id,
        read=[("raw", item.snapshot_id or "")],
    )
    return replace(item, log_proof=proof, seal=seal)


def audited_captures(
    workspace: Workspace, capture_ids: list[int], log: LogProofs
) -> list[CaptureRecord]:
    """These captures as ``snap audit`` reports them (seal checked now, inclusion proof), for
    a reader that shows a capture the audit of a URL does not list (one read through another
    URL the snapshot was captured from)."""
    with workspace.db.reading() as session:
        found = [session.get(Capture, capture_id) for capture_id in capture_ids]
        records = [CaptureRecord.of(capture) for capture in found if capture is not None]
    proofs = log.of(record_keys((c.capture_id for c in records), ()))
    seals = seal_checks_of(workspace)
    return [sealed_and_proved(workspace, record, proofs, seals) for record in records]


def blob_states(
    workspace: Workspace, evidence: list[Evidence], heads: list[BlobRef]
) -> tuple[BlobCheck, ...]:
    """Every blob of the snapshot re-hashed now: raw, each extraction's text, the HTTP
    exchanges of each capture (``headers``) and a browser capture's blobs, in the store the
    snapshot was recorded in."""
    seen: set[BlobRef] = set()
    states = []
    for item in evidence:
        store = workspace.stores.store_for(item)
        for blob in [*recorded_blobs(item), *heads]:
            if blob not in seen:
                seen.add(blob)
                states.append(blob_state(store, *blob))
    return tuple(states)


def audited_snapshot(session: Session, snapshot: Snapshot, read: _Read) -> AuditedSnapshot:
    """The snapshot's record; its blobs are checked after the read (``read`` says which)."""
    extractions = extractions_of(session, snapshot.id)
    evidence = [Evidence.of(snapshot, e) for e in extractions] or [Evidence.of(snapshot, None)]
    captures = captures_of_snapshot(session, snapshot.id)
    heads = [blob for c in captures for blob in capture_blobs(c.provenance)]
    heads += [blob for c in captures for blob in seal_blobs(c.provenance)]
    read.evidence.setdefault(snapshot.id, evidence)
    read.heads.setdefault(snapshot.id, heads)
    return AuditedSnapshot(
        snapshot_id=snapshot.id,
        raw_hash=snapshot.raw_hash,
        text_hash=snapshot.text_hash,
        norm_hash=snapshot.norm_hash,
        raw_size=snapshot.raw_size,
        text_size=snapshot.text_size,
        content_type=snapshot.content_type,
        extractor=snapshot.extractor,
        normalizer=snapshot.normalizer,
        store=snapshot.store_location,
        raw_version_id=snapshot.raw_version_id,
        text_version_id=snapshot.text_version_id,
        lock_mode=snapshot.lock_mode,
        retain_until=snapshot.retain_until,
        pages=tuple(snapshot.pages or ()),
        flags=tuple(snapshot.flags or ()),
        recorded_at=snapshot.created_at,
        extractions=tuple(ExtractionRecord.of(e) for e in extractions),
    )


def find_citation(session: Session, citation_id: str) -> Citation:
    citation = session.get(Citation, citation_id)
    if citation is None:
        raise RecordNotFound(f"no citation with id {citation_id!r} is recorded")
    return citation


def find_snapshot(session: Session, snapshot_id: str) -> Snapshot:
    snapshot = get_snapshot(session, snapshot_id)
    if snapshot is None:
        raise RecordNotFound(f"no snapshot with id {snapshot_id!r} is recorded")
    return snapshot
