"""The closest passage: shown to the reader when a quote is not found, never used to pass one.

The score of a window (a run of source tokens as long as the quote) is the fraction of
positions where the window's token equals the quote's token at the same position.  Scoring
every window costs O((N - M + 1)·M); instead windows are visited through the token index,
rarest quote token first:

* after the windows that share the quote's k rarest tokens (at the aligned position) have been
  scored, any other window can match at most M - k positions, so the search stops as soon as
  that bound falls below the best score found.  For a quote with one changed word this stops
  after the two rarest tokens.
* the work is capped: the search stops before a token once ``MAX_OCCURRENCES`` index entries
  were read, and right after the ``MAX_WINDOWS``-th distinct window met, whatever the source
  size.  The result is exact unless a cap is reached; then it is the best window among those
  met, which are the windows sharing the quote's rarest tokens.

Ties go to the earliest window, so the result is deterministic.

Which windows are met depends on the counts alone, so the answer does not depend on how each
window is weighed, and it is the same as when every window met was scored whole (the search
before issue 25's tail work; ``tests/verifier/test_verifier_closest_search.py`` keeps it as the
oracle).  Scoring a window whole costs about as much as 10-40 reads of the source, and a quote
with a word dropped or added has a best window only half equal, so thousands of windows were
scored.  Now a window first met at the k-th rarest position can tie the best only with at most
``M - k - best`` of the positions left different: reading the rarest ``M - k - best + 1`` of
them rules out almost every window (``_Search._weigh``).  When that costs more, the votes of
the positions left are counted, and the windows met at two of them are read most votes first
(``_Search._vote``).  The distinct windows are counted (a set) only when the window cap could
cut the search before the best window is met; otherwise the search runs again, counting
(``_Search.counted``).

The passage shown is then lined up with the quote by an edit alignment of tokens (``align``:
difflib's ``SequenceMatcher`` over the key ids of the window and ``ALIGN_REACH`` tokens around
it), so a word added to or dropped from the quote marks that word or that gap only, and the
passage runs from the source token lined up with the quote's first token to the one lined up
with its last.
"""

from __future__ import annotations

import enum
import itertools
import operator
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, TypeVar

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
    *,
    max_windows: int = MAX_WINDOWS,
    max_occurrences: int = MAX_OCCURRENCES,
) -> tuple[int, int] | None:
    """``(window start, equal positions)`` of the closest window, or None if nothing is equal.

    ``positions`` maps each source key to the ascending token indices where it occurs.  The
    windows are met as the module's docstring says, and the one with the most positions equal,
    the earliest of them, is returned.  Which windows are met depends on the caps alone, never
    on scores, so the answer is the same however cheaply a window is ruled out.

    Counting the distinct windows met costs a set of them; it is needed only when the cap on
    them could cut the search short *and* the best window is met after that point.  So the
    search first runs without counting (``counted=False``), and runs again counting only when
    the best changed once the cap could have been reached, or when the first run reached its
    budget (a run that goes on past where the cap stops could cost more than the cap allows).
    """
    counts = [len(positions.get(key, ())) for key in quote_keys]
    order = sorted(range(len(quote_keys)), key=lambda j: (counts[j], j))
    best = _few_windows(quote_keys, source_keys, positions, order, max_windows, max_occurrences)
    if best is None:
        search = _Search(quote_keys, source_keys, positions, order, counts)
        best = search.uncounted(max_windows, max_occurrences)
        if best is None:
            best = search.counted(max_windows, max_occurrences)
    return None if best.score == 0 else (best.start, best.score)


_FEW_WINDOWS: Final = 16
"""Windows met before ``_few_windows`` leaves a search to ``_Search``: a quote with one word
changed is settled after its two rarest tokens, at a handful of windows, and for it the set-up
of ``_Search`` (the spans, the caps' positions, the reads' budget) cost more than the search."""


def _few_windows(
    quote_keys: Sequence[Key],
    source_keys: Sequence[Key],
    positions: Mapping[Key, Sequence[int]],
    order: Sequence[int],
    max_windows: int,
    max_occurrences: int,
) -> _Best | None:
    """The search scoring every window met whole (as before issue 25's tail work), if it ends
    having met at most ``_FEW_WINDOWS`` windows; None as soon as it meets more.

    It meets the windows in the same order and under the same caps as ``_Search``, so when it
    ends it has the same answer (the tests hold the two to the same oracle); it only costs less
    while few windows are met."""
    length = len(quote_keys)
    last_start = max(len(source_keys) - length, 0)
    best_start, best_score = -1, 0
    met: set[int] = set()
    occurrences_left = max_occurrences
    for processed, position in enumerate(order):
        if length - processed < best_score or occurrences_left <= 0:
            break
        occurrences = positions.get(quote_keys[position], ())
        occurrences_left -= len(occurrences)
        bound = length - processed  # a window first met now has no earlier position equal
        for index in occurrences:
            start = index - position
            if start < 0 or start > last_start or start in met:
                continue
            met.add(start)
            if bound > best_score or (bound == best_score and start < best_start):
                score = aligned_equal(quote_keys, source_keys, start)
                if score > best_score or (score == best_score and start < best_start):
                    best_start, best_score = start, score
            if len(met) >= max_windows:
                return _Best(best_start, best_score)  # the cap: the search ends here
            if len(met) >= _FEW_WINDOWS:
                return None
    return _Best(best_start, best_score)


class _Best(NamedTuple):
    start: int
    score: int


_Span = tuple[Sequence[int], int, int]


class _Spans:
    """``_Search._span`` of each position in ``order``, worked out when first asked for."""

    def __init__(self, search: _Search, last_start: int) -> None:
        self._search, self._last_start = search, last_start
        self._spans: dict[int, _Span] = {}

    def __getitem__(self, processed: int) -> _Span:
        span = self._spans.get(processed)
        if span is None:
            position = self._search.order[processed]
            span = self._spans[processed] = self._search._span(position, self._last_start)
        return span


_BUDGET: Final = 32
"""Reads of the source a search that does not count windows may make, per window the cap
allows: well above what any quote of the real pages needed, and a bound on the time a search
can take before it runs again counting (the old search scored up to ``MAX_WINDOWS`` windows
whole, each as costly as 10-40 reads)."""


@dataclass(slots=True)
class _Search:
    """The search of ``best_window`` over one quote and source: the quote's positions in the
    order they are visited (``order``: rarest key first) and how often each key occurs."""

    quote_keys: Sequence[Hashable]
    source_keys: Sequence[Hashable]
    positions: Mapping[Any, Sequence[int]]
    order: list[int]
    counts: list[int]

    def uncounted(self, max_windows: int, max_occurrences: int) -> _Best | None:
        """The best window met, found without counting the windows met; None when the cap on
        them could have left it out, or when the search would cost more than ``_BUDGET``.

        Where the search stops at the latest (the cap on occurrences, ``stop``) and where the
        cap on windows could first be reached (``near``) depend on the counts alone.  Windows
        first met before ``near`` are met whatever the cap does; so is the best, if it is one
        of them.  Positions are weighed one by one (``_weigh``), until counting the votes of
        the positions left (``_vote``) costs less.
        """
        order, counts = self.order, self.counts
        length = len(order)
        last_start = max(len(self.source_keys) - length, 0)
        spans = _Spans(self, last_start)
        stop, total = length, 0
        for processed, position in enumerate(order):
            if total >= max_occurrences:
                stop = processed
                break
            total += counts[position]
        near, met = length, 0  # from every occurrence, in range or not: at or before the cap
        for processed in range(stop):
            if met + counts[order[processed]] >= max_windows:
                near = processed
                break
            met += counts[order[processed]]
        best = _Best(-1, 0)
        budget = _BUDGET * max_windows
        for processed in range(stop):
            if length - processed < best.score:
                break
            if best.score >= 2 and len(self.source_keys) >= length:
                cost = self._vote_cost(spans, processed, best.score)
                alone = self._weigh_cost(spans, processed, best.score, processed + 1)
                if 3 * alone >= cost and cost < self._weigh_cost(spans, processed, best.score):
                    if cost > budget:
                        return None
                    best = self._vote(spans, processed, best, stop)
                    break
            occurrences, lo, hi = spans[processed]
            if lo >= hi:
                continue
            best, reads = self._weigh(processed, occurrences[lo:hi], best)
            budget -= reads
            if budget < 0:
                return None
        if best.score and self._first_met(best.start) >= near:
            return None
        return best

    def counted(self, max_windows: int, max_occurrences: int) -> _Best:
        """The best window met, counting the distinct windows met once the cap on them could be
        reached: the search as the module's docstring tells it, position by position."""
        quote_keys, order = self.quote_keys, self.order
        length = len(quote_keys)
        last_start = max(len(self.source_keys) - length, 0)
        best = _Best(-1, 0)
        occurrences_left = max_occurrences
        met = 0  # windows met, a window once for each position it was met at
        distinct: set[int] | None = None  # the windows met, kept once the cap is near
        for processed, position in enumerate(order):
            if length - processed < best.score or occurrences_left <= 0:
                break
            occurrences, lo, hi = self._span(position, last_start)
            occurrences_left -= self.counts[position]
            if lo >= hi:
                continue
            capped = False
            if distinct is None and met + hi - lo >= max_windows:
                distinct = self._windows(order[:processed], last_start)
            met += hi - lo
            if distinct is not None:
                hi, capped = _cut(occurrences, lo, hi, position, distinct, max_windows)
            best, _ = self._weigh(processed, occurrences[lo:hi], best)
            if capped:
                break
        return best

    def _span(self, position: int, last_start: int) -> tuple[Sequence[int], int, int]:
        """Where the key at ``position`` occurs, and the slice of those whose windows start in
        the source (from 0 to ``last_start``)."""
        occurrences = self.positions.get(self.quote_keys[position], ())
        lo = bisect_left(occurrences, position)
        return occurrences, lo, bisect_right(occurrences, last_start + position)

    def _first_met(self, start: int) -> int:
        """Where in ``order`` the window at ``start`` is met first: its rarest position equal."""
        quote_keys, source_keys = self.quote_keys, self.source_keys
        for processed, position in enumerate(self.order):
            at = start + position
            if at < len(source_keys) and source_keys[at] == quote_keys[position]:
                return processed
        return len(self.order)

    def _weigh_cost(self, spans: _Spans, first: int, best: int, last: int = 0) -> int:
        """What weighing the positions from ``order[first]`` on one by one (to ``order[last]``
        excluded, if given) costs, in reads of the source (``_weigh``: ``allowed + 1`` reads a
        window), at twice a read's cost.  Votes are counted only when weighing the next position
        alone would cost a third of them: a cheap position may first raise the best, which
        shortens what the votes must read (a changed word found elsewhere is often rarest)."""
        length = len(self.order)
        end = min(length - best + 1, last or length)
        return 2 * sum(
            (spans[k][2] - spans[k][1]) * (length - k - best + 1) for k in range(first, end)
        )

    def _vote_cost(self, spans: _Spans, first: int, best: int) -> int:
        """What ``_vote`` from ``order[first]`` costs, in the units of ``_weigh_cost``: about
        1.5 reads a window."""
        last = len(self.order) - best + 1
        return 3 * sum(spans[k][2] - spans[k][1] for k in range(first, last + 1))

    def _vote(self, spans: _Spans, first: int, best: _Best, stop: int) -> _Best:
        """The best window, weighing every window met from ``order[first]`` on at once.

        Such a window has none of the positions before equal, so to tie ``best`` it has at most
        ``length - best - first`` of the others different, and two of the positions
        ``order[first : length - best + 2]`` (one more than that) equal: only the windows met
        at two of them (two votes) are read, and those that reach the best are scored. A window
        with ``v`` votes has at most ``v + best - 2`` positions equal (``best`` as it was on
        entry), so the windows are read most votes first, and reading stops once that bound
        falls below the best found: on text that repeats its lines, hundreds of windows have
        two or three votes and none of them can reach a best that one with more votes set.
        A window first met at ``stop`` or later is never met; a window met before ``first``
        was weighed then.

        The votes are counted in C: the windows met, position by position, sorted, stand as
        many times in a row as they have votes.  A window's score is its votes and the positions
        not voted on that are equal, so those are read, rarest first, only until it has too
        many different to tie the best (``_reaches``), and scored whole only if it can.
        """
        quote_keys, source_keys, order = self.quote_keys, self.source_keys, self.order
        length = len(order)
        last = length - best.score + 2  # the positions voted on: order[first:last]
        met: list[int] = []
        for processed in range(first, last):
            occurrences, lo, hi = spans[processed]
            met.extend(map(operator.sub, occurrences[lo:hi], itertools.repeat(order[processed])))
        met.sort()
        # each copy of a window after its first: its votes less one, counted in start order
        again = Counter(itertools.compress(met[1:], map(operator.eq, met[1:], met)))
        windows = sorted(again, key=again.__getitem__, reverse=True)  # stable: ties by start
        unvoted = [*order[:first], *order[last:]]
        reachable = best.score - 2  # equal positions a window has at most beyond its votes
        best_start, best_score = best
        for start in windows:
            votes = again[start] + 1
            bound = reachable + votes
            if bound < best_score:
                break
            later = start >= best_start
            if bound == best_score and later:
                continue
            allowed = len(unvoted) - (best_score - votes)  # unvoted positions it may miss
            if later:
                allowed -= 1  # it must beat the best, not tie it
            if allowed < 0 or not self._reaches(start, unvoted, allowed):
                continue
            score = aligned_equal(quote_keys, source_keys, start)
            if score < best_score or (score == best_score and start >= best_start):
                continue
            if stop < length and self._first_met(start) >= stop:
                continue
            best_start, best_score = start, score
        return _Best(best_start, best_score)

    def _windows(self, visited: Sequence[int], last_start: int) -> set[int]:
        """The distinct windows met at the quote's ``visited`` positions (each in full)."""
        windows: set[int] = set()
        for position in visited:
            occurrences = self.positions.get(self.quote_keys[position], ())
            lo = bisect_left(occurrences, position)
            hi = bisect_right(occurrences, last_start + position)
            windows.update(map(operator.sub, occurrences[lo:hi], itertools.repeat(position)))
        return windows

    def _weigh(self, processed: int, occurrences: Sequence[int], best: _Best) -> tuple[_Best, int]:
        """The best window so far after the windows met at position ``order[processed]``
        (``occurrences``: where its key is in the source, for windows in range), and how many
        reads of the source that took.

        A window first met here has none of the positions visited before equal, so it scores
        ``length - processed`` at most; to tie the best it may have at most ``allowed`` of the
        positions still to visit (``rest``) different, and one fewer to beat it, as it must
        when it starts after the best.  So among the rarest ``allowed + 1`` of them it has one
        equal: one read of the source per window and position rules out most windows
        (``_hits``).  The windows left are read position by position until they have too many
        different (``_reaches``), and those that reach it are scored whole.  A window met
        before, at an earlier position, was weighed then.  While the best scores 1 or nothing,
        the earliest window here is scored too (any would tie it), and the others must score 2.
        """
        quote_keys, source_keys, order = self.quote_keys, self.source_keys, self.order
        length = len(quote_keys)
        position = order[processed]
        rest = order[processed + 1 :]
        best_start, best_score = best
        reads = 0
        if best_score <= 1:
            start = occurrences[0] - position
            score = aligned_equal(quote_keys, source_keys, start)
            if score > best_score or (score == best_score and start < best_start):
                best_start, best_score = start, score
            reads += length
        if len(source_keys) < length:  # one window, its tokens past the source's end
            for index in occurrences:
                start = index - position
                score = aligned_equal(quote_keys, source_keys, start)
                if score > best_score or (score == best_score and start < best_start):
                    best_start, best_score = start, score
            return _Best(best_start, best_score), reads + length * len(occurrences)
        allowed = length - processed - max(best_score, 2)
        split = (
            bisect_left(occurrences, best_start + position) if best_score >= 2 else len(occurrences)
        )
        earlier, later = occurrences[:split], occurrences[split:]
        hits = self._hits(earlier, position, rest[: allowed + 1])
        hits.update(self._hits(later, position, rest[:allowed]))
        reads += len(earlier) * max(allowed + 1, 0) + len(later) * max(allowed, 0)
        for index in sorted(hits):
            start = index - position
            allowed = length - processed - max(best_score, 2)
            if best_score >= 2 and start > best_start:
                allowed -= 1
            reads += len(rest)
            if self._reaches(start, rest, allowed):
                score = aligned_equal(quote_keys, source_keys, start)
                if score > best_score or (score == best_score and start < best_start):
                    best_start, best_score = start, score
        return _Best(best_start, best_score), reads

    def _hits(self, occurrences: Sequence[int], position: int, probes: Sequence[int]) -> set[int]:
        """The ``occurrences`` of the key at ``position`` whose windows have the key of one of
        the ``probes`` (other positions of the quote) equal."""
        hits: set[int] = set()
        source_keys = self.source_keys
        for other in probes:
            shift, key = other - position, self.quote_keys[other]
            hits.update([index for index in occurrences if source_keys[index + shift] == key])
        return hits

    def _reaches(self, start: int, rest: Sequence[int], allowed: int) -> bool:
        """Has the window at ``start`` at most ``allowed`` of the ``rest`` positions different?"""
        quote_keys, source_keys = self.quote_keys, self.source_keys
        for other in rest:
            if source_keys[start + other] != quote_keys[other]:
                allowed -= 1
                if allowed < 0:
                    return False
        return True


def _cut(
    occurrences: Sequence[int],
    lo: int,
    hi: int,
    position: int,
    distinct: set[int],
    max_windows: int,
) -> tuple[int, bool]:
    """Where the search stops among ``occurrences[lo:hi]`` (met at ``position``, in ascending
    order): right after the window that makes ``max_windows`` distinct ones (then True), else at
    ``hi``.  ``distinct`` takes the windows met."""
    for chunk in range(lo, hi, max_windows):
        starts = map(
            operator.sub,
            occurrences[chunk : min(chunk + max_windows, hi)],
            itertools.repeat(position),
        )
        new = list(itertools.filterfalse(distinct.__contains__, starts))
        room = max_windows - len(distinct)
        if len(new) >= room:
            distinct.update(new[:room])
            return bisect_right(occurrences, new[room - 1] + position, lo, hi), True
        distinct.update(new)
    return hi, False


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
