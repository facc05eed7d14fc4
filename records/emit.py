"""``snap verify --emit``: verified citations written back out, complete and self-describing.

Each verified citation becomes a citation record (with the snapshot's hashes and versions, so a
later reader can tell a stale citation from a broken one) and a W3C Web Annotation whose target
carries the snapshot as its cached state.
"""

from __future__ import annotations

from typing import Any

from records.citation_input import ANNOTATION_ID_PREFIX
from records.evidence import Evidence
from records.models import Citation, Snapshot
from records.outcome import CitationResult
from records.repository import capture_time, choose_extraction, get_snapshot
from records.workspace import Workspace
from snapshotter.times import wire_time_or_none
from verifier import TextPositionSelector, TextQuoteSelector


def emit_verified(workspace: Workspace, results: list[CitationResult]) -> dict[str, Any]:
    citations, annotations = [], []
    with workspace.db.reading() as session:
        for result in results:
            snapshot = get_snapshot(session, result.outcome.snapshot_id or "")
            if not result.passed or snapshot is None or result.quote is None:
                continue
            fetched_at = wire_time_or_none(capture_time(session, snapshot.id, result.url))
            citation = session.get(Citation, result.citation_id)
            pinned = citation.extraction_id if citation is not None else None
            extraction = choose_extraction(session, snapshot.id, pinned=pinned)
            record = citation_record(result, Evidence.of(snapshot, extraction), fetched_at)
            if citation is not None and citation.page is not None:
                record["page"] = citation.page
            citations.append(record)
            annotations.append(annotation(result, snapshot, fetched_at))
    return {"citations": citations, "annotations": annotations}


def selectors(result: CitationResult) -> tuple[TextQuoteSelector, TextPositionSelector]:
    assert result.quote is not None  # only passed results with their stored quote are emitted
    return result.quote, TextPositionSelector(result.outcome.start or 0, result.outcome.end or 0)


def citation_record(
    result: CitationResult, evidence: Evidence, fetched_at: str | None
) -> dict[str, Any]:
    """The record names the extraction the quote was found in, by its extractor and hashes."""
    quote, _ = selectors(result)
    start16, end16 = result.span_utf16 or (None, None)
    return {
        "citationId": result.citation_id,
        "snapshotId": evidence.snapshot_id,
        "url": result.url,
        "fetchedAt": fetched_at,
        "extractor": evidence.extractor,
        "normalizer": evidence.normalizer,
        "hashes": evidence.hashes,
        "selector": {
            "position": {"unit": "utf16", "start": start16, "end": end16},
            "quote": {"exact": quote.exact, "prefix": quote.prefix, "suffix": quote.suffix},
        },
    }


def annotation(
    result: CitationResult, snapshot: Snapshot, fetched_at: str | None
) -> dict[str, Any]:
    quote, position = selectors(result)
    target: dict[str, Any] = {
        "source": result.url,
        "state": {"type": "TimeState", "cached": snapshot.id, "sourceDate": fetched_at},
        "selector": [quote.to_w3c(), position.to_w3c()],
    }
    document: dict[str, Any] = {
        "@context": "http://www.w3.org/ns/anno.jsonld",
        "id": ANNOTATION_ID_PREFIX + result.citation_id,
        "type": "Annotation",
        "motivation": "quoting",
        "target": target,
    }
    if result.claim_text:
        document["body"] = claim_body(result.claim_text)
    return document


def claim_body(claim: str) -> dict[str, str]:
    """The claim a quote supports, as the annotation's body (W3C Web Annotation)."""
    return {"type": "TextualBody", "value": claim, "purpose": "describing"}
