"""The closest passage's alignment at the edges (issue 23): ``snap verify --json`` and
``snap reverify --json`` carry it step by step, the text output marks only the word that
differs (or the gap where the quote adds one), and the passage covers the whole quote."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.exports.conftest import Home, home  # noqa: F401  (fixture)
from tests.exports.html_dom import parsed
from tests.http_fixtures import LoopbackServer, http_server  # noqa: F401  (fixture)

SENTENCE = "The parser now reads every header of the archive before it opens the first record"
ARTICLE = f"""<!DOCTYPE html><html lang="en"><head><title>Release notes</title></head><body>
<main><h1>Release notes</h1>
<p>Release notes. {SENTENCE}, so a damaged index is reported at once. Other changes follow
below, with the list of fixed faults and the people who reported them.</p>
</main></body></html>"""
WORDS = SENTENCE.split()
DROPPED = " ".join(WORDS[:4] + WORDS[5:])  # "every" left out
ADDED = " ".join([*WORDS[:5], "zebra", *WORDS[5:]])  # "zebra" put in after "every"
REPLACED = " ".join([*WORDS[:4], "each", *WORDS[5:]])  # "each" for "every"
CASES = {
    "c-dropped": (DROPPED, [("dropped", "", "every")], "[-every]"),
    "c-added": (ADDED, [("added", "zebra", "")], "[+zebra]"),
    "c-replaced": (REPLACED, [("replace", "each", "every")], "[-every][+each]"),
}
STEP_KEYS = {"op", "quote", "source"}
OPS = {"equal", "replace", "added", "dropped"}


@pytest.fixture
def recorded(home: Home, http_server: LoopbackServer) -> str:  # noqa: F811
    http_server.route("/notes", body=ARTICLE.encode())
    url = http_server.url("/notes")
    home.fetch(url)
    return url


def citations(url: str) -> list[dict[str, Any]]:
    return [{"citationId": key, "url": url, "quote": quote} for key, (quote, *_) in CASES.items()]


def assert_aligned(result: dict[str, Any]) -> None:
    """The alignment's schema, its one differing step, and a passage covering the quote."""
    quote, expected, _ = CASES[result["citationId"]]
    closest = result["closest"]
    assert closest["text"] == SENTENCE  # the whole quote: neither its first word nor its last lost
    steps = closest["alignment"]
    for step in steps:
        assert set(step) == STEP_KEYS
        assert step["op"] in OPS
        assert isinstance(step["quote"], str)
        assert set(step["source"]) == {"start", "end"}
        assert closest["start"] <= step["source"]["start"] <= step["source"]["end"]
        assert step["source"]["end"] <= closest["end"]
    text, start = closest["text"], closest["start"]

    def source(step: dict[str, Any]) -> str:
        return str(text[step["source"]["start"] - start : step["source"]["end"] - start])

    differing = [(s["op"], s["quote"], source(s)) for s in steps if s["op"] != "equal"]
    assert differing == expected
    # the quote's words, in order, are the equal and differing steps' quote words
    assert " ".join(s["quote"] for s in steps if s["quote"]) == quote


def test_verify_json_carries_the_alignment(home: Home, recorded: str) -> None:  # noqa: F811
    results = home.verify(citations(recorded))
    assert [r["status"] for r in results] == ["not_found"] * 3
    for result in results:
        assert_aligned(result)


def test_the_text_output_marks_only_the_word_or_gap_that_differs(
    home: Home,  # noqa: F811
    recorded: str,
) -> None:
    path = home.folder / "citations.json"
    path.write_text(json.dumps(citations(recorded)), encoding="utf-8")
    printed = home.snap("verify", str(path)).stdout
    passages = [
        line.strip() for line in printed.splitlines() if line.strip().startswith("The parser")
    ]
    marked = {
        "c-dropped": "The parser now reads [-every] header of the archive before it opens the "
        "first record",
        "c-added": "The parser now reads every [+zebra] header of the archive before it opens "
        "the first record",
        "c-replaced": "The parser now reads [-every][+each] header of the archive before it "
        "opens the first record",
    }
    assert sorted(passages) == sorted(marked.values())
    assert "[]" not in printed


def test_the_evidence_page_marks_the_word_or_gap(home: Home, recorded: str) -> None:  # noqa: F811
    home.verify(citations(recorded))
    for citation_id, (_, _, shown) in CASES.items():
        page = home.page(citation_id)
        dom = parsed(page)
        assert "mark" not in dom.inside
        deleted = re.findall(r'<del title="in the source, not in the quote">([^<]*)</del>', page)
        inserted = re.findall(r'<ins title="in the quote, not in the source">([^<]*)</ins>', page)
        assert "".join(deleted) == ("[-every]" if "-" in shown else "")
        assert "".join(inserted) == shown.replace("[-every]", "")


def test_reverify_keeps_the_whole_passage_and_its_alignment(
    home: Home,  # noqa: F811
    recorded: str,
) -> None:
    home.verify(citations(recorded))
    code, report = home.snap_json("reverify")
    assert code == 1
    results = sorted(report["results"], key=lambda r: r["citationId"])
    assert [r["citationId"] for r in results] == sorted(CASES)
    for result in results:
        assert result["status"] == "not_found"
        assert_aligned(result)
