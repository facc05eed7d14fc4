"""The result of checking one citation, shared by verify and reverify, and its JSON form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from records.offset_units import offsets_of, span_units
from verifier import Closest, PreparedSource, Status, describe_span

PASSING = Status.QUOTE_FOUND
NO_QUOTE = Status.NO_QUOTE
SNIPPET_NOT_VERBATIM = Status.SNIPPET_NOT_VERBATIM
NO_QUOTE_REASON = (
    "the citation names a source but quotes nothing; snap can prove the source was captured, "
    "not that it supports the claim"
)
SNIPPET_REASON = (
    "the search engine's snippet is not word for word in the captured source; snippets are "
    "excerpts, not promised verbatim, so this is not evidence of a fabricated quote"
)


@dataclass(frozen=True)
class Outcome:
    """What one check found, before it is recorded."""

    status: Status
    snapshot_id: str | None = None
    start: int | None = None
    end: int | None = None
    matches: int = 0
    closest: Closest | None = None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CitationResult:
    """A recorded check, ready to print: spans in code points and UTF-16, quote from storage.

    What is needed from the source text is taken when the result is made, so results do not
    keep whole tokenized sources alive across a large batch.
    """

    citation_id: str
    url: str | None
    outcome: Outcome
    quote: dict[str, str] | None = None  # prefix, exact, suffix as they stand in storage
    span_utf16: tuple[int, int] | None = None
    claim_text: str | None = None
    verification_id: int | None = None
    offsets: dict[str, Any] | None = None  # the span in code points, UTF-16 and UTF-8
    closest_offsets: dict[str, Any] | None = None

    @classmethod
    def of(
        cls,
        citation_id: str,
        url: str | None,
        outcome: Outcome,
        source: PreparedSource | None,
        claim_text: str | None = None,
        verification_id: int | None = None,
    ) -> CitationResult:
        quote = span_utf16 = offsets = closest_offsets = None
        if source is not None and outcome.start is not None and outcome.end is not None:
            text = source.source
            selector, _ = describe_span(text, outcome.start, outcome.end)
            quote = {"prefix": selector.prefix, "exact": selector.exact, "suffix": selector.suffix}
            converter = offsets_of(text)
            span_utf16 = (converter.to_utf16(outcome.start), converter.to_utf16(outcome.end))
            offsets = span_units(text, outcome.start, outcome.end)
        if source is not None and outcome.closest is not None:
            closest = outcome.closest
            closest_offsets = span_units(source.source, closest.start, closest.end)
        return cls(
            citation_id,
            url,
            outcome,
            quote,
            span_utf16,
            claim_text,
            verification_id,
            offsets,
            closest_offsets,
        )

    @property
    def status(self) -> Status:
        return self.outcome.status

    @property
    def passed(self) -> bool:
        return self.outcome.status == PASSING

    def to_json(self) -> dict[str, Any]:
        outcome = self.outcome
        span = None
        if outcome.start is not None and outcome.end is not None:
            span = {"start": outcome.start, "end": outcome.end}
        span_utf16 = None
        if self.span_utf16 is not None:
            span_utf16 = {"start": self.span_utf16[0], "end": self.span_utf16[1]}
        result: dict[str, Any] = {
            "citationId": self.citation_id,
            "status": outcome.status,
            "snapshotId": outcome.snapshot_id,
            "url": self.url,
            "span": span,
            "spanUtf16": span_utf16,
            "quote": self.quote,
            "matches": outcome.matches,
            "offsets": self.offsets,
            "closest": closest_json(outcome.closest, self.closest_offsets),
            "reason": outcome.reason,
        }
        if self.claim_text is not None:
            result["claim"] = self.claim_text
        result.update(outcome.details)
        return result


def closest_json(
    closest: Closest | None, offsets: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    if closest is None:
        return None
    result = {
        "score": round(closest.score, 4),
        "text": closest.text,
        "start": closest.start,
        "end": closest.end,
        "differences": [list(span) for span in closest.differences],
        "alignment": alignment_json(closest),
    }
    if offsets is not None:
        result["offsets"] = offsets
    return result


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


def count_by_status(results: list[CitationResult]) -> dict[Status, int]:
    counts: dict[Status, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    return dict(sorted(counts.items()))
