"""The closest passage: shown to the reader when a quote is not found, never used to pass one.

The score of a window (a run of source tokens as long as the quote) is the fraction of
positions where the window's token equals the quote's token at the same position.  Scoring
every window costs O((N - M + 1)·M); instead windows are visited through the token index,
rarest quote token first:

* after the windows that share the quote's k rarest tokens (at the aligned position) have been
  scored, any other window can match at most M - k positions, so the search stops as soon as
  that bound falls below the best score found.  For a quote with one changed word this stops
  after the two rarest tokens.
* the work is capped: at most ``MAX_OCCURRENCES`` index entries are read and at most
  ``MAX_WINDOWS`` windows are scored (each O(M)), whatever the source size.  The result is
  exact unless a cap is reached; then it is the best window among those visited, which are
  the windows sharing the quote's rarest tokens.

Ties go to the earliest window, so the result is deterministic.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Closest:
    """The most similar source passage: for the reader to compare, never a pass."""

    score: float
    text: str
    start: int
    end: int
    differences: tuple[tuple[int, int], ...]


SIMILAR_ENOUGH_TO_SHOW: Final = 0.34
"""Below this score the closest passage is unrelated text: readers are told nothing resembles
the quote instead (the CLI and the evidence page alike)."""
MAX_WINDOWS: Final = 4_096
MAX_OCCURRENCES: Final = 50_000


def best_window(
    quote_keys: Sequence[Key],
    source_keys: Sequence[Key],
    positions: Mapping[Key, Sequence[int]],
) -> tuple[int, int] | None:
    """``(window start, equal positions)`` of the closest window, or None if nothing is equal.

    ``positions`` maps each source key to the ascending token indices where it occurs.
    """
    length = len(quote_keys)
    last_start = max(len(source_keys) - length, 0)
    order = sorted(range(length), key=lambda j: (len(positions.get(quote_keys[j], ())), j))
    best_start, best_score = -1, 0
    scored: set[int] = set()
    occurrences_left = MAX_OCCURRENCES
    for processed, position in enumerate(order):
        if length - processed < best_score or occurrences_left <= 0:
            break
        occurrences = positions.get(quote_keys[position], ())
        occurrences_left -= len(occurrences)
        for index in occurrences:
            start = index - position
            if start < 0 or start > last_start or start in scored:
                continue
            scored.add(start)
            score = aligned_equal(quote_keys, source_keys, start)
            if score > best_score or (score == best_score and start < best_start):
                best_start, best_score = start, score
            if len(scored) >= MAX_WINDOWS:
                break
        if len(scored) >= MAX_WINDOWS:
            break
    return None if best_score == 0 else (best_start, best_score)


def differing_positions(
    quote_keys: Sequence[Key], source_keys: Sequence[Key], start: int
) -> list[int]:
    """Source token indices in the window at ``start`` whose key differs from the quote's."""
    window = source_keys[start : start + len(quote_keys)]
    return [start + j for j, (a, b) in enumerate(zip(quote_keys, window, strict=False)) if a != b]


def aligned_equal(quote_keys: Sequence[Key], source_keys: Sequence[Key], start: int) -> int:
    """How many positions of the window at ``start`` equal the quote's: its score."""
    window = source_keys[start : start + len(quote_keys)]
    return sum(map(operator.eq, quote_keys, window))
