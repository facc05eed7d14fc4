"""JSON at the edge for the attestation commands: one serialiser per wire shape of ``snap
log checkpoint``, ``snap log verify``, ``snap log consistency``, ``snap attest`` and ``snap
keys``, and of a capture's seal as checked now, as ``records/wire.py`` writes the others.

The use cases in ``records.attest`` return dataclasses; the CLI's text reads them and only
``--json`` (and ``POST /v1/log/checkpoint``, the files ``--out`` writes) goes through the
functions here. The shapes are pinned by tests/attest/test_attest_wire_shapes.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from snapshotter.times import wire_time_or_none

if TYPE_CHECKING:  # the serialisers read the results; importing them loads cryptography
    from records.attest.attest import Attestation, AttestedCapture
    from records.attest.checkpoints import CheckpointResult
    from records.attest.checks import SealState
    from records.attest.log_checks import Consistency, LogProblem, LogReport
    from records.attest.signing import SigningKey


def checkpoint_result_json(result: CheckpointResult) -> dict[str, Any]:
    """``snap log checkpoint --json`` and ``POST /v1/log/checkpoint``: the checkpoint made
    now, or the newest one when nothing was added since (``created`` false)."""
    return {
        "checkpointId": result.id,
        "treeSize": result.tree_size,
        "rootHash": result.root_hash,
        "created": result.created,
        "signature": result.signature,
        "timestamp": result.timestamp,
    }


def log_report_json(report: LogReport) -> dict[str, Any]:
    """``snap log verify --json``: the log's size, its checkpoints and every problem found."""
    return {
        "ok": report.ok,
        "entries": report.entries,
        "checkpoints": report.checkpoints,
        "problems": [log_problem_json(problem) for problem in report.problems],
    }


def log_problem_json(problem: LogProblem) -> dict[str, Any]:
    """Where and what; a row's kind and id when the problem is a record's."""
    document: dict[str, Any] = {"position": problem.position, "problem": problem.problem}
    if problem.kind is not None:
        document["kind"] = problem.kind
    if problem.record_id is not None:
        document["recordId"] = problem.record_id
    return document


def consistency_json(result: Consistency) -> dict[str, Any]:
    """``snap log consistency --json``, and the proof file ``--out`` writes."""
    return {
        "ok": result.ok,
        "holds": result.holds,
        "from": result.old,
        "to": result.new,
        "proof": list(result.proof),
        "problems": list(result.problems),
    }


def attestation_json(attestation: Attestation) -> dict[str, Any]:
    """``snap attest --json``: the subject, each capture's pieces and each verification's
    proof, and what did not check."""
    subject = attestation.subject
    return {
        "ok": attestation.ok,
        "subject": {f"{subject.kind}Id": subject.id},
        "captures": [attested_capture_json(capture) for capture in attestation.captures],
        "verifications": [
            {"id": check.id, "citationId": check.citation_id, "status": check.status}
            | {"proof": check.proof, "check": list(check.check)}
            for check in attestation.verifications
        ],
        "problems": list(attestation.problems),
    }


def attested_capture_json(capture: AttestedCapture) -> dict[str, Any]:
    """A capture's pieces; one recorded before manifests were kept has a note instead."""
    document: dict[str, Any] = {"captureId": capture.capture_id, "proof": capture.proof}
    manifest = capture.manifest
    if manifest is None:
        return document | {"manifest": None, "note": capture.note}
    return document | {
        "manifest": {"sha256": manifest.sha256, "document": manifest.document},
        "signature": capture.signature,
        "timestamp": capture.timestamp,
        "check": list(capture.check),
    }


def signing_key_json(path: Path, key: SigningKey) -> dict[str, Any]:
    """``snap keys init --json`` and ``snap keys show --json``: the public half only."""
    return {
        "path": str(path),
        "type": key.key_type.value,
        "keyId": key.key_id,
        "publicKey": key.public_pem(),
    }


def seal_state_json(seal: SealState) -> dict[str, Any]:
    """A capture's seal as checked now: among a check's details (its verification row keeps
    this document, ``records.outcome.stored_details``; ``SealState.of_document`` reads it back)
    and in ``snap audit``'s captures."""
    document: dict[str, Any] = {
        "intact": seal.intact,
        "signature": seal.signature,
        "timestamp": seal.timestamp,
        "problems": list(seal.problems),
        "signed": seal.signed,
        "stamped": seal.stamped,
    }
    if seal.capture_id is not None:
        document["captureId"] = seal.capture_id
    if seal.manifest is not None:
        document["manifest"] = seal.manifest
    if seal.notes:
        document["notes"] = list(seal.notes)
    document["captureTime"] = seal.capture_time.value
    document["capturedAt"] = wire_time_or_none(seal.captured_at)
    document["stampedAt"] = wire_time_or_none(seal.stamped_at)
    return document
