"""``snap audit``: everything recorded about a citation, a URL or a snapshot, for a dispute.

Every blob the report mentions is read back through the store and re-hashed while the report is
made, so the answer to "is the evidence still intact?" is current, not remembered.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from records.models import Capture, Citation, Snapshot, Verification
from records.repository import (
    captures_of,
    captures_of_snapshot,
    citations_matching,
    get_snapshot,
    verifications_of,
)
from records.texts import rehash_blob
from records.workspace import Workspace
from snap.errors import InputError, RecordNotFound, StoreError
from snapshotter.capture import rfc3339
from snapshotter.store import BlobStore, blob_key


def audit_citation(workspace: Workspace, citation_id: str) -> dict[str, Any]:
    with workspace.db.session() as session:
        citation = session.get(Citation, citation_id)
        if citation is None:
            raise RecordNotFound(f"no citation with id {citation_id!r} is recorded")
        snapshot = get_snapshot(session, citation.snapshot_id) if citation.snapshot_id else None
        return {
            "citation": citation_json(citation),
            "snapshot": snapshot_json(snapshot, workspace.store) if snapshot else None,
            "captures": [capture_json(c) for c in captures_of(session, citation.url or "")],
            "verifications": [verification_json(v) for v in verifications_of(session, citation.id)],
        }


def audit_url(workspace: Workspace, url: str) -> dict[str, Any]:
    with workspace.db.session() as session:
        captures = captures_of(session, url)
        citations = citations_matching(session, url=url)
        if not captures and not citations:
            raise RecordNotFound(f"nothing is recorded for {url}")
        return {
            "url": url,
            "captures": [capture_json(c) for c in captures],
            "snapshots": snapshots_json(
                session, workspace.store, {c.snapshot_id for c in captures if c.snapshot_id}
            ),
            "citations": [citation_with_checks(session, c) for c in citations],
        }


def audit_snapshot(workspace: Workspace, snapshot_id: str) -> dict[str, Any]:
    with workspace.db.session() as session:
        snapshot = get_snapshot(session, snapshot_id)
        if snapshot is None:
            raise RecordNotFound(f"no snapshot with id {snapshot_id!r} is recorded")
        return {
            "snapshot": snapshot_json(snapshot, workspace.store),
            "captures": [capture_json(c) for c in captures_of_snapshot(session, snapshot_id)],
            "citations": [
                citation_with_checks(session, c)
                for c in citations_matching(session, snapshot_id=snapshot_id)
            ],
        }


def audit(
    workspace: Workspace, *, citation_id: str | None, url: str | None, snapshot_id: str | None
) -> dict[str, Any]:
    chosen = [value for value in (citation_id, url, snapshot_id) if value]
    if len(chosen) != 1:
        raise InputError("give exactly one of: a CITATION_ID, --url URL, --snapshot ID")
    if citation_id:
        return audit_citation(workspace, citation_id)
    if url:
        return audit_url(workspace, url)
    return audit_snapshot(workspace, snapshot_id or "")


def snapshots_json(session: Session, store: BlobStore, ids: set[str]) -> list[dict[str, Any]]:
    snapshots = [get_snapshot(session, snapshot_id) for snapshot_id in sorted(ids)]
    return [snapshot_json(s, store) for s in snapshots if s is not None]


def citation_with_checks(session: Session, citation: Citation) -> dict[str, Any]:
    return {
        **citation_json(citation),
        "verifications": [verification_json(v) for v in verifications_of(session, citation.id)],
    }


def blob_check(store: BlobStore, kind: str, digest: str | None) -> dict[str, Any] | None:
    """Re-hash one blob now; the result says whether the evidence is intact."""
    if digest is None:
        return None
    result: dict[str, Any] = {"kind": kind, "digest": digest, "key": blob_key(kind, digest)}
    try:
        rehash_blob(store, kind, digest)
    except StoreError as error:
        return {**result, "intact": False, "error": error.message}
    return {**result, "intact": True}


def snapshot_json(snapshot: Snapshot, store: BlobStore) -> dict[str, Any]:
    return {
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
        "blobs": [
            check
            for check in (
                blob_check(store, "raw", snapshot.raw_hash),
                blob_check(store, "text", snapshot.text_hash),
            )
            if check
        ],
    }


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
