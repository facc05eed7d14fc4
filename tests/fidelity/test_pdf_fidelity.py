"""A PDF book with numbered running headers: every sentence stays quotable across pages.

The book is written by hand in the shape of a Texinfo manual: even pages carry the page
number and the book's title at the top, odd pages the chapter's title and the page number,
and chapters are a few pages long, so no chapter's title is on most pages.  Its sentences
run across page breaks.  No browser reads PDFs the way a citation needs (Chromium's viewer
has no innerText), so the reference is the book's own sentences: each must be found, as a
quote, in snap's text, and no running header may be left in the text flow.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from snapshotter.extract import extract
from tests.pdf_fixtures import LabelRange, build_pdf
from verifier import prepare

BOOK = "The Small Book of Tides"
LINES_PER_PAGE = 4
FIRST_PAGE = 35
CHAPTERS = (
    (
        "Chapter 5: Reading a Tide Table",
        "A tide table lists the times and heights of high and low water for one port. "
        "Each row is a day, and each day usually has two high waters and two low waters. "
        "The heights are measured from chart datum, which is a level the water seldom falls "
        "below. A negative height means the water will drop below that level, which happens "
        "a few times a year at the lowest spring tides. Times are given in the port's local "
        "standard time, so in summer an hour has to be added by hand. Small ports often have "
        "no table of their own and use the table of a larger port nearby with a correction.",
    ),
    (
        "Chapter 6: Springs and Neaps",
        "Twice a month the sun and the moon pull in line, and the range between high and low "
        "water is at its greatest. These are the spring tides, which have nothing to do with "
        "the season. A week later the two pull at right angles and the range is smallest; "
        "these are the neap tides. The difference can be large: in some harbours the spring "
        "range is three times the neap range.",
    ),
    (
        "Chapter 7: The Rule of Twelfths",
        "Between low and high water the tide does not rise evenly. In the first hour it rises "
        "by one twelfth of its range, in the second by two twelfths, and in the third and "
        "fourth by three twelfths each. In the fifth hour it slows again to two twelfths and "
        "in the sixth to one. The rule is only a guide, but it is close enough for deciding "
        "whether a boat can cross a sand bar at a given hour. Where the tide is distorted by "
        "a long estuary the rule fails, and the local tidal curves must be used instead.",
    ),
)


def _book_pages() -> tuple[list[list[str]], list[str]]:
    """The pages' lines (headers first) and the book's sentences."""
    body: list[tuple[str, str]] = []  # (line, chapter title) in reading order
    sentences: list[str] = []
    for title, text in CHAPTERS:
        body.append((title, title))
        body.extend((line, title) for line in textwrap.wrap(text, 64))
        sentences.extend(re.split(r"(?<=\.) ", text))
    pages: list[list[str]] = []
    for start in range(0, len(body), LINES_PER_PAGE):
        chunk = body[start : start + LINES_PER_PAGE]
        number = FIRST_PAGE + len(pages)
        chapter = chunk[0][1]
        header = f"{number} {BOOK}" if number % 2 == 0 else f"{chapter} {number}"
        pages.append([header, *(line for line, _ in chunk)])
    return pages, sentences


def test_every_sentence_of_a_book_with_numbered_headers_is_found(tmp_path: Path) -> None:
    pages, sentences = _book_pages()
    assert len(pages) >= 6
    path = tmp_path / "book.pdf"
    path.write_bytes(build_pdf(pages, labels=[LabelRange(0, start=FIRST_PAGE)]))
    result = extract(path, "application/pdf")
    assert result.text is not None
    source = prepare(result.text)
    missing = [sentence for sentence in sentences if not source.check(sentence).found]
    found = len(sentences) - len(missing)
    print(f"\nPDF book, {len(pages)} pages: {found}/{len(sentences)} sentences found")
    assert missing == []
    headers = [lines[0] for lines in pages]
    assert [page.furniture for page in result.pages] == [(header,) for header in headers]
    assert not any(header in result.text for header in headers)
    for title, _ in CHAPTERS:  # a chapter's own title line is body text, not furniture
        assert title in result.text.split("\n")
