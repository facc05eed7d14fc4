"""Exact by default, end to end: real pages served on loopback, captured and verified through
the ``snap`` command, on both backends.

* every operator row of an mdBook operator appendix is found as written, and not found with its
  operator swapped for any other operator of the table;
* code listings and their captions are found in an mdBook chapter;
* a quote that runs across a PDF page break (running header and page number between) is found,
  and the verification names the pages it spans.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.http_fixtures import LoopbackServer
from tests.pdf_fixtures import build_pdf
from tests.records.conftest import Backend

PAGES = Path(__file__).resolve().parents[1] / "snapshotter" / "pages"
TABLE_START = "Operator Example Explanation Overloadable?"
TABLE_END = "Non-operator Symbols"


def operator_rows() -> list[tuple[str, str, str]]:
    """``(operator, example, explanation)`` of each row of Table B-1, from the page's visible
    lines (``mdbook_operators.expected.txt``, written by hand beside the page)."""
    lines = (PAGES / "mdbook_operators.expected.txt").read_text(encoding="utf-8").splitlines()
    table = lines[lines.index(TABLE_START) + 1 : lines.index(TABLE_END)]
    rows = []
    for line in table:
        operator, rest = line.split(" ", 1)
        rows.append((operator, rest))
    html = (PAGES / "mdbook_operators.html").read_text(encoding="utf-8")
    return [(op, *_split_example(op, rest, html)) for op, rest in rows]


def _split_example(operator: str, rest: str, html: str) -> tuple[str, str]:
    """Split "expr && expr Short-circuiting logical AND" into example and explanation: the
    example is the longest prefix that holds the operator and ends before a capital word."""
    words = rest.split(" ")
    for cut in range(len(words) - 1, 0, -1):
        example, explanation = " ".join(words[:cut]), " ".join(words[cut:])
        if operator in example and explanation[:1].isupper():
            return example, explanation
    return rest, ""


def verify_all(backend: Backend, tmp_path: Path, citations: list[dict[str, Any]]) -> list[str]:
    path = tmp_path / "citations.json"
    path.write_text(json.dumps(citations, ensure_ascii=False), encoding="utf-8")
    done = backend.snap("verify", str(path), "--json")
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    return [result["status"] for result in report["results"]]


def capture(backend: Backend, server: LoopbackServer, name: str, body: bytes, kind: str) -> str:
    server.route(f"/{name}", body=body, content_type=kind)
    done = backend.snap("fetch", server.url(f"/{name}"), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return server.url(f"/{name}")


def test_every_operator_row_found_and_no_swapped_operator_found(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    html = (PAGES / "mdbook_operators.html").read_bytes()
    url = capture(backend, http_server, "appendix-b", html, "text/html; charset=utf-8")
    rows = [row for row in operator_rows() if row[2]]
    assert len(rows) >= 25
    operators = sorted({operator for operator, _, _ in rows}, key=len, reverse=True)
    on_page = {f"{example} {explanation}" for _, example, explanation in rows}
    real = [{"url": url, "quote": quote} for quote in sorted(on_page)]
    swapped = []
    for operator, example, explanation in rows:
        for other in operators:
            if other == operator:
                continue
            quote = f"{example.replace(operator, other, 1)} {explanation}"
            if quote not in on_page:
                swapped.append({"url": url, "quote": quote})
    assert len(swapped) > 500
    statuses = verify_all(backend, tmp_path, real + swapped)
    missed = [c["quote"] for c, s in zip(real, statuses, strict=False) if s != "quote_found"]
    assert missed == []
    passed = [
        c["quote"]
        for c, s in zip(swapped, statuses[len(real) :], strict=True)
        if s == "quote_found"
    ]
    assert passed == []


def test_code_listings_and_captions_are_found(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    html = (PAGES / "mdbook_errors.html").read_bytes()
    url = capture(backend, http_server, "ch09-02", html, "text/html; charset=utf-8")
    quotes = [
        'let greeting_file_result = File::open("hello.txt");',
        "Listing 9-3: Opening a file",
        'let mut username_file = File::open("hello.txt")?;',
    ]
    changed = [
        'let greeting_file_result = File.open("hello.txt");',
        "Listing 9-5: Opening a file",
        'let mut username_file = File::open("hello.txt")!;',
    ]
    statuses = verify_all(backend, tmp_path, [{"url": url, "quote": q} for q in quotes + changed])
    assert statuses == ["quote_found"] * 3 + ["not_found"] * 3


def test_a_quote_across_a_pdf_page_break_is_found(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    header = "Harbour Survey 2024 - Interim report"
    pages = [
        [header, "Introduction", "The survey began in March 2021.", "1"],
        [header, "Counts were made every month.", "The committee found that the decline", "2"],
        [header, "in plastic waste was largest at the river mouth.", "Thanks to all.", "3"],
    ]
    url = capture(backend, http_server, "survey.pdf", build_pdf(pages), "application/pdf")
    quote = "the decline in plastic waste was largest at the river mouth"
    statuses = verify_all(
        backend,
        tmp_path,
        [
            {"url": url, "quote": quote},
            {"url": url, "quote": "the decline 2 in plastic waste"},
            {"url": url, "quote": quote, "page": "2"},
            {"url": url, "quote": quote, "page": "3"},
            {"url": url, "quote": quote, "page": "1"},
        ],
    )
    assert statuses == [
        "quote_found",  # across the break, header and page number out of the way
        "not_found",  # the page number is not part of the sentence
        "quote_found",  # a quote spanning pages 2-3 is on page 2
        "quote_found",  # ... and on page 3
        "position_mismatch",  # but not on page 1
    ]
