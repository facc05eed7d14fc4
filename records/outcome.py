"""The result of checking one citation, shared by verify and reverify.

Its JSON form is written by ``records.wire`` (``citation_result_json``) and nowhere else; the
text renderer and the service read the objects here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from records.attest.checks import SealState
from records.offset_units import UTF16, span_units_in
from records.wire_attest import seal_state_json
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
    # What else the check found, by wire key, in the order the result shows it: the input's
    # own fields, where the quote is (``foundAt``, ``foundElsewhere``), the pages, a changed
    # source, and ``seal`` (a SealState: the key's place among the others is part of the
    # wire shape and of the stored row, so it is kept here, typed, not in a field apart).
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def seal(self) -> SealState | None:
        """The seal of the capture the check read, as checked then (None: no capture read, or
        a check recorded before seals were kept)."""
        seal = self.details.get("seal")
        return seal if isinstance(seal, SealState) else None


@dataclass(frozen=True)
class CitationResult:
    """A recorded check, ready to print: spans in code points and UTF-16, quote from storage.

    What is needed from the source text is taken when the result is made, so results do not
    keep whole tokenized sources alive across a large batch.
    """

    citation_id: str
    url: str | None
    outcome: Outcome
    quote: TextQuoteSelector | None = None  # prefix, exact, suffix as they stand in storage
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
            quote, _ = describe_span(text, outcome.start, outcome.end)
            offsets = span_units_in(source.offsets, outcome.start, outcome.end)
            span_utf16 = (offsets[UTF16]["start"], offsets[UTF16]["end"])
        if source is not None and outcome.closest is not None:
            closest = outcome.closest
            closest_offsets = span_units_in(source.offsets, closest.start, closest.end)
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

    @property
    def span(self) -> tuple[int, int] | None:
        """Where the quote was found, in code points."""
        outcome = self.outcome
        if outcome.start is None or outcome.end is None:
            return None
        return outcome.start, outcome.end


def stored_details(details: dict[str, Any]) -> dict[str, Any]:
    """A check's details as its verification row keeps them and its result shows them (the
    one JSON form of the details): the seal as its document, in its place among the others."""
    return {
        key: seal_state_json(value) if isinstance(value, SealState) else value
        for key, value in details.items()
    }


def details_of_row(stored: dict[str, Any]) -> dict[str, Any]:
    """A verification row's details as an outcome holds them: the stored seal read back as a
    SealState (``stored_details`` writes it again as it was stored)."""
    details = dict(stored)
    seal = details.get("seal")
    if isinstance(seal, dict):
        details["seal"] = SealState.of_document(seal)
    return details


def count_by_status(results: list[CitationResult]) -> dict[Status, int]:
    counts: dict[Status, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    return dict(sorted(counts.items()))
