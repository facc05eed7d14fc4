"""Citations and their verifications as W3C Web Annotations, for ``annotations.jsonl``.

A citation is an annotation with motivation ``quoting`` (its claim as the body); each check of
it is an annotation with motivation ``assessing`` whose targets are the citation's annotation
and the text checked. Every target that names stored bytes carries a ``TimeState``: the capture
time as ``sourceDate`` and, as ``cached``, the WARC-Record-ID of the response record holding
those bytes (whose ``WARC-Payload-Digest`` is the snapshot id): for a check, of the capture it
read them through; for the citation, of the capture its latest check that found the quote read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from records.emit import claim_body
from records.exports.selection import CaptureItem, CitationItem, Selection, VerificationItem
from records.exports.warc import WarcSummary, warc_date
from records.inputs import ANNOTATION_ID_PREFIX
from snapshotter.times import wire_time_or_none
from verifier import Status, TextPositionSelector, TextQuoteSelector

CONTEXT = "http://www.w3.org/ns/anno.jsonld"


def web_annotations(selection: Selection, summary: WarcSummary) -> Iterator[dict[str, Any]]:
    """One ``quoting`` annotation per citation, then one ``assessing`` per verification."""
    exported = _exported_captures(selection, summary)
    for citation in selection.citations:
        yield _citation(citation, exported)
        for number, verification in enumerate(citation.verifications, start=1):
            yield _verification(citation, verification, number, exported)


Exported = dict[str | int, tuple[CaptureItem, str]]


def _exported_captures(selection: Selection, summary: WarcSummary) -> Exported:
    """Each exported capture by its id, and the first exported capture of each snapshot, with
    its response record's id."""
    found: Exported = {}
    for capture in selection.captures:
        record_id = summary.response_ids.get(capture.capture_id)
        if record_id is not None:
            found[capture.capture_id] = (capture, record_id)
            found.setdefault(capture.snapshot_id, (capture, record_id))
    return found


def _target(
    citation: CitationItem,
    snapshot_id: str | None,
    exported: Exported,
    span: tuple[int | None, int | None] = (None, None),
    capture_id: int | None = None,
) -> dict[str, Any]:
    quote = TextQuoteSelector(citation.exact, citation.prefix, citation.suffix)
    selectors: list[dict[str, object]] = [quote.to_w3c()]
    if span[0] is not None and span[1] is not None:
        selectors.append(TextPositionSelector(span[0], span[1]).to_w3c())
    target: dict[str, Any] = {"type": "SpecificResource", "selector": selectors}
    held = exported.get(capture_id) if capture_id is not None else None
    held = held or exported.get(snapshot_id or "")
    if held is not None:
        capture, record_id = held
        target["source"] = citation.url or capture.url
        target["state"] = {
            "type": "TimeState",
            "sourceDate": warc_date(capture),
            "cached": record_id.strip("<>"),
        }
    elif citation.url:
        target["source"] = citation.url
    return target


def _citation(citation: CitationItem, exported: Exported) -> dict[str, Any]:
    found = [v for v in citation.verifications if v.status == Status.QUOTE_FOUND]
    span = (found[-1].span_start, found[-1].span_end) if found else (None, None)
    snapshot_id = citation.snapshot_id or (found[-1].snapshot_id if found else None)
    read = found[-1].capture_id if found and found[-1].snapshot_id == snapshot_id else None
    document: dict[str, Any] = {
        "@context": CONTEXT,
        "id": ANNOTATION_ID_PREFIX + citation.id,
        "type": "Annotation",
        "motivation": "quoting",
        "created": wire_time_or_none(citation.created_at),
        "target": _target(citation, snapshot_id, exported, span, read),
    }
    if citation.claim_text:
        document["body"] = claim_body(citation.claim_text)
    return document


def _verification(
    citation: CitationItem,
    verification: VerificationItem,
    number: int,
    exported: Exported,
) -> dict[str, Any]:
    span = (verification.span_start, verification.span_end)
    body: list[dict[str, Any]] = [
        {"type": "TextualBody", "purpose": "assessing", "value": verification.status}
    ]
    if verification.reason:
        body.append({"type": "TextualBody", "purpose": "describing", "value": verification.reason})
    return {
        "@context": CONTEXT,
        "id": f"{ANNOTATION_ID_PREFIX}{citation.id}/verification/{number}",
        "type": "Annotation",
        "motivation": "assessing",
        "created": wire_time_or_none(verification.checked_at),
        "generator": {"type": "Software", "name": verification.verifier},
        "body": body,
        "target": [
            ANNOTATION_ID_PREFIX + citation.id,
            _target(citation, verification.snapshot_id, exported, span, verification.capture_id),
        ],
    }
