"""Code spans: the stretches of a text that are code, where every character is compared.

The text alone loses the markup that says a run is code (``<code>``, ``<pre>``, ``<kbd>``,
``<samp>``), so the extractor records it as ``CodeSpans`` beside the text, and the matcher is
given them.  Backtick-delimited runs in the text itself (Markdown code, as in plain-text
sources) are code too: ``CodeSpans.in_text`` finds them.

Inside a span the tokens are compared as everywhere, and on top of that (``PreparedSource``
applies these rules to a candidate run; without spans nothing changes):

* what lies *between* two tokens of code (``,`` ``;`` ``.`` ``:`` and reference-mark-like
  ``[2]``, which outside code are copy noise) must be in the quote between the same tokens,
  whitespace aside: ``(&[T], &[T])`` is not ``(&[T] &[T])``, ``matrix`` is not
  ``matrix[2][3]``; whitespace only collapses (``f(a,b)`` = ``f(a, b)``);
* every letter keeps its case (``the type e`` is not ``the type E``);
* a match may begin or end inside a span only at a line break of it (or at its edges): where
  the code goes on along its line, the quote must go on with the same characters
  (``-> int`` is not in ``-> int | None``; one line of a listing is found).

Pure: no I/O, positions are code points.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

import regex

from verifier.errors import CodeSpanError
from verifier.tokenizer import INVISIBLE

_BACKTICKS: Final = re.compile(r"`+")
_BLANK_LINE: Final = re.compile(r"\n[^\S\n]*\n")
_FENCE_LENGTH: Final = 3


@dataclass(frozen=True, slots=True)
class CodeSpans:
    """Sorted, non-overlapping, non-empty ``[start, end)`` ranges of code points that are code.

    ``CodeSpans(())`` (``NO_CODE``) is a text without code: the matcher then behaves exactly as
    without spans.
    """

    ranges: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        previous_end = -1
        for start, end in self.ranges:
            if not 0 <= start < end:
                raise CodeSpanError(f"code span [{start}, {end}) is empty or negative")
            if start < previous_end:
                raise CodeSpanError(
                    f"code span [{start}, {end}) overlaps or precedes the one before"
                )
            previous_end = end

    @classmethod
    def merged(cls, ranges: Iterable[tuple[int, int]]) -> CodeSpans:
        """Spans from any ranges: sorted, with overlapping and touching ones merged (nested
        ``<code>`` in ``<pre>``), empty ones left out."""
        result: list[tuple[int, int]] = []
        for start, end in sorted((s, e) for s, e in ranges if e > s):
            if result and start <= result[-1][1]:
                result[-1] = (result[-1][0], max(result[-1][1], end))
            else:
                result.append((start, end))
        return cls(tuple(result))

    @classmethod
    def in_text(cls, text: str) -> CodeSpans:
        """The Markdown code in ``text``: the inside of a backtick run and the next run of the
        same length in the same paragraph (```` `x` ````, ```` ``a`b`` ````), and the lines of a
        fenced block (a line opening with three or more backticks, to the next such line)."""
        return cls.merged(_backtick_ranges(text))

    def with_text(self, text: str) -> CodeSpans:
        """These spans and the Markdown code of ``text``; checked to lie inside it."""
        if self.ranges and self.ranges[-1][1] > len(text):
            start, end = self.ranges[-1]
            raise CodeSpanError(
                f"code span [{start}, {end}) runs past the text's {len(text)} code points"
            )
        if "`" not in text:
            return self
        return CodeSpans.merged((*self.ranges, *_backtick_ranges(text)))

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def span_at(self, position: int) -> tuple[int, int] | None:
        """The span holding code point ``position``, or None."""
        index = bisect_right(self.ranges, (position, _AFTER_ANY)) - 1
        if index >= 0 and self.ranges[index][1] > position:
            return self.ranges[index]
        return None

    def overlapping(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """The parts of spans inside ``[start, end)``."""
        index = max(bisect_right(self.ranges, (start, _AFTER_ANY)) - 1, 0)
        while index < len(self.ranges) and self.ranges[index][0] < end:
            low, high = self.ranges[index]
            if high > start:
                yield max(low, start), min(high, end)
            index += 1


_AFTER_ANY: Final = 1 << 62
NO_CODE: Final = CodeSpans()


def _backtick_ranges(text: str) -> Iterator[tuple[int, int]]:
    runs = list(_BACKTICKS.finditer(text))
    index = 0
    while index < len(runs):
        opening = runs[index]
        width = len(opening.group())
        line_start = text.rfind("\n", 0, opening.start()) + 1
        if width >= _FENCE_LENGTH and not text[line_start : opening.start()].strip():
            closing = _fence_end(runs, index, width, text)
            content = text.find("\n", opening.end())
            if closing is not None and content >= 0:
                yield content + 1, text.rfind("\n", 0, runs[closing].start()) + 1
                index = closing + 1
                continue
        closing = next(
            (later for later in range(index + 1, len(runs)) if len(runs[later].group()) == width),
            None,
        )
        if closing is None or _BLANK_LINE.search(text, opening.end(), runs[closing].start()):
            index += 1
            continue
        yield opening.end(), runs[closing].start()
        index = closing + 1


def _fence_end(runs: list[re.Match[str]], index: int, width: int, text: str) -> int | None:
    """The run that closes the fence opened by ``runs[index]``: the next one of at least its
    width that opens a line."""
    for later in range(index + 1, len(runs)):
        run = runs[later]
        line_start = text.rfind("\n", 0, run.start()) + 1
        if len(run.group()) >= width and not text[line_start : run.start()].strip():
            return later
    return None


@functools.cache
def _not_compared() -> regex.Pattern[str]:
    """Whitespace and invisible characters, compiled on first use (a quote with no code never
    needs it)."""
    return regex.compile(rf"[\s{INVISIBLE}]+")


def compared_text(text: str) -> str:
    """What code compares of the text between two tokens: every character but whitespace and
    the invisible ones (zero-width space, soft hyphen, ...), compatibility forms folded (a
    full-width comma is a comma, as everywhere)."""
    kept = _not_compared().sub("", text)
    return kept if kept.isascii() else unicodedata.normalize("NFKC", kept)
