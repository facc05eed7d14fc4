"""Resolve a citation's selectors against a source text.

The steps, in order:

1. Check the quote (``PreparedSource.check``); ``could_not_check`` and ``not_found`` end here.
2. With a position: the quote is at the position when the tokens of
   ``source[start:end]`` are exactly the tokens of one accepted match (surrounding
   punctuation or whitespace inside the range is fine; a token cut by either boundary, or a
   range running past the end of the source, is not)
   → ``quote_found``.  Found only elsewhere → ``position_mismatch`` with every span: the
   citation is reported, never silently repaired.
3. Without a position and with several matches: prefer the matches whose surrounding tokens
   agree longest with the selector's prefix and suffix; if several remain equally good,
   ``quote_found`` with ``matches`` > 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from verifier.matcher import QUOTE_FOUND, Closest, PreparedSource, QuoteCheck, prepare
from verifier.selectors import TextPositionSelector, TextQuoteSelector
from verifier.tokenizer import token_keys

POSITION_MISMATCH: Final = "position_mismatch"


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a selector pair resolves.

    ``spans`` lists every accepted occurrence of the quote; ``start``/``end`` is the chosen one;
    ``matches`` counts the occurrences still equally plausible after disambiguation.
    """

    status: str
    start: int | None
    end: int | None
    matches: int
    spans: tuple[tuple[int, int], ...]
    closest: Closest | None
    reason: str | None


def resolve(
    source: str | PreparedSource,
    quote: TextQuoteSelector,
    position: TextPositionSelector | None = None,
) -> Resolution:
    """Resolve ``quote`` (and ``position`` if given) against ``source``."""
    prepared = source if isinstance(source, PreparedSource) else prepare(source)
    check = prepared.check(quote.exact)
    if not check.found:
        return Resolution(check.status, None, None, 0, (), check.closest, check.reason)
    if position is not None:
        return _at_position(prepared, check, position)
    chosen = _best_by_context(prepared, check.spans, quote)
    start, end = chosen[0]
    return Resolution(QUOTE_FOUND, start, end, len(chosen), check.spans, None, None)


def _at_position(
    prepared: PreparedSource, check: QuoteCheck, position: TextPositionSelector
) -> Resolution:
    overlapping = prepared.tokens_overlapping(position.start, position.end)
    if overlapping and position.end <= len(prepared.source):
        span = prepared.token_span(overlapping[0], overlapping[-1])
        inside = position.start <= span[0] and span[1] <= position.end
        if inside and span in check.spans:
            return Resolution(QUOTE_FOUND, span[0], span[1], 1, check.spans, None, None)
    return Resolution(POSITION_MISMATCH, None, None, check.matches, check.spans, None, None)


def _best_by_context(
    prepared: PreparedSource, spans: tuple[tuple[int, int], ...], quote: TextQuoteSelector
) -> list[tuple[int, int]]:
    """The spans whose neighbouring tokens agree longest with the prefix and suffix."""
    if len(spans) == 1:
        return list(spans)
    prefix_keys, suffix_keys = token_keys(quote.prefix), token_keys(quote.suffix)
    source = prepared.source
    scores = [
        _common_suffix(prefix_keys, token_keys(source[max(start - len(quote.prefix), 0) : start]))
        + _common_prefix(suffix_keys, token_keys(source[end : end + len(quote.suffix)]))
        for start, end in spans
    ]
    best = max(scores)
    return [span for span, score in zip(spans, scores, strict=True) if score == best]


def _common_prefix(left: Sequence[str], right: Sequence[str]) -> int:
    count = 0
    for a, b in zip(left, right, strict=False):
        if a != b:
            break
        count += 1
    return count


def _common_suffix(left: Sequence[str], right: Sequence[str]) -> int:
    return _common_prefix(left[::-1], right[::-1])
