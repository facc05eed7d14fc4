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

The passage shown is then lined up with the quote by an edit alignment of tokens (``align``:
difflib's ``SequenceMatcher`` over the key ids of the window and ``ALIGN_REACH`` tokens around
it), so a word added to or dropped from the quote marks that word or that gap only, and the
passage runs from the source token lined up with the quote's first token to the one lined up
with its last.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

Key = TypeVar("Key", bound=Hashable)


class EditKind(enum.Enum):
    """How a run of the quote's tokens lines up with the source's."""

    EQUAL = "equal"
    REPLACE = "replace"  # the quote has other words here
    ADDED = "added"  # the quote has words the source lacks here (a gap in the passage)
    DROPPED = "dropped"  # the source has words the quote leaves out


@dataclass(frozen=True, slots=True)
class Edit:
    """One step of the alignment: a run of the quote (as written, empty for ``DROPPED``) and the
    source span it lines up with (code points; empty, a gap, for ``ADDED``)."""

    kind: EditKind
    quote: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Closest:
    """The most similar source passage: for the reader to compare, never a pass.

    ``score`` is twice the tokens equal in the alignment over the tokens of quote and passage
    together (1 only for an equal passage; a substitution in a quote of 8 tokens gives 7/8);
    ``differences`` are the source spans that differ from the quote, one per token (an empty
    span marks where the quote has words the source lacks); ``alignment`` is the whole edit
    alignment, quote and passage, in order (empty when the passage was not aligned).
    """

    score: float
    text: str
    start: int
    end: int
    differences: tuple[tuple[int, int], ...]
    alignment: tuple[Edit, ...] = ()


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
        bound = length - processed  # a window first met now has no earlier position equal
        for index in occurrences:
            start = index - position
            if start < 0 or start > last_start or start in scored:
                continue
            scored.add(start)
            if bound > best_score or (bound == best_score and start < best_start):
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


ALIGN_REACH: Final = 4
"""Tokens of the source read on each side of the closest window when lining it up with the
quote, beyond a quarter of the quote's length: enough for the words a quote adds or drops."""


@dataclass(frozen=True, slots=True)
class Step:
    """One opcode of an alignment, in token indices: quote ``[q0, q1)``, source ``[s0, s1)``."""

    kind: EditKind
    q0: int
    q1: int
    s0: int
    s1: int


def reach(length: int) -> int:
    """Tokens read on each side of a window of ``length`` tokens (see ``ALIGN_REACH``)."""
    return length // 4 + ALIGN_REACH


def align(
    quote_keys: Sequence[Key],
    source_keys: Sequence[Key],
    lo: int,
    hi: int,
    alike: Callable[[int, int], bool],
) -> list[Step]:
    """The edit alignment of the quote with source tokens ``[lo, hi)``, trimmed to the passage:
    source tokens before the first and after the last lined up with a quote token are left out,
    so the passage covers the whole quote and no more.  Source indices are absolute.

    At an edge a changed word and an added one cost the same ("… bank today" against "… bank.
    Other"): a replacement at an edge keeps as many source tokens as it replaces, and one
    quote token there counts as replaced only when ``alike(quote index, source index)`` says
    the two are alike (a number for a number, a word spelled alike: a changed token), else as
    added (a gap at the passage's edge).
    """
    import difflib  # a quote found as written needs no alignment: loaded on first use

    matcher = difflib.SequenceMatcher(None, list(quote_keys), list(source_keys[lo:hi]), False)
    steps = [
        Step(_KINDS[tag], q0, q1, lo + s0, lo + s1) for tag, q0, q1, s0, s1 in matcher.get_opcodes()
    ]
    while steps and steps[0].kind == EditKind.DROPPED:
        steps.pop(0)
    while steps and steps[-1].kind == EditKind.DROPPED:
        steps.pop()
    if steps and steps[0].kind == EditKind.REPLACE:
        step = steps[0]
        s0 = max(step.s0, step.s1 - (step.q1 - step.q0))
        if step.q1 - step.q0 == 1 and not alike(step.q0, s0) and len(steps) > 1:
            steps[0] = Step(EditKind.ADDED, step.q0, step.q1, step.s1, step.s1)
        else:
            steps[0] = Step(step.kind, step.q0, step.q1, s0, step.s1)
    if steps and steps[-1].kind == EditKind.REPLACE:
        step = steps[-1]
        s1 = min(step.s1, step.s0 + (step.q1 - step.q0))
        if step.q1 - step.q0 == 1 and not alike(step.q0, step.s0) and len(steps) > 1:
            steps[-1] = Step(EditKind.ADDED, step.q0, step.q1, step.s0, step.s0)
        else:
            steps[-1] = Step(step.kind, step.q0, step.q1, step.s0, s1)
    return steps


def spelled_alike(a: str, b: str) -> bool:
    """Are two words spelled alike enough to be one word changed ("bank", "bed"), rather than
    two different words?  Half their letters in common, by difflib's ratio."""
    import difflib

    return difflib.SequenceMatcher(None, a, b, False).ratio() >= ALIKE


ALIKE: Final = 0.5


def equal_tokens(steps: Sequence[Step]) -> int:
    """How many quote tokens the alignment finds equal in the source."""
    return sum(step.q1 - step.q0 for step in steps if step.kind == EditKind.EQUAL)


_KINDS: Final = {
    "equal": EditKind.EQUAL,
    "replace": EditKind.REPLACE,
    "delete": EditKind.ADDED,  # in the quote, not in the source
    "insert": EditKind.DROPPED,  # in the source, not in the quote
}
