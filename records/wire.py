"""JSON at the edge: one serialiser per wire shape, for the typed results the use cases return.

The use cases (records.jobs, records.reextract, records.fsck, records.show, records.audit)
return frozen dataclasses with statuses as enums and times as ``datetime``; the CLI's text
renderer, the HTTP service, the MCP tools and the exports read those objects. Only what leaves
the process as JSON (``--json``, HTTP bodies, MCP results) goes through the functions here, so
a key is named in exactly one place. The shapes are pinned by
tests/records/test_records_wire_shapes.py; times are written by ``snapshotter.times``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from snapshotter.times import wire_time

if TYPE_CHECKING:  # the serialisers read the results; importing them would load every use case
    from records.evidence import BlobCheck
    from records.fsck import FsckProblem, FsckReport
    from records.jobs import BatchProgress, ReverifyOutcomes
    from records.reextract import Reextracted


def batch_progress_json(progress: BatchProgress) -> dict[str, Any]:
    """``snap jobs BATCH --json``, ``GET /v1/jobs/{batch}``, and a batch run in-process."""
    document: dict[str, Any] = {
        "batchId": progress.batch_id,
        "kind": progress.kind.value,
        "params": dict(progress.params),
        "createdAt": wire_time(progress.created_at),
        "total": progress.total,
        **{state.value: count for state, count in progress.counts.items()},
        "failedTransient": progress.failed_transient,
        "finished": progress.finished,
        "failures": [
            {
                "key": failure.key,
                "errorKind": None if failure.failure_kind is None else failure.failure_kind.value,
                "error": failure.error,
                "attempts": failure.attempts,
            }
            for failure in progress.failures
        ],
    }
    if progress.outcomes is not None:
        document["outcomes"] = reverify_outcomes_json(progress.outcomes)
    return document


def reverify_outcomes_json(outcomes: ReverifyOutcomes) -> dict[str, Any]:
    return {
        "stillFound": outcomes.still_found,
        "broke": outcomes.broke,
        "refetchFailed": outcomes.refetch_failed,
        "byStatus": {status.value: count for status, count in outcomes.by_status.items()},
        "broken": [
            {
                "citationId": broken.citation_id,
                "status": broken.status.value,
                "reason": broken.reason,
            }
            for broken in outcomes.broken
        ],
    }


def batch_list_json(batches: list[BatchProgress]) -> dict[str, Any]:
    """``snap jobs --json``: the most recent batches."""
    return {"batches": [batch_progress_json(batch) for batch in batches]}


def reextracted_json(results: list[Reextracted]) -> dict[str, Any]:
    """``snap reextract --json``."""
    return {
        "extractions": [
            {
                "snapshotId": result.snapshot_id,
                "extractionId": result.extraction_id,
                "extractor": result.extractor,
                "decoding": result.decoding,
                "textHash": result.text_hash,
                "new": result.new,
            }
            for result in results
        ]
    }


def blob_check_json(check: BlobCheck) -> dict[str, Any]:
    """One recorded blob as found now (``snap audit``'s ``blobs``, ``snap fsck``'s entries)."""
    return {
        "kind": check.kind,
        "digest": check.digest,
        "key": check.key,
        "versionId": check.version_id,
        "state": check.state.value,
        "intact": check.holds,
        "detail": check.detail,
    }


def fsck_json(report: FsckReport) -> dict[str, Any]:
    """``snap fsck --json``."""
    return {
        "ok": report.ok,
        "blobsChecked": report.blobs_checked,
        "snapshotsChecked": report.snapshots_checked,
        "states": {state.value: count for state, count in report.states.items()},
        "problems": [fsck_problem_json(problem) for problem in report.problems],
        "shadowed": [
            {**blob_check_json(entry.blob), "snapshotId": entry.snapshot_id}
            for entry in report.shadowed
        ],
        "orphans": list(report.orphans),
        "tempFiles": list(report.temp_files),
        "tempFilesRemoved": report.temp_files_removed,
    }


def fsck_problem_json(problem: FsckProblem) -> dict[str, Any]:
    if problem.blob is not None:
        blob = blob_check_json(problem.blob)
        return {**blob, "snapshotId": problem.snapshot_id, "problem": problem.problem}
    if problem.key is not None:
        return {"key": problem.key, "problem": problem.problem}
    return {"snapshotId": problem.snapshot_id, "problem": problem.problem}
