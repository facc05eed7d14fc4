"""JSON at the edge: one serialiser per wire shape, for the typed results the use cases return.

The use cases (records.verify, records.reverify, records.jobs, records.reextract,
records.fsck, records.show, records.audit, the export, the import and the relocation) and the
capture (a ``SnapshotRecord``) return frozen dataclasses with statuses as enums and times as
``datetime``; the CLI's text renderer, the HTTP service, the MCP tools and the exports read
those objects. Only what leaves the process as JSON (``--json``, HTTP bodies, MCP results, and
a check's details as its verification row keeps them) goes through the functions here, so a
key is named in exactly one place. The shapes are pinned by
tests/records/test_records_wire_shapes.py, test_records_wire_shapes_checks.py and
test_records_wire_shapes_moves.py; times are written by ``snapshotter.times``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from records.vocabulary import REFETCH_FAILED, REPORTED_IMPORT_OUTCOMES
from records.wire_attest import seal_state_json
from snapshotter.times import wire_time, wire_time_or_none

if TYPE_CHECKING:  # the serialisers read the results; importing them would load every use case
    from records.audit import (
        AuditedSnapshot,
        AuditReport,
        CaptureRecord,
        CitationChecks,
        CitationRecord,
        ExtractionRecord,
        VerificationRecord,
    )
    from records.db import Upgrade
    from records.evidence import BlobCheck
    from records.exports.export import ExportResult, WrittenCounts
    from records.exports.http_head import Exchange, Head
    from records.fsck import FsckProblem, FsckReport
    from records.imports.report import ImportReport, RecordResult
    from records.jobs import BatchProgress, ReverifyOutcomes
    from records.outcome import CitationResult
    from records.reextract import Reextracted
    from records.relocate import Relocation
    from records.reverify import ReverifyReport
    from records.show import Shown
    from records.verify import AnswerCounts, VerifyReport
    from snapshotter.capture import RenderedText, SnapshotRecord
    from snapshotter.store import StoreInit
    from verifier import Closest, Status


def stored_capture_json(record: SnapshotRecord) -> dict[str, Any]:
    """A snapshot as just captured and stored: ``snap fetch --json`` (one line each for
    several targets), ``POST /v1/captures`` and the MCP ``capture`` tool.

    A snapshot has two wire shapes, each written here only: this one, of the capture that
    stored it (its URL, fetch time, HTTP status, the extraction just made and the capture's
    provenance), and ``audited_snapshot_json``, of the records read back by ``snap audit``
    (every extraction, the blobs re-hashed now, no one capture's fields: a snapshot may have
    been captured many times)."""
    from snapshotter.capture import page_json

    return {
        "snapshotId": record.snapshot_id,
        "url": record.url,
        "finalUrl": record.final_url,
        "fetchedAt": record.fetched_at,
        "status": record.status,
        "contentType": record.content_type,
        "extractor": record.extractor,
        "normalizer": record.normalizer,
        "hashes": {"raw": record.raw_hash, "text": record.text_hash, "norm": record.norm_hash},
        "sizes": {"raw": record.raw_size, "text": record.text_size},
        "store": record.store,
        "versionIds": {
            "raw": record.raw_blob.version_id,
            "text": record.text_blob.version_id if record.text_blob else None,
        },
        "retention": {"mode": record.lock_mode, "until": wire_time_or_none(record.retain_until)},
        "pages": [page_json(page) for page in record.pages],
        "flags": list(record.flags),
        "decoding": record.decoding,
        "reason": record.reason,
        "method": record.capture_method,
        "rendered": None if record.rendered is None else rendered_text_json(record.rendered),
        "code": record.code_hash,
        "provenance": record.provenance,
    }


def rendered_text_json(rendered: RenderedText) -> dict[str, Any]:
    return {
        "extractor": rendered.extractor,
        "decoding": rendered.decoding,
        "hashes": {"text": rendered.text_hash, "norm": rendered.norm_hash},
        "size": rendered.text_size,
        "versionId": rendered.text_blob.version_id,
    }


def verify_report_json(report: VerifyReport) -> dict[str, Any]:
    """``snap verify --json``, ``POST /v1/verify`` and the MCP ``verify`` tool."""
    return {
        "results": [citation_result_json(result) for result in report.results],
        "summary": verify_summary_json(report),
    }


def verify_summary_json(report: VerifyReport) -> dict[str, Any]:
    """The counts; an answer's add the share of its claims whose quote was found, the input's
    format and the same counts for each answer (a conversation has several)."""
    summary: dict[str, Any] = {
        "total": report.counts.total,
        "quoteFound": report.counts.quote_found,
        "byStatus": by_status_json(report.counts.by_status),
    }
    if report.is_answer:
        summary["shareVerified"] = report.counts.share_verified
        summary["format"] = report.input_format
        summary["answers"] = [answer_counts_json(counts) for counts in report.per_answer()]
    return summary


def answer_counts_json(counts: AnswerCounts) -> dict[str, Any]:
    return {
        "answerId": counts.answer_id,
        "total": counts.total,
        "quoteFound": counts.quote_found,
        "shareVerified": counts.share_verified,
        "byStatus": by_status_json(counts.by_status),
    }


def by_status_json(by_status: Mapping[Status, int]) -> dict[str, int]:
    return {status.value: count for status, count in by_status.items()}


def reverify_report_json(report: ReverifyReport) -> dict[str, Any]:
    """``snap reverify --json`` and ``POST /v1/reverify`` run in-process."""
    return {
        "results": [reverified_result_json(result, report) for result in report.results],
        **reverify_report_json_besides_results(report),
    }


def reverified_result_json(result: CitationResult, report: ReverifyReport) -> dict[str, Any]:
    """A re-checked citation; one whose URL could not be captured again (``--refetch``) says
    why on its own row (``refetchFailed``): its status is of the capture snap still holds, and
    a pipeline reading rows alone must not take a page now gone for one that still says it."""
    document = citation_result_json(result)
    failed = report.refetch_errors.get(result.url or "")
    if failed is not None:
        document["refetchFailed"] = failed
    return document


def reverify_report_json_besides_results(report: ReverifyReport) -> dict[str, Any]:
    """``reverify_report_json`` but its ``results``: for a printer that writes each result's
    JSON as it goes (``snap reverify --json``), never the whole list at once."""
    failed = [
        {"url": url, "status": REFETCH_FAILED, "reason": reason}
        for url, reason in sorted(report.refetch_errors.items())
    ]
    return {
        "refetchFailed": failed,
        "summary": {
            "total": len(report.results),
            "byStatus": by_status_json(report.by_status),
            "refetchErrors": dict(report.refetch_errors),
            "runId": report.run_id,
            "resumed": report.resumed,
        },
    }


def citation_result_json(result: CitationResult) -> dict[str, Any]:
    """One checked citation: the result, then the check's details under their own keys, as
    its verification row keeps them (``records.outcome.stored_details``)."""
    from records.outcome import stored_details

    outcome = result.outcome
    span = result.span
    quote = result.quote
    document: dict[str, Any] = {
        "citationId": result.citation_id,
        "status": outcome.status.value,
        "snapshotId": outcome.snapshot_id,
        "url": result.url,
        "span": None if span is None else {"start": span[0], "end": span[1]},
        "spanUtf16": None
        if result.span_utf16 is None
        else {"start": result.span_utf16[0], "end": result.span_utf16[1]},
        "quote": None
        if quote is None
        else {"prefix": quote.prefix, "exact": quote.exact, "suffix": quote.suffix},
        "matches": outcome.matches,
        "offsets": result.offsets,
        "closest": closest_json(outcome.closest, result.closest_offsets),
        "reason": outcome.reason,
    }
    if result.claim_text is not None:
        document["claim"] = result.claim_text
    document.update(stored_details(outcome.details))
    return document


def closest_json(
    closest: Closest | None, offsets: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """The passage most like a quote not found (or like the claim of a citation that quotes
    nothing): its score, words, span, differing spans and alignment with the quote."""
    from records.passage_marks import rounded_score

    if closest is None:
        return None
    document: dict[str, Any] = {
        "score": rounded_score(closest),
        "text": closest.text,
        "start": closest.start,
        "end": closest.end,
        "differences": [list(span) for span in closest.differences],
        "alignment": alignment_json(closest),
    }
    if offsets is not None:
        document["offsets"] = offsets
    return document


def alignment_json(closest: Closest) -> list[dict[str, Any]]:
    """The closest passage's edit alignment with the quote, step by step: ``op`` (``equal``,
    ``replace``, ``added``, ``dropped``), the quote's words (empty for ``dropped``) and the
    source span in code points (an empty span at the gap for ``added``)."""
    return [
        {
            "op": edit.kind.value,
            "quote": edit.quote,
            "source": {"start": edit.start, "end": edit.end},
        }
        for edit in closest.alignment
    ]


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
            {**blob_check_json(entry.blob), **_named_by(entry.snapshot_id, entry.checkpoint_id)}
            for entry in report.shadowed
        ],
        "orphans": list(report.orphans),
        "tempFiles": list(report.temp_files),
        "tempFilesRemoved": report.temp_files_removed,
    }


def fsck_problem_json(problem: FsckProblem) -> dict[str, Any]:
    if problem.blob is not None:
        blob = blob_check_json(problem.blob)
        owner = _named_by(problem.snapshot_id, problem.checkpoint_id)
        return {**blob, **owner, "problem": problem.problem}
    if problem.key is not None:
        return {"key": problem.key, "problem": problem.problem}
    return {
        "snapshotId": problem.snapshot_id,
        "captureId": problem.capture_id,
        "problem": problem.problem,
    }


def _named_by(snapshot_id: str | None, checkpoint_id: int | None) -> dict[str, Any]:
    """The record a blob of ``snap fsck`` belongs to: a snapshot, or a log checkpoint (whose
    timestamp token names no snapshot)."""
    if checkpoint_id is not None:
        return {"checkpointId": checkpoint_id}
    return {"snapshotId": snapshot_id}


def shown_json(shown: Shown) -> dict[str, Any]:
    """``snap show --json``, ``GET /v1/snapshots/{id}/text`` and the MCP ``show_text`` tool."""
    document: dict[str, Any] = {"snapshotId": shown.snapshot_id, "what": shown.what}
    if shown.what == "text":
        document |= {
            "extractionId": shown.extraction_id,
            "start": shown.start,
            "end": shown.end,
            "length": shown.length,
            "text": shown.text,
        }
    elif shown.what in ("raw", "screenshot"):
        raw = shown.raw or b""
        document |= {"size": len(raw), "base64": base64.b64encode(raw).decode("ascii")}
    else:
        document["headers"] = None if shown.headers is None else dict(shown.headers)
        if shown.exchanges is not None:
            document["exchanges"] = [exchange_json(item) for item in shown.exchanges]
    document["origin"] = shown.origin
    return document


def shown_written_json(shown: Shown, path: str, written: bytes) -> dict[str, Any]:
    """``snap show --output FILE --json``: what was written where, and its digest (the bytes
    were re-hashed against the snapshot's own digest when read)."""
    return {
        "snapshotId": shown.snapshot_id,
        "what": shown.what,
        "path": path,
        "size": len(written),
        "sha256": hashlib.sha256(written).hexdigest(),
    }


def exchange_json(exchange: Exchange) -> dict[str, Any]:
    return {
        "url": exchange.url,
        "status": exchange.status,
        "request": None if exchange.request is None else head_json(exchange.request),
        "response": head_json(exchange.response),
    }


def head_json(head: Head) -> dict[str, Any]:
    return {"line": head.first_line, "headers": [list(pair) for pair in head.headers]}


def audit_json(report: AuditReport) -> dict[str, Any]:
    """``snap audit --json``, ``GET /v1/citations/{id}/audit`` and the like, and the MCP
    ``audit`` tool: the keys of each kind of report in the order a reader meets them."""
    from records.audit import CitationAudit, UrlAudit

    captures = [capture_json(capture) for capture in report.captures]
    if isinstance(report, CitationAudit):
        return {
            "citation": citation_json(report.citation),
            "snapshot": None if report.snapshot is None else audited_snapshot_json(report.snapshot),
            "captures": captures,
            "verifications": [verification_json(v) for v in report.verifications],
        }
    citations = [citation_checks_json(item) for item in report.citations]
    if isinstance(report, UrlAudit):
        return {
            "url": report.url,
            "captures": captures,
            "snapshots": [audited_snapshot_json(s) for s in report.snapshots],
            "citations": citations,
        }
    return {
        "snapshot": audited_snapshot_json(report.snapshot),
        "captures": captures,
        "citations": citations,
    }


def citation_json(citation: CitationRecord) -> dict[str, Any]:
    position = citation.position
    return {
        "citationId": citation.citation_id,
        "url": citation.url,
        "snapshotId": citation.snapshot_id,
        "extractionId": citation.extraction_id,
        "claimedSnapshotId": citation.claimed_snapshot_id,
        "selector": {
            "quote": {
                "exact": citation.exact,
                "prefix": citation.prefix,
                "suffix": citation.suffix,
            },
            "position": None
            if position is None
            else {"start": position.start, "end": position.end, "unit": position.unit},
        },
        "page": citation.page,
        "claim": citation.claim,
        "answerId": citation.answer_id,
        "createdAt": wire_time(citation.created_at),
    }


def citation_checks_json(item: CitationChecks) -> dict[str, Any]:
    return {
        **citation_json(item.citation),
        "verifications": [verification_json(v) for v in item.verifications],
    }


def verification_json(check: VerificationRecord) -> dict[str, Any]:
    closest = None
    if check.closest_text is not None:
        closest = {"text": check.closest_text, "score": check.closest_score}
    return {
        "verificationId": check.verification_id,
        "checkedAt": wire_time(check.checked_at),
        "status": check.status.value,
        "snapshotId": check.snapshot_id,
        "extractionId": check.extraction_id,
        "span": None if check.span is None else {"start": check.span[0], "end": check.span[1]},
        "matches": check.matches,
        "closest": closest,
        "reason": check.reason,
        "details": dict(check.details),
        "verifier": check.verifier,
        "normalizer": check.normalizer,
        "logProof": None if check.log_proof is None else dict(check.log_proof),
    }


def capture_json(capture: CaptureRecord) -> dict[str, Any]:
    """A capture; a stored one carries its ``seal`` (null: recorded before seals were kept)."""
    document: dict[str, Any] = {
        "captureId": capture.capture_id,
        "url": capture.url,
        "finalUrl": capture.final_url,
        "fetchedAt": wire_time(capture.fetched_at),
        "httpStatus": capture.http_status,
        "outcome": capture.outcome.value,
        "error": capture.error,
        "snapshotId": capture.snapshot_id,
        "method": capture.method,
        "provenance": dict(capture.provenance),
        "logProof": None if capture.log_proof is None else dict(capture.log_proof),
    }
    if capture.stored:
        document["seal"] = None if capture.seal is None else seal_state_json(capture.seal)
    return document


def audited_snapshot_json(snapshot: AuditedSnapshot) -> dict[str, Any]:
    """A snapshot as ``snap audit`` reads it back (the other of its two shapes: see
    ``stored_capture_json``)."""
    return {
        "snapshotId": snapshot.snapshot_id,
        "hashes": {
            "raw": snapshot.raw_hash,
            "text": snapshot.text_hash,
            "norm": snapshot.norm_hash,
        },
        "sizes": {"raw": snapshot.raw_size, "text": snapshot.text_size},
        "contentType": snapshot.content_type,
        "extractor": snapshot.extractor,
        "normalizer": snapshot.normalizer,
        "store": snapshot.store,
        "versionIds": {"raw": snapshot.raw_version_id, "text": snapshot.text_version_id},
        "retention": {
            "mode": snapshot.lock_mode,
            "until": wire_time_or_none(snapshot.retain_until),
        },
        "pages": list(snapshot.pages),
        "flags": list(snapshot.flags),
        "recordedAt": wire_time(snapshot.recorded_at),
        "extractions": [extraction_json(e) for e in snapshot.extractions],
        "blobs": [blob_check_json(blob) for blob in snapshot.blobs],
    }


def extraction_json(extraction: ExtractionRecord) -> dict[str, Any]:
    return {
        "extractionId": extraction.extraction_id,
        "extractor": extraction.extractor,
        "decoding": extraction.decoding,
        "contentType": extraction.content_type,
        "hashes": {"text": extraction.text_hash, "norm": extraction.norm_hash},
        "textSize": extraction.text_size,
        "normalizer": extraction.normalizer,
        "source": extraction.source,
        "textVersionId": extraction.text_version_id,
        "pages": extraction.pages,
        "flags": list(extraction.flags),
        "recordedAt": wire_time(extraction.recorded_at),
    }


def export_result_json(result: ExportResult) -> dict[str, Any]:
    """``snap export --json``: the file written, what was selected, and what each format
    wrote beside it (``written_counts_json``)."""
    selection = result.selection
    return {
        "path": str(result.path),
        "format": result.format,
        "sha256": result.sha256,
        "bytes": result.size,
        "selection": selection.described,
        "counts": {
            "captures": len(selection.captures),
            "snapshots": len(selection.snapshot_ids),
            "citations": len(selection.citations),
            "verifications": result.verifications,
            **written_counts_json(result.written),
        },
        "snapshotIds": selection.snapshot_ids,
        "citationIds": selection.citation_ids,
        "notRecorded": list(selection.not_recorded),
    }


def written_counts_json(written: WrittenCounts) -> dict[str, Any]:
    """Only the counts the format has: none for the evidence page, the records of a WARC, and
    of a WACZ also its pages, annotations and signature."""
    counts = {
        "records": None if written.records is None else dict(written.records),
        "pages": written.pages,
        "annotations": written.annotations,
        "signed": written.signed,
        "signature": written.signature,
    }
    return {key: value for key, value in counts.items() if value is not None}


def import_report_json(report: ImportReport) -> dict[str, Any]:
    """``snap import --json``: one result per record (a capture recorded saying whether its
    archive's attestation holds for it), then the counts of each outcome, the damage lines and
    the attestation problems (``records.imports.attestations``, ``records.imports.attested``)."""
    summary: dict[str, Any] = {
        str(outcome): report.count(outcome) for outcome in REPORTED_IMPORT_OUTCOMES
    }
    return {
        "path": report.path,
        "kind": report.kind,
        "records": [record_result_json(result) for result in report.results],
        "summary": summary
        | {
            "damaged": report.damaged,
            "attestationProblems": report.attestation_problems,
            "exitCode": report.exit_code,
        },
    }


def record_result_json(result: RecordResult) -> dict[str, Any]:
    return {
        "file": result.source,
        "offset": result.offset,
        "type": result.record_type,
        "uri": result.uri,
        "outcome": str(result.outcome),
        "recordId": result.record_id,
        "snapshotId": result.snapshot_id,
        "captureId": result.capture_id,
        "status": result.status,
        "reason": result.reason,
        "attestation": None if result.attestation is None else str(result.attestation),
    }


def relocation_json(moved: Relocation) -> dict[str, Any]:
    """``snap store relocate --json``."""
    return {
        "from": list(moved.moved_from),
        "to": moved.moved_to,
        "snapshots": moved.snapshots,
        "blobsChecked": moved.blobs_checked,
    }


def store_init_json(result: StoreInit) -> dict[str, Any]:
    """``snap store init --json``: a folder store's three keys, a bucket's also its name and
    the retention new objects get."""
    document: dict[str, Any] = {"store": result.store}
    if result.bucket is not None:
        document["bucket"] = result.bucket
    document |= {"created": result.created, "objectLock": result.object_lock}
    if result.bucket is not None:
        document |= {"lockMode": result.lock_mode, "lockDays": result.lock_days}
    return document


def upgrade_json(result: Upgrade) -> dict[str, Any]:
    """``snap db upgrade --json``."""
    return {
        "database": result.database,
        "from": result.before,
        "revision": result.revision,
        "upgraded": result.upgraded,
    }
