"""The closest passage's search (``closest.best_window``) meets windows through the token index,
rarest quote token first, within caps, and rules most of them out with a few reads of the source.
Its answer must be the one a scan of every window gives when the caps are not reached (the most
positions equal, the earliest of those), and always the one the search it replaced gave
(``visit_every_window_met``, kept here as the oracle), caps reached or not."""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Mapping, Sequence
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import closest
from verifier.closest import MAX_OCCURRENCES, MAX_WINDOWS, aligned_equal, best_window

FEW_WINDOWS_FIRST = "few windows scored whole first, as by default"
WAYS: dict[str, dict[str, Callable[..., object]]] = {
    "as the costs say": {},
    "position by position": {"_vote_cost": lambda *_: 1 << 60},
    "by votes once the best scores 2": {"_vote_cost": lambda *_: 0},
    "always counting": {"uncounted": lambda *_: None},
    FEW_WINDOWS_FIRST: {},
}
"""The ways the search can take: each must give the old search's answer. All but the last skip
the search that scores few windows whole (``_few_windows``), so that ``_Search`` is tried on
every input, not only on those that meet many windows."""


def search(
    way: str,
    quote: list[int],
    source: list[int],
    max_windows: int = MAX_WINDOWS,
    max_occurrences: int = MAX_OCCURRENCES,
) -> tuple[int, int] | None:
    positions = _positions(source)
    with contextlib.ExitStack() as patches:
        if way != FEW_WINDOWS_FIRST:
            patches.enter_context(mock.patch.object(closest, "_FEW_WINDOWS", 0))
        for name, replacement in WAYS[way].items():
            patches.enter_context(mock.patch.object(closest._Search, name, replacement))
        return best_window(
            quote, source, positions, max_windows=max_windows, max_occurrences=max_occurrences
        )


def every_window(quote: list[int], source: list[int]) -> tuple[int, int] | None:
    best: tuple[int, int] | None = None
    for start in range(max(len(source) - len(quote), 0) + 1):
        score = aligned_equal(quote, source, start)
        if score and (best is None or score > best[1]):
            best = (start, score)
    return best


def visit_every_window_met(
    quote_keys: Sequence[int],
    source_keys: Sequence[int],
    positions: Mapping[int, Sequence[int]],
    max_windows: int = MAX_WINDOWS,
    max_occurrences: int = MAX_OCCURRENCES,
) -> tuple[int, int] | None:
    """The search before the windows were ruled out by reads (a8a3fb6): every window met is
    scored whole unless it cannot beat the best, and the search stops when no window left can."""
    length = len(quote_keys)
    last_start = max(len(source_keys) - length, 0)
    order = sorted(range(length), key=lambda j: (len(positions.get(quote_keys[j], ())), j))
    best_start, best_score = -1, 0
    scored: set[int] = set()
    occurrences_left = max_occurrences
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
                score = sum(map(operator.eq, quote_keys, source_keys[start : start + length]))
                if score > best_score or (score == best_score and start < best_start):
                    best_start, best_score = start, score
            if len(scored) >= max_windows:
                break
        if len(scored) >= max_windows:
            break
    return None if best_score == 0 else (best_start, best_score)


def _positions(source: Sequence[int]) -> dict[int, list[int]]:
    positions: dict[int, list[int]] = {}
    for index, key in enumerate(source):
        positions.setdefault(key, []).append(index)
    return positions


@settings(max_examples=1_500, derandomize=True, deadline=None)
@given(
    source=st.lists(st.integers(0, 5), max_size=80),
    quote=st.lists(st.integers(0, 7), min_size=1, max_size=12),
    way=st.sampled_from(sorted(WAYS)),
)
def test_the_search_finds_what_a_scan_of_every_window_finds(
    source: list[int], quote: list[int], way: str
) -> None:
    """Few distinct keys, so that windows tie and the early stop and skips are tried."""
    assert search(way, quote, source) == every_window(quote, source)


@settings(max_examples=1_500, derandomize=True, deadline=None)
@given(
    source=st.lists(st.integers(0, 6), max_size=100),
    quote=st.lists(st.integers(0, 8), min_size=1, max_size=30),
    max_windows=st.integers(1, 40),
    max_occurrences=st.integers(1, 150),
    way=st.sampled_from(sorted(WAYS)),
)
def test_the_search_meets_the_windows_the_old_one_met_under_its_caps(
    source: list[int], quote: list[int], max_windows: int, max_occurrences: int, way: str
) -> None:
    """Small caps, so that they are reached: the window cap in the middle of a token's
    occurrences, the occurrence cap between tokens, the quote longer than the source."""
    assert search(way, quote, source, max_windows, max_occurrences) == visit_every_window_met(
        quote, source, _positions(source), max_windows, max_occurrences
    )


@st.composite
def repeated_lines(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    """A quote, and a source of near-copies of it between a few other keys, each copy keeping
    each key by its own odds (as a manual's pages repeat a line with a word or two changed):
    many windows then have two, three or more of the voted positions equal, and the best can
    come after windows with fewer."""
    rng = draw(st.randoms(use_true_random=True))  # keys drawn evenly, not simplest first
    quote = list(range(1, rng.randint(5, 12) + 1))
    source: list[int] = []
    for _ in range(rng.randint(2, 8)):
        kept = rng.choice([0.3, 0.6, 0.9])
        source += [key if rng.random() < kept else rng.randint(1, 14) for key in quote]
        source += [rng.randint(20, 25) for _ in range(rng.randint(0, 3))]
    return quote, source


@settings(max_examples=1_500, derandomize=True, deadline=None)
@given(case=repeated_lines(), way=st.sampled_from(sorted(WAYS)))
def test_the_search_finds_the_best_of_many_near_copies(
    case: tuple[list[int], list[int]], way: str
) -> None:
    quote, source = case
    assert search(way, quote, source) == every_window(quote, source)


@st.composite
def edited_quotes(
    draw: st.DrawFn, size: int = 300, kinds: int = 400
) -> tuple[list[int], list[int]]:
    """A source with a few common keys and many rare ones (as words are), and a run of it with
    one or two tokens changed, dropped or added: the quotes whose search meets most windows."""
    common = st.integers(0, 4)
    rare = st.integers(5, kinds)
    source = draw(st.lists(st.one_of(common, common, rare), min_size=size // 10, max_size=size))
    length = draw(st.integers(2, 24))
    first = draw(st.integers(0, max(len(source) - length, 0)))
    quote = source[first : first + length]
    for _ in range(draw(st.integers(1, 2))):
        at = draw(st.integers(0, len(quote) - 1))
        edit = draw(st.sampled_from(["changed", "dropped", "added"]))
        if edit == "changed":
            quote[at] = draw(st.one_of(common, rare))
        elif edit == "dropped" and len(quote) > 1:
            del quote[at]
        else:
            quote.insert(at, draw(st.one_of(common, rare)))
    return quote, source


@settings(max_examples=400, derandomize=True, deadline=None)
@given(case=edited_quotes(), max_windows=st.sampled_from([8, 32, 128, MAX_WINDOWS]))
def test_the_search_agrees_with_the_old_one_on_edited_quotes(
    case: tuple[list[int], list[int]], max_windows: int
) -> None:
    quote, source = case
    positions = _positions(source)
    assert best_window(quote, source, positions, max_windows=max_windows) == visit_every_window_met(
        quote, source, positions, max_windows
    )


@settings(max_examples=1_500, derandomize=True, deadline=None)
@given(case=edited_quotes(size=40, kinds=12), max_windows=st.integers(1, 6))
def test_a_cap_reached_among_a_tokens_windows_leaves_the_later_ones_out(
    case: tuple[list[int], list[int]], max_windows: int
) -> None:
    """Caps so small that the window cap falls among the windows met at one token, and a better
    window met later at that token is left out, as the old search left it out."""
    quote, source = case
    positions = _positions(source)
    assert best_window(quote, source, positions, max_windows=max_windows) == visit_every_window_met(
        quote, source, positions, max_windows
    )


def test_the_window_cap_cuts_a_tokens_windows_after_the_one_that_reaches_it() -> None:
    """Met in turn: window 0 (at the 5), then windows 2 and 4 (at the 1s); with a cap of 2 the
    search ends after window 2 and never sees window 4, which has two positions equal."""
    source = [5, 9, 9, 1, 9, 1, 2, 2, 2]
    quote = [5, 1, 2]
    for way in WAYS:
        assert search(way, quote, source, max_windows=2) == (0, 1)
        assert search(way, quote, source, max_windows=3) == (4, 2)
    assert visit_every_window_met(quote, source, _positions(source), 2) == (0, 1)
