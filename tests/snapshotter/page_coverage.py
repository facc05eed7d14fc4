"""Coverage of hand-written fixture pages: how much of what a reader sees is in the text.

Each page ``pages/NAME.html`` comes with ``NAME.expected.txt``, the lines of its main content
as a reader sees them (written by hand from the page, not from any extractor's output), and
``NAME.absent.txt``, text on the page a reader never sees or that is not content (hidden
elements, navigation, footers).  Lines are compared with white-space runs collapsed, as the
verifier compares, and in page order: a line counts as covered only when it occurs after the
previous covered line, so a short line such as ``}`` is not credited to another place.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from snapshotter.extract import extract

PAGES = Path(__file__).resolve().parent / "pages"
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Coverage:
    page: str
    lines: int
    covered: int
    anywhere: int  # lines found anywhere in the text, order ignored
    missing: tuple[str, ...]
    leaked: tuple[str, ...]  # lines of NAME.absent.txt found in the text

    @property
    def share(self) -> float:
        return self.covered / self.lines if self.lines else 1.0


def page_names() -> list[str]:
    return sorted(path.stem for path in PAGES.glob("*.html"))


def squeeze(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [squeeze(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def snap_text(path: Path) -> str:
    """The stored text snap's extractor makes of the page."""
    return extract(path, "text/html").text or ""


def measure(name: str, extractor: Callable[[Path], str] = snap_text) -> Coverage:
    """How many of the page's visible lines ``extractor``'s text holds, in order."""
    text = squeeze(extractor(PAGES / f"{name}.html"))
    expected = _lines(PAGES / f"{name}.expected.txt")
    cursor, missing = 0, []
    for line in expected:
        found = text.find(line, cursor)
        if found < 0:
            missing.append(line)
        else:
            cursor = found + len(line)
    leaked = tuple(line for line in _lines(PAGES / f"{name}.absent.txt") if line in text)
    anywhere = sum(line in text for line in expected)
    return Coverage(
        name, len(expected), len(expected) - len(missing), anywhere, tuple(missing), leaked
    )
