"""How much of what Chromium shows is in snap's text, counted as a reader would check it.

A line of the browser's text counts as found when snap's verifier finds it, as a quote, in
snap's stored text: exactly, but for the documented copy noise (white space, among others).
So a heading that snap stores with a glued ``¶`` is not found ("the quote cuts a word"), and
neither is a sentence whose parts snap stores out of order.  A stricter figure counts the
lines that are also whole lines of snap's text (bounded by line breaks or the tab between
table cells), as the browser lays them out: a cell's two examples joined on one line fail it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from verifier import prepare


def visible_lines(text: str) -> list[str]:
    """The non-empty lines of an innerText, stripped of edge white space (tabs included)."""
    return [line.strip() for line in text.split("\n") if line.strip()]


def counted_lines(body: str, furniture: str, script_only: tuple[str, ...] = ()) -> list[str]:
    """The browser's lines less those of the page's furniture (as many times as the furniture
    holds them) and less the lines only the page's script writes."""
    left_out = Counter(visible_lines(furniture))
    counted = []
    for line in visible_lines(body):
        if left_out[line] > 0:
            left_out[line] -= 1
        elif line not in script_only:
            counted.append(line)
    return counted


@dataclass(frozen=True)
class Fidelity:
    page: str
    lines: int
    found: int
    missing: tuple[str, ...]
    whole: int  # lines found that are also whole lines (or cells) of snap's text
    broken: tuple[str, ...]  # lines found only inside a longer line of snap's text

    @property
    def share(self) -> float:
        return self.found / self.lines if self.lines else 1.0

    @property
    def whole_share(self) -> float:
        return self.whole / self.lines if self.lines else 1.0


def is_whole_line(line: str, text: str) -> bool:
    """Whether ``line`` stands in ``text`` between line breaks or cell tabs (or the ends),
    spaces aside (a listing's indentation is not part of a stripped line)."""
    return re.search(rf"(?:^|[\n\t]) *{re.escape(line)} *(?:$|[\n\t])", text) is not None


def fidelity(page: str, lines: list[str], snap_text: str) -> Fidelity:
    source = prepare(snap_text)
    missing = tuple(line for line in lines if not source.check(line).found)
    broken = tuple(
        line for line in lines if line not in missing and not is_whole_line(line, snap_text)
    )
    found = len(lines) - len(missing)
    return Fidelity(page, len(lines), found, missing, found - len(broken), broken)


REPORT: list[tuple[Fidelity, str]] = []  # (figure, note) in the order measured, for the summary
