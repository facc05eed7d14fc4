"""Exact search over token-key sequences.

``find_all`` is Knuth–Morris–Pratt: O(N + M) whatever the input, every occurrence, including
overlapping ones.  The prepared matcher uses a position index for the usual case and falls
back to this whenever verifying index candidates could cost more than one linear scan.
"""

from __future__ import annotations

from collections.abc import Sequence


def failure_table(needle: Sequence[str]) -> list[int]:
    """For each prefix of ``needle``, the length of its longest proper border."""
    table = [0] * len(needle)
    border = 0
    for index in range(1, len(needle)):
        while border and needle[index] != needle[border]:
            border = table[border - 1]
        if needle[index] == needle[border]:
            border += 1
        table[index] = border
    return table


def find_all(needle: Sequence[str], haystack: Sequence[str]) -> list[int]:
    """Start indices of every occurrence of ``needle`` in ``haystack``, in order.

    An empty needle has no occurrences: an empty quote proves nothing.
    """
    if not needle:
        return []
    table = failure_table(needle)
    last = len(needle)
    starts: list[int] = []
    matched = 0
    for index, item in enumerate(haystack):
        while matched and item != needle[matched]:
            matched = table[matched - 1]
        if item == needle[matched]:
            matched += 1
            if matched == last:
                starts.append(index - last + 1)
                matched = table[matched - 1]
    return starts
