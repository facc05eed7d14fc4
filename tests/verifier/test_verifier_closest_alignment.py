"""The closest passage is lined up with the quote by an edit alignment of tokens (issue 23).

For every single-word insertion, deletion and substitution in a quote, exactly that word (or
the gap where the quote has a word the source lacks) is marked, the passage spans the whole
quote, and the one-off check and a prepared source agree.
"""

from __future__ import annotations

import pytest

from verifier import check_quote, prepare
from verifier.closest import EditKind

SOURCE = (
    "Release notes. The parser now reads every header of the archive before it opens the "
    "first record, so a damaged index is reported at once. Other changes follow below."
)
QUOTE = "The parser now reads every header of the archive before it opens the first record"
WORDS = QUOTE.split()
START = SOURCE.index(QUOTE)


def _span_of_word(index: int) -> tuple[int, int]:
    """The source span of word ``index`` of the quote."""
    at = START + len(" ".join(WORDS[:index])) + (1 if index else 0)
    return at, at + len(WORDS[index])


def _typo(word: str) -> str:
    """The word with one letter changed, as a misquote changes it."""
    return word[:-1] + ("x" if word[-1] != "x" else "y")


def _both(quote: str) -> list[object]:
    return [check_quote(quote, SOURCE).closest, prepare(SOURCE).check(quote).closest]


@pytest.mark.parametrize("index", range(len(WORDS)))
def test_a_changed_word_is_marked_alone(index: int) -> None:
    words = [*WORDS]
    words[index] = _typo(words[index])
    quote = " ".join(words)
    one_off, prepared = _both(quote)
    assert one_off == prepared
    closest = prepared
    assert closest is not None
    assert closest.differences == (_span_of_word(index),)
    assert (closest.start, closest.end) == (START, START + len(QUOTE))
    assert [edit.kind for edit in closest.alignment].count(EditKind.REPLACE) == 1


@pytest.mark.parametrize("index", range(1, len(WORDS) - 1))
def test_a_dropped_word_is_marked_alone(index: int) -> None:
    quote = " ".join(WORDS[:index] + WORDS[index + 1 :])
    one_off, prepared = _both(quote)
    assert one_off == prepared
    closest = prepared
    assert closest is not None
    assert closest.differences == (_span_of_word(index),)
    assert (closest.start, closest.end) == (START, START + len(QUOTE))
    dropped = [edit for edit in closest.alignment if edit.kind == EditKind.DROPPED]
    assert [SOURCE[edit.start : edit.end] for edit in dropped] == [WORDS[index]]


@pytest.mark.parametrize("index", range(len(WORDS) + 1))
def test_an_added_word_is_marked_as_a_gap(index: int) -> None:
    quote = " ".join([*WORDS[:index], "zebra", *WORDS[index:]])
    one_off, prepared = _both(quote)
    assert one_off == prepared
    closest = prepared
    assert closest is not None
    gap = _span_of_word(index)[0] if index < len(WORDS) else START + len(QUOTE)
    assert closest.differences == ((gap, gap),)
    assert (closest.start, closest.end) == (START, START + len(QUOTE))
    added = [edit for edit in closest.alignment if edit.kind == EditKind.ADDED]
    assert [(edit.quote, edit.start, edit.end) for edit in added] == [("zebra", gap, gap)]


def test_the_alignment_spells_out_quote_and_passage() -> None:
    closest = check_quote(QUOTE.replace("every header", "each header"), SOURCE).closest
    assert closest is not None
    assert [
        (edit.kind, edit.quote, SOURCE[edit.start : edit.end]) for edit in closest.alignment
    ] == [
        (EditKind.EQUAL, "The parser now reads", "The parser now reads"),
        (EditKind.REPLACE, "each", "every"),
        (
            EditKind.EQUAL,
            "header of the archive before it opens the first record",
            "header of the archive before it opens the first record",
        ),
    ]
