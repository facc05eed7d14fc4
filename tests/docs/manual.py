"""The manual's sources (``docs/*.md``), read the way the documentation tests need them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
COMMANDS_PAGE = DOCS / "commands.md"
HTTP_PAGE = DOCS / "http.md"
# The Markdown that is written by hand: the hook's markers are replaced only in the built site.
GENERATED_MARKER = re.compile(r"<!-- snap-(help|openapi)[^>]*-->")


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def hand_written(page: Path) -> str:
    return GENERATED_MARKER.sub("", page.read_text(encoding="utf-8"))


def manual_text() -> str:
    """Every page of the manual as written, without what the build generates."""
    return "\n".join(hand_written(page) for page in pages())


def headings(page: Path, level: int) -> list[str]:
    """The titles of the headings of one level, outside fenced code."""
    found, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#" * level + " "):
            found.append(line[level + 1 :].strip())
    return found
