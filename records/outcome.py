"""The result of checking one citation, shared by verify and reverify, and its JSON form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifier import Closest, PreparedSource, codepoint_to_utf16, describe_span

PASSING = "quote_found"
STATUSES = (
    "quote_found",
    "not_found",
    "could_not_check",
    "position_mismatch",
    "stale_fingerprint",
    "integrity_failure",
    "unknown_snapshot",
    "source_changed",
)


@dataclass(frozen=True)
class Outcome:
    """What one check found, before it is recorded."""

    status: str
    snapshot_id: str | None = None
    start: int | None = None
    end: int | None = None
    matches: int = 0
    closest: Closest | None = None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CitationResult:
    """A recorded check, ready to print: spans in code points and UTF-16, quote from storage."""

    citation_id: str
    url: str | None
    outcome: Outcome
    source: PreparedSource | None
    claim_text: str | None = None
    verification_id: int | None = None

    @property
    def status(self) -> str:
        return self.outcome.status

    @property
    def passed(self) -> bool:
        return self.outcome.status == PASSING

    def stored_quote(self) -> dict[str, str] | None:
        """Prefix, exact and suffix as they stand in the stored text (not as the user typed)."""
        outcome = self.outcome
        if self.source is None or outcome.start is None or outcome.end is None:
            return None
        quote, _ = describe_span(self.source.source, outcome.start, outcome.end)
        return {"prefix": quote.prefix, "exact": quote.exact, "suffix": quote.suffix}

    def to_json(self) -> dict[str, Any]:
        outcome = self.outcome
        span = span_utf16 = None
        if outcome.start is not None and outcome.end is not None:
            span = {"start": outcome.start, "end": outcome.end}
            if self.source is not None:
                text = self.source.source
                span_utf16 = {
                    "start": codepoint_to_utf16(text, outcome.start),
                    "end": codepoint_to_utf16(text, outcome.end),
                }
        result: dict[str, Any] = {
            "citationId": self.citation_id,
            "status": outcome.status,
            "snapshotId": outcome.snapshot_id,
            "url": self.url,
            "span": span,
            "spanUtf16": span_utf16,
            "quote": self.stored_quote(),
            "matches": outcome.matches,
            "closest": closest_json(outcome.closest),
            "reason": outcome.reason,
        }
        if self.claim_text is not None:
            result["claim"] = self.claim_text
        result.update(outcome.details)
        return result


def closest_json(closest: Closest | None) -> dict[str, Any] | None:
    if closest is None:
        return None
    return {
        "score": round(closest.score, 4),
        "text": closest.text,
        "start": closest.start,
        "end": closest.end,
        "differences": [list(span) for span in closest.differences],
    }


def count_by_status(results: list[CitationResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    return dict(sorted(counts.items()))
