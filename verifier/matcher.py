"""Quote checking: a normalized exact token match that never lets a changed number pass.

``check_quote(quote, source)`` is ``prepare(source).check(quote)``; prepare once and check
many quotes when re-verifying a snapshot's citations.  The steps of a check, in order:

1. A quote with an ellipsis is not checked (a shortened quote can reverse its meaning);
   a quote without tokens proves nothing; a quote with a numeric form the tokenizer cannot
   parse ("1/2", "3:00", "5!") is not checked.  Each gives ``could_not_check`` and a reason.
2. Every occurrence of the quote's token keys in the source's token keys is found exactly.
3. The context guard refuses an occurrence whose first or last token is a number touching,
   across whitespace only, a sign, unit, operator or number just outside it ("0.5" in
   "- 0.5", "5" in "5 %").  If every occurrence is refused: ``numeric context``.
4. If nothing matched, the closest passage is computed for display (see ``closest``).
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from verifier import closest as closest_passage
from verifier.search import find_all
from verifier.tokenizer import NUMBER, NUMFORM, OP, UNIT, scan, token_keys

VERIFIER_ID: Final = "snap-verifier@1"

QUOTE_FOUND: Final = "quote_found"
NOT_FOUND: Final = "not_found"
COULD_NOT_CHECK: Final = "could_not_check"

_ELLIPSES: Final = ("...", "…")
_GUARDING_KINDS: Final = frozenset({NUMBER, NUMFORM, OP, UNIT})


@dataclass(frozen=True, slots=True)
class Closest:
    """The most similar source window: for the reader to compare, never a pass."""

    score: float
    text: str
    start: int
    end: int
    differences: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class QuoteCheck:
    """The outcome of checking one quote; offsets are code points into the source."""

    status: str
    found: bool
    start: int | None
    end: int | None
    original: str | None
    matches: int
    spans: tuple[tuple[int, int], ...]
    closest: Closest | None
    reason: str | None


def normalized_digest(text: str) -> str:
    """``sha256:<hex>`` of the comparison keys of ``text``, one per line.

    Two texts with the same digest give the same result for every quote, which is what lets a
    snapshot record say which normalized text its citations were checked against.
    """
    return _digest(token_keys(text))


def check_quote(quote: str, source: str) -> QuoteCheck:
    """Check that ``quote`` occurs in ``source`` (see the module docstring for the steps)."""
    return prepare(source).check(quote)


def prepare(source: str) -> PreparedSource:
    """Tokenize and index ``source`` once, for checking many quotes against it."""
    return PreparedSource(source)


class PreparedSource:
    """A tokenized source with a key → positions index; ``check`` never re-tokenizes it."""

    __slots__ = ("_digest", "_ends", "_kinds", "_positions", "_starts", "keys", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self.keys: list[str] = []
        self._starts = array("q")
        self._ends = array("q")
        self._kinds: list[str] = []
        self._positions: dict[str, list[int]] = {}
        self._digest: str | None = None
        for index, (start, end, kind, key) in enumerate(scan(source)):
            self.keys.append(key)
            self._starts.append(start)
            self._ends.append(end)
            self._kinds.append(kind)
            self._positions.setdefault(key, []).append(index)

    def normalized_digest(self) -> str:
        """Same as ``normalized_digest(self.source)``, from the stored tokens."""
        if self._digest is None:
            self._digest = _digest(self.keys)
        return self._digest

    def token_span(self, first: int, last: int) -> tuple[int, int]:
        """Code-point span from the start of token ``first`` to the end of token ``last``."""
        return self._starts[first], self._ends[last]

    def tokens_overlapping(self, start: int, end: int) -> range:
        """Indices of the tokens that overlap the code-point range ``[start, end)``."""
        return range(bisect_right(self._ends, start), bisect_left(self._starts, end))

    def check(self, quote: str) -> QuoteCheck:
        """Check ``quote`` against this source; equal to ``check_quote(quote, self.source)``."""
        quote_tokens = list(scan(quote))
        refusal = _refusal(quote, [kind for _, _, kind, _ in quote_tokens])
        if refusal is not None:
            return _unchecked(refusal)
        quote_keys = [key for _, _, _, key in quote_tokens]
        starts = self.occurrences(quote_keys)
        accepted = [s for s in starts if self._context_allows(s, s + len(quote_keys) - 1)]
        if accepted:
            return self._found(accepted, len(quote_keys))
        if starts:
            return _unchecked("numeric context")
        return QuoteCheck(
            NOT_FOUND, False, None, None, None, 0, (), self._closest(quote_keys), None
        )

    def occurrences(self, quote_keys: Sequence[str]) -> list[int]:
        """Start token indices of every exact occurrence of ``quote_keys``, in order.

        Candidates come from the rarest key's positions; when verifying them could cost more
        than a linear scan, KMP over all keys is used instead, so the cost stays O(N + M).
        """
        length = len(quote_keys)
        rarest = min(range(length), key=lambda j: len(self._positions.get(quote_keys[j], ())))
        candidates = self._positions.get(quote_keys[rarest], [])
        if len(candidates) * length > len(self.keys) + length:
            return find_all(quote_keys, self.keys)
        keys, wanted = self.keys, list(quote_keys)
        return [
            start
            for start in (index - rarest for index in candidates)
            if start >= 0 and keys[start : start + length] == wanted
        ]

    def _found(self, accepted: list[int], length: int) -> QuoteCheck:
        spans = tuple(self.token_span(s, s + length - 1) for s in accepted)
        start, end = spans[0]
        original = self.source[start:end]
        return QuoteCheck(QUOTE_FOUND, True, start, end, original, len(spans), spans, None, None)

    def _context_allows(self, first: int, last: int) -> bool:
        """False when a number at either end of the match touches a guarding token outside it."""
        kinds = self._kinds
        if kinds[first] == NUMBER and first > 0 and self._touches(first - 1, first):
            return False
        after = last + 1
        return not (kinds[last] == NUMBER and after < len(kinds) and self._touches(last, after))

    def _touches(self, left: int, right: int) -> bool:
        """True when tokens ``left`` and ``right`` are separated by whitespace only and the
        outside one (whichever is not the match's number) is a sign, unit, operator or number."""
        gap = self.source[self._ends[left] : self._starts[right]]
        if gap and not gap.isspace():
            return False
        return self._kinds[left] in _GUARDING_KINDS and self._kinds[right] in _GUARDING_KINDS

    def _closest(self, quote_keys: list[str]) -> Closest | None:
        window = closest_passage.best_window(quote_keys, self.keys, self._positions)
        if window is None:
            return None
        first, equal = window
        last = min(first + len(quote_keys), len(self.keys)) - 1
        start, end = self.token_span(first, last)
        differing = closest_passage.differing_positions(quote_keys, self.keys, first)
        return Closest(
            score=equal / len(quote_keys),
            text=self.source[start:end],
            start=start,
            end=end,
            differences=tuple(self.token_span(i, i) for i in differing),
        )


def _refusal(quote: str, kinds: list[str]) -> str | None:
    """The reason a quote cannot be checked at all, or None when it can be."""
    if any(mark in quote for mark in _ELLIPSES):
        return "ellipsis"
    if not kinds:
        return "empty quote"
    if NUMFORM in kinds:
        return "numeric form"
    return None


def _unchecked(reason: str) -> QuoteCheck:
    return QuoteCheck(COULD_NOT_CHECK, False, None, None, None, 0, (), None, reason)


def _digest(keys: Sequence[str]) -> str:
    return "sha256:" + hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()
