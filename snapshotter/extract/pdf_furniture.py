"""Running headers, footers and page numbers of a PDF: recognised, kept apart, never lost.

A sentence that runs from one page to the next is interrupted in the raw text by the
first page's footer and page number and the next page's header.  A quote of that sentence
would then fail, so these lines ("furniture") are taken out of the text flow and kept in
the page map instead (``Page.furniture``), where nothing is silently lost.

Only lines at a page's edges are candidates: from the top (and from the bottom) lines are
peeled off one at a time, at most ``EDGE_LINES``, while the line is furniture:

- a page number: ``12``, ``- 12 -``, ``Page 12``, ``12 of 40``, ``xiv``, equal to the page's
  label or in step with the page index on at least two pages (so ``2021`` at the bottom of
  one page is not a page number);
- a repeated line: the same line, digits masked (``Annual report 2024 · 12`` matches
  ``Annual report 2024 · 13``), within the top (or bottom) ``EDGE_LINES`` lines of at least
  ``MIN_REPEATS`` pages and of ``MIN_SHARE`` of the pages.

Peeling stops at the first line that is neither, so a line of body text is never taken out
from under the page's edge, and before the page's last non-blank line, so a page whose every
line repeats elsewhere (identical pages) keeps its text.  Blank lines at the edges are
dropped (white space only).  A one-page document has no furniture.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

EDGE_LINES = 3
MIN_REPEATS = 3
MIN_SHARE = 0.4
FURNITURE_RULE = f"edge{EDGE_LINES},rep{MIN_REPEATS},share{int(MIN_SHARE * 100)}"

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(
    r"^(?:page\s+)?[-–—(\[]?\s*(?P<value>\d{1,5}|[ivxlcdm]{1,9})\s*[-–—)\]]?"
    r"(?:\s*(?:of|/)\s*\d{1,5})?$",
    re.IGNORECASE,
)
_ROMAN = re.compile(r"^m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}


@dataclass(frozen=True)
class SplitPage:
    """One page's text without its furniture, and the furniture lines in page order."""

    body: str
    furniture: tuple[str, ...]


def _squeeze(line: str) -> str:
    return _SPACE.sub(" ", line).strip()


def _roman(text: str) -> int | None:
    text = text.lower()
    if not text or not _ROMAN.match(text):
        return None
    values = [_ROMAN_VALUES[char] for char in text]
    return sum(
        -value if value < after else value
        for value, after in zip(values, [*values[1:], 0], strict=True)
    )


def number_value(line: str) -> int | None:
    """The page number a bare page-number line shows, or None."""
    match = _NUMBER.match(_squeeze(line))
    if match is None:
        return None
    value = match["value"]
    return int(value) if value.isdigit() else _roman(value)


def _key(line: str) -> str:
    return _DIGITS.sub("#", _squeeze(line))


def _edge(lines: list[str], top: bool) -> list[int]:
    """Indexes of the first (or last) ``EDGE_LINES`` non-blank lines, edge first."""
    order = range(len(lines)) if top else range(len(lines) - 1, -1, -1)
    return [index for index in order if lines[index].strip()][:EDGE_LINES]


class _Rules:
    """What counts as furniture in this document: its repeated edge lines, its page steps."""

    def __init__(self, pages: list[list[str]], labels: list[str]) -> None:
        self.labels = labels
        self.repeated: dict[bool, set[str]] = {}
        text_pages = sum(1 for lines in pages if any(line.strip() for line in lines))
        needed = max(MIN_REPEATS, math.ceil(MIN_SHARE * text_pages))
        steps: Counter[int] = Counter()
        for top in (True, False):
            counts: Counter[str] = Counter()
            for lines in pages:
                counts.update({_key(lines[index]) for index in _edge(lines, top)})
            self.repeated[top] = {
                key for key, count in counts.items() if count >= needed and key.strip("# ")
            }
        for page_index, lines in enumerate(pages):
            values = {number_value(lines[i]) for top in (True, False) for i in _edge(lines, top)}
            steps.update({value - page_index for value in values if value is not None})
        self.steps = {step for step, count in steps.items() if count >= 2}

    def is_furniture(self, line: str, page_index: int, top: bool) -> bool:
        if _key(line) in self.repeated[top]:
            return True
        value = number_value(line)
        if value is None:
            return False
        label = self.labels[page_index] if page_index < len(self.labels) else ""
        return _squeeze(line).lower() == label.lower() or value - page_index in self.steps


def _peel(lines: list[str], rules: _Rules, page_index: int) -> SplitPage:
    first, last = 0, len(lines)
    top_furniture: list[str] = []
    bottom_furniture: list[str] = []
    left = sum(1 for line in lines if line.strip())
    for top, found in ((True, top_furniture), (False, bottom_furniture)):
        taken = 0
        while first < last and taken < EDGE_LINES:
            line = lines[first] if top else lines[last - 1]
            if line.strip():
                # A page is never emptied: its last line is body, whatever repeats elsewhere.
                if left == 1 or not rules.is_furniture(line, page_index, top):
                    break
                found.append(line)
                taken += 1
                left -= 1
            if top:
                first += 1
            else:
                last -= 1
    body = "\n".join(lines[first:last])
    return SplitPage(body, (*top_furniture, *reversed(bottom_furniture)))


def split_furniture(page_texts: list[str], labels: list[str]) -> list[SplitPage]:
    """Each page's body text and furniture lines (see the module doc)."""
    pages = [text.split("\n") for text in page_texts]
    if len(pages) < 2:
        return [SplitPage(text, ()) for text in page_texts]
    rules = _Rules(pages, labels)
    return [_peel(lines, rules, index) for index, lines in enumerate(pages)]
