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
  ``MIN_REPEATS`` pages and of ``MIN_SHARE`` of the pages;
- a numbered running header: a line that starts or ends with the page number (``Chapter 5:
  Making The Best Use of C 36``, ``36 The Tutorial``), in step with the page index the way
  such lines are on at least ``MIN_REPEATS`` pages, and either the page's outermost line or
  one whose text without the number is at the same edge of another page: a chapter's title
  repeats only over the chapter's pages, far fewer than ``MIN_SHARE`` of a book's, and a
  short chapter shows it once.

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
FURNITURE_RULE = f"edge{EDGE_LINES},rep{MIN_REPEATS},share{int(MIN_SHARE * 100)},numbered1"

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(
    r"^(?:page\s+)?[-–—(\[]?\s*(?P<value>\d{1,5}|[ivxlcdm]{1,9})\s*[-–—)\]]?"
    r"(?:\s*(?:of|/)\s*\d{1,5})?$",
    re.IGNORECASE,
)
# A page number at the start or the end of a line that has other text too.
_LEADING_NUMBER = re.compile(r"^(?P<value>\d{1,5})\s+(?P<rest>\S.*)$")
_TRAILING_NUMBER = re.compile(r"^(?P<rest>.*\S)\s+(?P<value>\d{1,5})$")
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


def edge_number(line: str) -> tuple[int, str] | None:
    """The number a line starts or ends with, and the key of the rest of the line."""
    squeezed = _squeeze(line)
    for pattern in (_TRAILING_NUMBER, _LEADING_NUMBER):
        match = pattern.match(squeezed)
        if match is not None and match["rest"].strip("-–—·|•. "):
            return int(match["value"]), _key(match["rest"])
    return None


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
        self._numbered_headers(pages)

    def _numbered_headers(self, pages: list[list[str]]) -> None:
        """The steps of lines carrying the page number, and their texts seen twice per edge."""
        steps: Counter[int] = Counter()
        rests: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
        for page_index, lines in enumerate(pages):
            page_steps: set[int] = set()
            for top in (True, False):
                found = [edge_number(lines[index]) for index in _edge(lines, top)]
                numbered = [item for item in found if item is not None]
                page_steps.update(value - page_index for value, _ in numbered)
                rests[top].update({rest for _, rest in numbered})
            steps.update(page_steps)
        self.header_steps = {step for step, count in steps.items() if count >= MIN_REPEATS}
        self.header_rests = {
            top: {rest for rest, count in counted.items() if count >= 2}
            for top, counted in rests.items()
        }

    def _is_numbered_header(self, line: str, page_index: int, top: bool, outermost: bool) -> bool:
        numbered = edge_number(line)
        if numbered is None:
            return False
        value, rest = numbered
        if value - page_index not in self.header_steps:
            return False
        return outermost or rest in self.header_rests[top]

    def is_furniture(self, line: str, page_index: int, top: bool, outermost: bool) -> bool:
        """Whether ``line`` at the top (or bottom) edge of the page is furniture;
        ``outermost`` when no other line stands between it and the edge."""
        if _key(line) in self.repeated[top]:
            return True
        if self._is_numbered_header(line, page_index, top, outermost):
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
                if left == 1 or not rules.is_furniture(line, page_index, top, taken == 0):
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
