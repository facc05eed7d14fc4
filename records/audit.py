"""``snap audit``: everything recorded about a citation, a URL or a snapshot, for a dispute.

Every blob the report mentions is read back through the store it was written to, at the version
recorded at capture, and re-hashed while the report is made, so the answer to "is the evidence
still intact?" is current, not remembered. Each blob is intact, shadowed, damaged or missing
(see records.fsck).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from records.attest.checkpoints import inclusion_proofs
from records.attest.checks import seal_blobs, seal_checks_of
from records.errors import RecordNotFound
from records.evidence import Evidence, blob_state, capture_blobs, recorded_blobs
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
from records.vocabulary import CaptureOutcome
from records.wire import blob_check_json
from records.workspace import Workspace
from snapshotter.capture import rfc3339
from snapshotter.errors import InputError

BlobRef = tuple[str, str, str | None]  # kind, digest, recorded version
# Per snapshot reported: its JSON, its evidence, and its captures' headers blobs, checked after
# the read transaction (no transaction is held across blob I/O).
Pending = list[tuple[dict[str, Any], list[Evidence], list[BlobRef]]]


def audit_citation(session: Session, citation_id: str, pending: Pending) -> dict[str, Any]:
    citation = find_citation(session, resolve_citation_id(session, citation_id))
    snapshot = get_snapshot(session, citation.snapshot_id) if citation.snapshot_id else None
    return {
        "citation": citation_json(citation),
        "snapshot": snapshot_json(session, snapshot, pending) if snapshot else None,
        "captures": [capture_json(c) for c in captures_of(session, citation.url or "")],
        "verifications": [verification_json(v) for v in verifications_of(session, citation.id)],
    }


def audit_url(session: Session, url: str, pending: Pending) -> dict[str, Any]:
    captures = captures_of(session, url)
    citations = citations_matching(session, url=url)
    if not captures and not citations:
        raise RecordNotFound(f"nothing is recorded for {url}")
    ids = sorted({c.snapshot_id for c in captures if c.snapshot_id})
    snapshots = [get_snapshot(session, snapshot_id) for snapshot_id in ids]
    return {
        "url": url,
        "captures": [capture_json(c) for c in captures],
        "snapshots": [snapshot_json(session, s, pending) for s in snapshots if s is not None],
        "citations": [citation_with_checks(session, c) for c in citations],
    }


def audit_snapshot(session: Session, snapshot_id: str, pending: Pending) -> dict[str, Any]:
    snapshot = find_snapshot(session, resolve_snapshot_id(session, snapshot_id))
    return {
        "snapshot": snapshot_json(session, snapshot, pending),
        "captures": [capture_json(c) for c in captures_of_snapshot(session, snapshot.id)],
        "citations": [
            citation_with_checks(session, c)
            for c in citations_matching(session, snapshot_id=snapshot.id)
        ],
    }


def audit(
    workspace: Workspace, *, citation_id: str | None, url: str | None, snapshot_id: str | None
) -> dict[str, Any]:
    """The record, read in one short read transaction; then every blob it names is re-hashed
    at its recorded version, in its recorded store, with no transaction open."""
    report, _ = audited(workspace, citation_id=citation_id, url=url, snapshot_id=snapshot_id)
    return report


def audited(
    workspace: Workspace, *, citation_id: str | None, url: str | None, snapshot_id: str | None
) -> tuple[dict[str, Any], list[Evidence]]:
    """``audit``, with the evidence (snapshot and extraction, store and versions) of every
    snapshot it reports, so an export can read those same blobs without asking again."""
    chosen = [value for value in (citation_id, url, snapshot_id) if value]
    if len(chosen) != 1:
        raise InputError("give exactly one of: a CITATION_ID, --url URL, --snapshot ID")
    pending: Pending = []
    with workspace.db.reading() as session:
        if citation_id:
            report = audit_citation(session, citation_id, pending)
        elif url:
            report = audit_url(session, url, pending)
        else:
            report = audit_snapshot(session, snapshot_id or "", pending)
    workspace.stores.check_all([e for _, evidence, _ in pending for e in evidence])
    for snapshot, evidence, heads in pending:
        snapshot["blobs"] = blob_states(workspace, evidence, heads)
    add_seal_states(workspace, report)
    return report, [item for _, evidence, _ in pending for item in evidence]


def add_seal_states(workspace: Workspace, report: dict[str, Any]) -> None:
    """Each stored capture's manifest, signature and token checked now (``seal``; None for a
    capture recorded before manifests were kept)."""
    add_log_proofs(workspace, report)
    checks = seal_checks_of(workspace)
    for capture in report.get("captures", []):
        if capture["outcome"] != CaptureOutcome.STORED:
            continue
        state = checks.state(
            workspace.store,
            capture["provenance"],
            capture["snapshotId"],
            capture_id=capture["captureId"],
            read=[("raw", capture["snapshotId"])],
        )
        capture["seal"] = None if state is None else state.to_json()


def add_log_proofs(workspace: Workspace, report: dict[str, Any]) -> None:
    """Each capture and verification shown, with its inclusion proof and the checkpoint it is
    proved against (``logProof``), so the other side can check it offline."""
    captures = report.get("captures", [])
    checks = list(report.get("verifications") or [])
    checks += [v for c in report.get("citations", []) for v in c.get("verifications", [])]
    wanted = [("capture", str(c["captureId"])) for c in captures]
    wanted += [("verification", str(v["verificationId"])) for v in checks]
    proofs = inclusion_proofs(workspace, wanted)
    for capture in captures:
        capture["logProof"] = proofs.get(("capture", str(capture["captureId"])))
    for check in checks:
        check["logProof"] = proofs.get(("verification", str(check["verificationId"])))


def blob_states(
    workspace: Workspace, evidence: list[Evidence], heads: list[BlobRef]
) -> list[dict[str, Any]]:
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
                states.append(blob_check_json(blob_state(store, *blob)))
    return states


def citation_with_checks(session: Session, citation: Citation) -> dict[str, Any]:
    return {
        **citation_json(citation),
        "verifications": [verification_json(v) for v in verifications_of(session, citation.id)],
    }


def snapshot_json(session: Session, snapshot: Snapshot, pending: Pending) -> dict[str, Any]:
    extractions = extractions_of(session, snapshot.id)
    document: dict[str, Any] = {
        "snapshotId": snapshot.id,
        "hashes": {
            "raw": snapshot.raw_hash,
            "text": snapshot.text_hash,
            "norm": snapshot.norm_hash,
        },
        "sizes": {"raw": snapshot.raw_size, "text": snapshot.text_size},
        "contentType": snapshot.content_type,
        "extractor": snapshot.extractor,
        "normalizer": snapshot.normalizer,
        "store": snapshot.store_location,
        "versionIds": {"raw": snapshot.raw_version_id, "text": snapshot.text_version_id},
        "retention": {"mode": snapshot.lock_mode, "until": rfc3339(snapshot.retain_until)},
        "pages": snapshot.pages,
        "flags": snapshot.flags,
        "recordedAt": rfc3339(snapshot.created_at),
        "extractions": [extraction_json(e) for e in extractions],
        "blobs": [],
    }
    evidence = [Evidence.of(snapshot, e) for e in extractions] or [Evidence.of(snapshot, None)]
    captures = captures_of_snapshot(session, snapshot.id)
    heads = [blob for c in captures for blob in capture_blobs(c.provenance)]
    heads += [blob for c in captures for blob in seal_blobs(c.provenance)]
    pending.append((document, evidence, heads))
    return document


def extraction_json(extraction: Extraction) -> dict[str, Any]:
    return {
        "extractionId": extraction.id,
        "extractor": extraction.extractor,
        "decoding": extraction.decoding,
        "contentType": extraction.content_type,
        "hashes": {"text": extraction.text_hash, "norm": extraction.norm_hash},
        "textSize": extraction.text_size,
        "normalizer": extraction.normalizer,
        "source": extraction.source,
        "textVersionId": extraction.text_version_id,
        "pages": len(extraction.pages or []),
        "flags": extraction.flags,
        "recordedAt": rfc3339(extraction.created_at),
    }


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


def capture_json(capture: Capture) -> dict[str, Any]:
    return {
        "captureId": capture.id,
        "url": capture.url,
        "finalUrl": capture.final_url,
        "fetchedAt": rfc3339(capture.fetched_at),
        "httpStatus": capture.http_status,
        "outcome": capture.outcome,
        "error": capture.error,
        "snapshotId": capture.snapshot_id,
        "method": capture.method,
        "provenance": capture.provenance,
    }


def citation_json(citation: Citation) -> dict[str, Any]:
    position = None
    if citation.position_start is not None:
        position = {
            "start": citation.position_start,
            "end": citation.position_end,
            "unit": citation.position_unit,
        }
    return {
        "citationId": citation.id,
        "url": citation.url,
        "snapshotId": citation.snapshot_id,
        "extractionId": citation.extraction_id,
        "claimedSnapshotId": citation.claimed_snapshot,
        "selector": {
            "quote": {
                "exact": citation.exact,
                "prefix": citation.prefix,
                "suffix": citation.suffix,
            },
            "position": position,
        },
        "page": citation.page,
        "claim": citation.claim_text,
        "answerId": citation.answer_id,
        "createdAt": rfc3339(citation.created_at),
    }


def verification_json(verification: Verification) -> dict[str, Any]:
    span = None
    if verification.span_start is not None:
        span = {"start": verification.span_start, "end": verification.span_end}
    return {
        "verificationId": verification.id,
        "checkedAt": rfc3339(verification.checked_at),
        "status": verification.status,
        "snapshotId": verification.snapshot_id,
        "extractionId": verification.extraction_id,
        "span": span,
        "matches": verification.matches,
        "closest": (
            None
            if verification.closest_text is None
            else {"text": verification.closest_text, "score": verification.closest_score}
        ),
        "reason": verification.reason,
        "details": verification.details,
        "verifier": verification.verifier,
        "normalizer": verification.normalizer,
    }
