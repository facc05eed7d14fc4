"""The same bytes give the same text hash in separate processes (different hash seeds)."""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from snapshotter.extract import extract
from tests.pdf_fixtures import LabelRange, build_pdf
from tests.snapshotter.page_coverage import PAGES as FIXTURE_PAGES
from tests.snapshotter.page_coverage import page_names
from tests.snapshotter.samples import PAGE, PAGES

RUNNING = [["Survey report", line, f"Page {n} of 3"] for n, line in enumerate(PAGES[0], 1)]

REPO = Path(__file__).resolve().parents[2]

PROGRAM = """
import hashlib, json, sys
from pathlib import Path
from snapshotter.extract import extract
out = {}
for name, declared in json.loads(sys.argv[1]):
    result = extract(Path(name), declared)
    text = result.text or ""
    pages = [[p.index, p.label, p.start, p.end, list(p.furniture)] for p in result.pages]
    out[name] = [hashlib.sha256(text.encode("utf-8")).hexdigest(), result.extractor, pages,
                 list(result.flags)]
print(json.dumps(out, sort_keys=True))
"""


def _fixtures(folder: Path) -> list[tuple[str, str | None]]:
    files = {
        "page.html": (PAGE.encode(), "text/html"),
        "report.pdf": (build_pdf(PAGES, labels=[LabelRange(0, "r"), LabelRange(2)]), None),
        "notes.txt": (codecs.BOM_UTF16_LE + ("Zoë 42 % " * 50).encode("utf-16-le"), None),
        "running.pdf": (build_pdf(RUNNING), None),
        **{
            f"{name}.html": ((FIXTURE_PAGES / f"{name}.html").read_bytes(), "text/html")
            for name in page_names()
        },
    }
    listed = []
    for name, (data, declared) in files.items():
        (folder / name).write_bytes(data)
        listed.append((str(folder / name), declared))
    return listed


def _run(listed: list[tuple[str, str | None]], seed: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
    completed = subprocess.run(
        [sys.executable, "-c", PROGRAM, json.dumps(listed)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    result: dict[str, object] = json.loads(completed.stdout)
    return result


def test_two_processes_agree_with_each_other_and_with_this_one(tmp_path: Path) -> None:
    listed = _fixtures(tmp_path)
    first = _run(listed, "1")
    second = _run(listed, "4242")
    assert first == second
    for name, declared in listed:
        local = extract(Path(name), declared)
        digest = hashlib.sha256((local.text or "").encode("utf-8")).hexdigest()
        assert first[name][0] == digest  # type: ignore[index]
    assert len({entry[0] for entry in first.values()}) == len(listed)  # type: ignore[index]
    running = first[str(tmp_path / "running.pdf")]
    assert [page[4] for page in running[2]] == [  # type: ignore[index]
        ["Survey report", f"Page {n} of 3"] for n in (1, 2, 3)
    ]
