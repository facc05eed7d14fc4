"""The closest passage's search (``closest.best_window``) visits windows through the token
index and stops early, skipping windows that cannot beat the best found; under its caps its
answer must be the one a scan of every window gives: the most positions equal, the earliest of
those."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.closest import aligned_equal, best_window


def every_window(quote: list[int], source: list[int]) -> tuple[int, int] | None:
    best: tuple[int, int] | None = None
    for start in range(max(len(source) - len(quote), 0) + 1):
        score = aligned_equal(quote, source, start)
        if score and (best is None or score > best[1]):
            best = (start, score)
    return best


@settings(max_examples=1_500, derandomize=True, deadline=None)
@given(
    source=st.lists(st.integers(0, 5), max_size=80),
    quote=st.lists(st.integers(0, 7), min_size=1, max_size=12),
)
def test_the_search_finds_what_a_scan_of_every_window_finds(
    source: list[int], quote: list[int]
) -> None:
    """Few distinct keys, so that windows tie and the early stop and skips are tried."""
    positions: dict[int, list[int]] = {}
    for index, key in enumerate(source):
        positions.setdefault(key, []).append(index)
    assert best_window(quote, source, positions) == every_window(quote, source)
