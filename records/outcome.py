"""The result of checking one citation, shared by verify and reverify, and its JSON form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from records.offset_units import SpanOffsets, span_offsets
from verifier import Closest, PreparedSource, Status, TextQuoteSelector, describe_span

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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class CitationResult:
    """A recorded check, ready to print: spans in code points and UTF-16, quote from storage.

    What is needed from the source text is taken when the result is made, so results do not
    keep whole tokenized sources alive across a large batch; and it is kept compact (slots, the
    quote as its selector, each span as six integers), because a run holds every result until
    its report is printed: the JSON forms are made when printed (``quote``, ``offsets``).
    """

    citation_id: str
    url: str | None
    outcome: Outcome
    selector: TextQuoteSelector | None = None  # the quote as it stands in storage
    claim_text: str | None = None
    verification_id: int | None = None
    span: SpanOffsets | None = None  # the span found, in code points, UTF-16 and UTF-8
    closest_span: SpanOffsets | None = None  # the closest passage's, likewise

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
        selector = span = closest_span = None
        if source is not None and outcome.start is not None and outcome.end is not None:
            selector, _ = describe_span(source.source, outcome.start, outcome.end)
            span = span_offsets(source.source, outcome.start, outcome.end)
        if source is not None and outcome.closest is not None:
            closest = outcome.closest
            closest_span = span_offsets(source.source, closest.start, closest.end)
        return cls(
            citation_id, url, outcome, selector, claim_text, verification_id, span, closest_span
        )

    @property
    def quote(self) -> dict[str, str] | None:
        """Prefix, exact and suffix as they stand in storage."""
        if self.selector is None:
            return None
        selector = self.selector
        return {"prefix": selector.prefix, "exact": selector.exact, "suffix": selector.suffix}

    @property
    def span_utf16(self) -> tuple[int, int] | None:
        return None if self.span is None else (self.span.utf16_start, self.span.utf16_end)

    @property
    def offsets(self) -> dict[str, Any] | None:
        """The span in code points, UTF-16 and UTF-8."""
        return None if self.span is None else self.span.to_json()

    @property
    def closest_offsets(self) -> dict[str, Any] | None:
        return None if self.closest_span is None else self.closest_span.to_json()

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
