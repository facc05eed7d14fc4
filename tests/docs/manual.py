"""The manual's sources (``docs/*.md``) as the documentation tests read them, and its build."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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


def build_site(target: Path, project: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict``: any warning (a broken link or anchor, a page not in the
    navigation, a hook that fails) fails the build."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(project / "mkdocs.yml"),
            "-d",
            str(target),
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
