"""Resolve a citation's selectors against a source text.

The steps, in order:

1. Check the quote (``PreparedSource.check``); ``could_not_check`` and ``not_found`` end here.
2. With a prefix or suffix (a TextQuoteSelector's context): an occurrence counts only when the
   source tokens next to it agree with the context, token by token; only the outermost token of
   each context may be partial, since a 32-character context can cut a word.  When the quote
   occurs only in other contexts → ``context_mismatch``, with every span where it does occur.
3. With a position: the quote is at the position when the tokens of ``source[start:end]`` are
   exactly the tokens of one counted occurrence (surrounding punctuation or whitespace inside
   the range is fine; a token cut by either boundary, or a range past the end, is not)
   → ``quote_found``.  Found only elsewhere → ``position_mismatch`` with every span: the
   citation is reported, never silently repaired.
4. Without a position, every counted occurrence is equally good: ``quote_found`` with the
   first, and ``matches`` says how many there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from verifier.closest import Closest
from verifier.matcher import PreparedSource, QuoteCheck, prepare
from verifier.selectors import TextPositionSelector, TextQuoteSelector
from verifier.status import Status
from verifier.tokenizer import Token, tokenize

POSITION_MISMATCH: Final = Status.POSITION_MISMATCH
CONTEXT_MISMATCH: Final = Status.CONTEXT_MISMATCH


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a selector pair resolves.

    ``spans`` lists every occurrence of the quote that agrees with the context (every
    occurrence, for ``context_mismatch``); ``start``/``end`` is the chosen one; ``matches``
    counts the occurrences still equally plausible.
    """

    status: Status
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
    spans = _agreeing_with_context(prepared, check.spans, quote)
    if not spans:
        return Resolution(
            CONTEXT_MISMATCH,
            None,
            None,
            check.matches,
            check.spans,
            None,
            "the quote occurs, but never next to the cited prefix and suffix",
        )
    if position is not None:
        return _at_position(prepared, spans, position)
    start, end = spans[0]
    return Resolution(Status.QUOTE_FOUND, start, end, len(spans), spans, None, None)


def context_agrees(
    prepared: PreparedSource, span: tuple[int, int], quote: TextQuoteSelector
) -> bool:
    """True when the source tokens around ``span`` agree with the quote's prefix and suffix."""
    tokens = prepared.tokens_overlapping(*span)
    if not tokens:
        return False
    before = _context_tokens(quote.prefix)
    after = _context_tokens(quote.suffix)
    first, last = tokens[0], tokens[-1]
    for offset, token in enumerate(reversed(before), start=1):
        index = first - offset
        outermost = offset == len(before)
        if index < 0 or not _same(prepared, index, token, partial="end" if outermost else None):
            return False
    for offset, token in enumerate(after, start=1):
        index = last + offset
        outermost = offset == len(after)
        if index >= len(prepared) or not _same(
            prepared, index, token, partial="start" if outermost else None
        ):
            return False
    return True


def _agreeing_with_context(
    prepared: PreparedSource, spans: tuple[tuple[int, int], ...], quote: TextQuoteSelector
) -> tuple[tuple[int, int], ...]:
    if not (quote.prefix or quote.suffix):
        return spans
    return tuple(span for span in spans if context_agrees(prepared, span, quote))


def _context_tokens(context: str) -> list[Token]:
    """The tokens of a prefix or suffix, read as the middle of a text (a context starting with
    ". " continues a sentence; only a text's own first full stop is compared)."""
    return tokenize("x " + context)[1:] if context else []


def _same(prepared: PreparedSource, index: int, token: Token, *, partial: str | None) -> bool:
    """Does source token ``index`` equal the context token (its cut end, for the outermost)?"""
    source_form, token_form = prepared.compared_forms(index, token)
    if partial == "end":
        return source_form.endswith(token_form)
    if partial == "start":
        return source_form.startswith(token_form)
    return source_form == token_form


def _at_position(
    prepared: PreparedSource, spans: tuple[tuple[int, int], ...], position: TextPositionSelector
) -> Resolution:
    overlapping = prepared.tokens_overlapping(position.start, position.end)
    if overlapping and position.end <= len(prepared.source):
        span = prepared.token_span(overlapping[0], overlapping[-1])
        inside = position.start <= span[0] and span[1] <= position.end
        if inside and span in spans:
            return Resolution(Status.QUOTE_FOUND, span[0], span[1], 1, spans, None, None)
    return Resolution(POSITION_MISMATCH, None, None, len(spans), spans, None, None)


__all__ = ["CONTEXT_MISMATCH", "POSITION_MISMATCH", "QuoteCheck", "Resolution", "resolve"]
