"""PDF running headers, footers and page numbers: out of the text flow, into the page map."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snapshotter.capture import page_json
from snapshotter.extract import Extraction, extract
from snapshotter.extract.pdf_furniture import number_value, split_furniture
from tests.pdf_fixtures import LabelRange, build_pdf

HEADER = "Harbour Survey 2024 - Interim report"
SENTENCE = (
    "The committee found that the decline in plastic waste was largest at the river mouth,"
    " where volunteers counted 4,210 items."
)


def _extract(
    tmp_path: Path, pages: list[list[str]], labels: Sequence[LabelRange] = ()
) -> Extraction:
    path = tmp_path / "doc.pdf"
    path.write_bytes(build_pdf(pages, labels=labels))
    return extract(path, "application/pdf")


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _report(show: Callable[[int], str] = str) -> list[list[str]]:
    """Three pages with a running header and a page number; SENTENCE runs over pages 2-3."""
    return [
        [
            HEADER,
            "Introduction",
            "The survey began in March 2021.",
            "It covered twelve sites.",
            show(1),
        ],
        [
            HEADER,
            "Counts were made every month.",
            "The committee found that the decline in plastic",
            show(2),
        ],
        [
            HEADER,
            "waste was largest at the river mouth,",
            "where volunteers counted 4,210 items.",
            show(3),
        ],
    ]


def test_a_sentence_across_a_page_break_is_contiguous(tmp_path: Path) -> None:
    result = _extract(tmp_path, _report())
    assert result.text is not None
    assert SENTENCE in _squeezed(result.text)
    assert "in plastic\nwaste was" in result.text  # only a line break between the halves
    assert HEADER not in result.text
    assert [page.furniture for page in result.pages] == [
        (HEADER, "1"),
        (HEADER, "2"),
        (HEADER, "3"),
    ]
    start = result.text.index("The committee")
    end = result.text.index("4,210 items.") + len("4,210 items.")
    covered = [page.label for page in result.pages if page.start < end and start < page.end]
    assert covered == ["2", "3"]
    assert result.text[result.pages[1].start : result.pages[1].end] == (
        "Counts were made every month.\nThe committee found that the decline in plastic"
    )
    assert "furniture=" in result.extractor


@pytest.mark.parametrize(
    "number",
    [
        lambda n: f"Page {n} of 3",
        lambda n: f"- {n} -",
        lambda n: f"{n + 10}",  # printed numbers need not start at 1, only keep step
        lambda n: f"[{n}]",
    ],
    ids=["page-of", "dashes", "offset", "brackets"],
)
def test_page_number_styles_are_recognised(tmp_path: Path, number: Callable[[int], str]) -> None:
    result = _extract(tmp_path, _report(number))
    assert result.text is not None
    assert SENTENCE in _squeezed(result.text)
    assert all(len(page.furniture) == 2 for page in result.pages)


def test_running_header_with_a_changing_number_and_a_footer(tmp_path: Path) -> None:
    pages = [
        [f"Annual report 2024 · {n}", *body, "© Harbour Authority. All rights reserved."]
        for n, body in enumerate(
            [
                ["Summary.", "Water quality improved in every"],
                ["district, and the beaches"],
                ["stayed open all summer."],
            ],
            start=7,
        )
    ]
    result = _extract(tmp_path, pages)
    assert result.text == (
        "Summary.\nWater quality improved in every\ndistrict, and the beaches\n"
        "stayed open all summer."
    )
    assert result.pages[2].furniture == (
        "Annual report 2024 · 9",
        "© Harbour Authority. All rights reserved.",
    )


def test_roman_front_matter_numbers_by_label(tmp_path: Path) -> None:
    pages = [
        ["Preface text starts", "iii"],
        ["and ends here.", "iv"],
        ["Chapter one text", "1"],
        ["goes on.", "2"],
    ]
    result = _extract(tmp_path, pages, [LabelRange(0, "r", start=3), LabelRange(2, "D")])
    assert result.text == "Preface text starts\nand ends here.\nChapter one text\ngoes on."
    assert [page.label for page in result.pages] == ["iii", "iv", "1", "2"]


def test_a_hyphenated_word_across_a_page_break_stays_joined_by_one_line_break(
    tmp_path: Path,
) -> None:
    pages = [
        [HEADER, "the opera-", "1"],
        [HEADER, "tion ran for three days", "2"],
        [HEADER, "and ended.", "3"],
    ]
    result = _extract(tmp_path, pages)
    assert result.text == "the opera-\ntion ran for three days\nand ended."


def test_body_lines_that_look_like_furniture_stay(tmp_path: Path) -> None:
    repeated = "Results are given as medians."
    pages = [
        ["Year counted", "2021"],  # a number at a page foot, not in step with any other page
        # repeated, but in the middle of a page (outside the three edge lines)
        [
            "The method",
            "was used",
            "at every",
            "site",
            repeated,
            "in all",
            "twelve",
            "months",
            "alike.",
        ],
        ["More text", repeated],  # at the foot of only two pages
        ["Last page", repeated],
        ["Totals", "7"],
    ]
    result = _extract(tmp_path, pages)
    assert result.text is not None
    assert "2021" in result.text
    assert result.text.count(repeated) == 3
    assert "\n7" in result.text
    assert all(page.furniture == () for page in result.pages)


def test_a_single_page_has_no_furniture(tmp_path: Path) -> None:
    result = _extract(tmp_path, [[HEADER, "Only page.", "1"]])
    assert result.text == f"{HEADER}\nOnly page.\n1"
    assert result.pages[0].furniture == ()


def test_the_page_map_records_the_furniture(tmp_path: Path) -> None:
    result = _extract(tmp_path, _report())
    assert page_json(result.pages[1]) == {
        "index": 1,
        "label": "2",
        "start": result.pages[1].start,
        "end": result.pages[1].end,
        "furniture": [HEADER, "2"],
    }


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("12", 12),
        ("- 12 -", 12),
        ("Page 3 of 40", 3),
        ("xiv", 14),
        ("IV", 4),
        ("(7)", 7),
        ("12 / 40", 12),
    ],
)
def test_page_number_forms(line: str, value: int) -> None:
    assert number_value(line) == value


@pytest.mark.parametrize(
    "line", ["iiii", "vx", "12 apples", "Page twelve", "1.5", "", "vv", "2021-2024"]
)
def test_not_page_numbers(line: str) -> None:
    assert number_value(line) is None


LINES = st.lists(
    st.sampled_from([HEADER, "", "1", "2", "iv", "Page 2 of 9", "body text", "more body", "x 3"]),
    max_size=6,
)


@given(pages=st.lists(LINES, min_size=1, max_size=5))
def test_nothing_is_lost(pages: list[list[str]]) -> None:
    """Every non-blank line ends up in the body or in the furniture; the body is one slice."""
    texts = ["\n".join(lines) for lines in pages]
    labels = [str(i + 1) for i in range(len(pages))]
    for text, split in zip(texts, split_furniture(texts, labels), strict=True):
        kept = [line for line in split.body.split("\n") if line.strip()]
        assert Counter(kept) + Counter(split.furniture) == Counter(
            line for line in text.split("\n") if line.strip()
        )
        assert split.body in text


def test_a_page_is_never_emptied(tmp_path: Path) -> None:
    """Identical pages repeat every line at their edges; each page still keeps its last line."""
    pages = [["This page describes the cache.", "Cold caches cause slow requests."]] * 3
    result = _extract(tmp_path, pages)
    assert result.text is not None
    for page in result.pages:
        assert result.text[page.start : page.end] == "Cold caches cause slow requests."
        assert page.furniture == ("This page describes the cache.",)


BOOK_TITLE = "A Small Tutorial on Lists"


def _book() -> list[list[str]]:
    """Eight pages from page 35 on, Texinfo's way: even pages carry the page number and the
    book's title, odd pages the chapter's title and the page number; chapters are short, so
    no chapter title is on MIN_SHARE of the pages.  Sentences run over every page break."""
    chapters = {
        0: "Chapter 5: Making Good Use of Lists",
        1: "Chapter 5: Making Good Use of Lists",
        2: "Chapter 5: Making Good Use of Lists",
        3: "Chapter 6: Walking a List",
        4: "Chapter 6: Walking a List",
        5: "Chapter 7: Sorting in Place",
        6: "Chapter 7: Sorting in Place",
        7: "Chapter 7: Sorting in Place",
    }
    words = [
        "apple", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "inlet", "juniper",
    ]  # fmt: skip
    pages = []
    for index in range(8):
        number = 35 + index
        header = f"{number} {BOOK_TITLE}" if number % 2 == 0 else f"{chapters[index]} {number}"
        first, second = words[index], words[index + 1]
        pages.append([header, f"with the {first} list in hand.", f"Now take the {second} list"])
    return pages


def test_numbered_running_headers_of_short_chapters_leave_the_text_flow(tmp_path: Path) -> None:
    result = _extract(tmp_path, _book())
    assert result.text is not None
    assert "Chapter" not in result.text
    assert BOOK_TITLE not in result.text
    assert "Now take the fjord list\nwith the fjord list in hand." in result.text
    assert result.pages[6].furniture == ("Chapter 7: Sorting in Place 41",)
    assert result.pages[5].furniture == (f"40 {BOOK_TITLE}",)
    assert result.pages[4].furniture == ("Chapter 6: Walking a List 39",)  # shown once only


def test_a_numbered_line_that_is_not_in_step_stays_in_the_text(tmp_path: Path) -> None:
    pages = _book()
    pages[2][0] = "Chapter 5: Making Good Use of Lists 12"  # a number out of step: body text
    result = _extract(tmp_path, pages)
    assert result.text is not None
    assert "Chapter 5: Making Good Use of Lists 12" in result.text
    assert result.pages[2].furniture == ()
    assert result.pages[3].furniture == ("38 A Small Tutorial on Lists",)
