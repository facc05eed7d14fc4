"""The scanner's ``re`` twin makes exactly the scanner's matches on every piece it is used for.

The twin only speeds tokenizing up; a difference would change tokens, and so what passes.  These
tests compare the two scanners match by match, character by character and on random texts over
the twin's alphabet, and check that a piece of text outside that alphabet never reaches the twin:
the scanner reads it, and the tokens are the same as the scanner's over the whole text, wherever
the pieces are cut.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import tokenizer
from verifier.tokenizer import INVISIBLE, Row, SideItem, iter_columns

ALPHABET = tokenizer._twin_characters()
# Fragments that exercise the scanner's structure: reference marks and their surroundings,
# hyphenated line breaks, number separators, sentence stops, ellipses, operators.
FRAGMENTS = [
    "[1]", "[12]", "[citation needed]", "[a]", "[iv]", "[note 3]", "[Who?]", "[BY WHOM?]",
    "[ss]", "[ß]", "[SS]", "[k]", "...", "…", "⋯", "-\n", "- \n  ", "‐\r\n", "\r\n",
    "5'000", "5’000", "1,000.50", "1_0", "x:", ".", ":", ". ", ".)", "Rh+", "&&", "::", "10^6",
    "e.g.", "x²", "H₂O", "½", "Ⅻ", "→", "©", "™", "€", "«", "»", "“", "”", "‘", "’", "\u2028",
    "\x85", "\xa0", "\u202f", "é", "é", "\t", "\r", "x\t", "y\r\n",
    "a{4,}b", "(x,)", "((),)", "[x; n]", "[T, N]", ",.", ";:", ", ]", ",)", ",[1]", ",\"",
]  # fmt: skip
COMMON = "aZ09 \n\t.,:;-[](){}'\"!?&%+=/<>|"


def twin_texts() -> st.SearchStrategy[str]:
    """Texts over the twin's alphabet, mixing common characters, any alphabet character and
    structural fragments."""
    part = st.one_of(
        st.sampled_from(COMMON),
        st.sampled_from(ALPHABET),
        st.sampled_from(FRAGMENTS),
        st.from_regex(r"[a-z]{1,6}", fullmatch=True),
    )
    return st.lists(part, max_size=40).map("".join)


def matches(
    scanner: re.Pattern[str] | regex.Pattern[str], text: str
) -> list[tuple[str | None, int, int, int, int]]:
    found = []
    for match in scanner.finditer(text):
        start, end = match.span(match.lastindex or 0)
        found.append((match.lastgroup, *match.span(), start, end))
    return found


def original(references: bool) -> regex.Pattern[str]:
    return tokenizer._SCANNER if references else tokenizer._scanner_without_references()


@functools.cache
def twin_scanner(references: bool) -> re.Pattern[str]:
    return re.compile(tokenizer._twin(references).pattern, re.VERBOSE)


def assert_same_matches(text: str, references: bool) -> None:
    twin = tokenizer._twin(references)
    if twin.opens_with_stop.match(text):
        return  # the scanner reads such a text's first piece: see the tests of pieces below
    assert matches(twin_scanner(references), text) == matches(original(references), text), repr(
        text
    )


@settings(max_examples=3_000, derandomize=True, deadline=None)
@given(text=twin_texts(), references=st.booleans())
def test_the_twin_makes_the_scanners_matches(text: str, references: bool) -> None:
    assert_same_matches(text, references)


def contexts(character: str) -> Iterator[str]:
    for template in ("{}", "a{}b", "1{}2", " {} ", "a[{}] b", "x{}{}", "{}.", "{}\n", "5 {} 6"):
        yield template.format(character, character)


@pytest.mark.parametrize("references", [True, False])
def test_every_alphabet_character_is_scanned_alike_in_every_context(references: bool) -> None:
    for character in ALPHABET:
        for text in contexts(character):
            assert_same_matches(text, references)


def rows_and_side(
    text: str, scanner: object, references: bool, chunk: int = 256, piece: int = 16
) -> tuple[list[Row], list[SideItem]]:
    """The tokens and side items of ``text`` read by ``scanner``, the twin cutting its pieces
    about ``piece * chunk`` characters apart."""
    side: list[SideItem] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenizer, "_scanner_for", lambda text, references: scanner)
        patch.setattr(tokenizer, "_TWIN_CHARACTERS_PER_TOKEN", piece)
        columns = iter_columns(text, side, references=references, chunk=chunk)
        return [row for batch in columns for row in batch.rows()], side


@settings(max_examples=500, derandomize=True, deadline=None)
@given(text=twin_texts(), references=st.booleans(), chunk=st.sampled_from([1, 2, 256]))
def test_tokens_and_side_items_are_the_same_through_either_scanner(
    text: str, references: bool, chunk: int
) -> None:
    twin = tokenizer._twin(references)
    if not twin.opens_with_stop.match(text):
        expected = rows_and_side(text, original(references), references)
        assert rows_and_side(text, twin, references, chunk) == expected


@settings(max_examples=400, derandomize=True, deadline=None)
@given(text=twin_texts(), references=st.booleans())
def test_the_twin_may_cut_its_pieces_anywhere_it_allows(text: str, references: bool) -> None:
    """Every place the twin may cut the text is tried (one piece size each)."""
    twin = tokenizer._twin(references)
    if not twin.opens_with_stop.match(text):
        expected = rows_and_side(text, original(references), references)
        for piece in range(1, len(text)):
            assert rows_and_side(text, twin, references, 1, piece) == expected, piece


@pytest.mark.parametrize(
    "text",
    [
        "a co-\nop b c",
        "a co- \n op b",
        "word[1] \nnext",
        "word[1]  * next",
        "word[citation needed] and more",
        "x [according to whom?] y",
        "end.\n(next",
        "x.\n\n. y",
        "a co-\r\nop b\tc.\r\nd",
        "x\t[1]\ty [note 3]\t. z",
    ],
)
def test_the_twin_does_not_cut_what_spans_a_space(text: str) -> None:
    expected = rows_and_side(text, original(True), True)
    for piece in range(1, len(text)):
        assert rows_and_side(text, tokenizer._twin(True), True, 1, piece) == expected, piece


@pytest.mark.parametrize("references", [True, False])
def test_a_text_with_no_place_to_cut_is_read_by_the_scanner_from_there(
    references: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece far longer than planned ("a,b,c,..." has no space) is not split at once: the
    scanner reads on from the piece's start, match by match, and the tokens do not change."""
    text = "Some words first. " * 8 + "a,b.c;5,6[1]," * 400 + " and then words [2] again."
    scanner_batches = tokenizer._scanner_batches
    starts: list[int] = []

    def spy(*args: object) -> Iterator[tokenizer.Columns]:
        starts.append(int(args[-1]))  # type: ignore[call-overload]
        return scanner_batches(*args)  # type: ignore[arg-type]

    expected = rows_and_side(text, original(references), references)
    monkeypatch.setattr(tokenizer, "_scanner_batches", spy)
    assert rows_and_side(text, tokenizer._twin(references), references, 1, 16) == expected
    assert starts == [text.index("a,b.c")]


def test_the_generated_texts_stay_in_the_alphabet() -> None:
    assert set("".join(FRAGMENTS) + COMMON) <= set(ALPHABET)


def test_the_alphabet_has_no_invisible_or_emoji_character() -> None:
    forbidden = rf"[{INVISIBLE}\p{{Regional_Indicator}}\u200d\u20e3\U0001f3fb-\U0001f3ff]"
    assert regex.search(forbidden, ALPHABET) is None
    emoji_start = r"[\U0001f000-\U0001faff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff]"
    assert regex.search(emoji_start, ALPHABET) is None


def pieces_read_by_the_scanner(text: str, piece: int) -> list[tuple[int, int | None]]:
    """The ``(start, end)`` of every piece of ``text`` the twin hands to the scanner."""
    spans: list[tuple[int, int | None]] = []
    scanner_batches = tokenizer._scanner_batches

    def spy(
        text: str,
        scanner: regex.Pattern[str],
        side: list[SideItem],
        position: tokenizer._Position,
        chunk: int,
        start: int = 0,
        end: int | None = None,
    ) -> Iterator[tokenizer.Columns]:
        spans.append((start, end))
        return scanner_batches(text, scanner, side, position, chunk, start, end)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenizer, "_scanner_batches", spy)
        rows_and_side(text, tokenizer._twin(True), True, 1, piece)
    return spans


@pytest.mark.parametrize(
    "text", ["a\u00adb", "ok 😀", "中文", "x\u200by", "Ω ≠ ⌚", ". opens", " : opens"]
)
def test_a_piece_the_twin_cannot_read_goes_to_the_scanner(text: str) -> None:
    assert pieces_read_by_the_scanner(text, 64) == [(0, len(text))]
    expected = rows_and_side(text, original(True), True)
    assert rows_and_side(text, tokenizer._twin(True), True, 1, 64) == expected


@pytest.fixture(autouse=True)
def wide_twin_not_yet_earned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with the wide twin unearned (other tests may have earned it)."""
    monkeypatch.setattr(tokenizer, "_WIDE_DEMAND", tokenizer._TwinDemand())


def test_only_the_pieces_outside_the_alphabet_go_to_the_scanner() -> None:
    """One character outside the alphabet costs its piece, not the whole text."""
    plain = "Plain words of prose, and more of them. " * 4
    text = plain + "a zero\u200bwidth space " + plain + "中文 " + plain
    pieces = [text[start:end] for start, end in pieces_read_by_the_scanner(text, 8)]
    assert len(pieces) == 2
    assert "\u200b" in pieces[0]
    assert "中文" in pieces[1]
    assert sum(map(len, pieces)) < 40


# Characters outside the twin's alphabet, alone and in the shapes real pages have them.
OUTSIDE = [
    "\u200b", "\u00ad", "a\u00ad\nb", "co\u00ad \n op", "\u200d", "\u2060", "\ufeff", "😀",
    "👩\u200d💻", "🇫🇷", "1\ufe0f\u20e3", "中文", "日本語の", "。", "，", "\u3000", "สวัสดี", "שלום",
    "مرحبا", "\u200f", "─", "│", "├──", "※", "①", "ﬁ", "Ｆ", "ℤ", "ℝ", "𝐀", "⌚", "★", "♪",
    "\U0001f600",
]  # fmt: skip


def mixed_texts() -> st.SearchStrategy[str]:
    """Texts over the twin's alphabet with characters outside it here and there."""
    part = st.one_of(
        st.sampled_from(COMMON),
        st.sampled_from(FRAGMENTS),
        st.sampled_from(OUTSIDE),
        st.from_regex(r"[a-z]{1,6}", fullmatch=True),
        st.characters(codec="utf-8", exclude_categories=["Cs"]),
    )
    return st.lists(part, max_size=40).map("".join)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(text=mixed_texts(), references=st.booleans())
def test_pieces_are_read_alike_by_either_scanner_wherever_they_are_cut(
    text: str, references: bool
) -> None:
    """Every place the text may be cut is tried (one piece size each): the twin reads the
    pieces in its alphabet, the scanner the others, and the tokens are the scanner's."""
    expected = rows_and_side(text, original(references), references)
    twin = tokenizer._twin(references)
    for piece in range(1, len(text)):
        assert rows_and_side(text, twin, references, 1, piece) == expected, piece


def test_the_twin_is_used_only_once_it_has_been_earned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenizer._TWIN_DEMAND, "scanned", 0)
    small = "A small page. " * 10
    assert tokenizer._scanner_for(small, True) is tokenizer._SCANNER
    large = "x" * tokenizer._TWIN_AFTER
    assert tokenizer._scanner_for(large, True) is tokenizer._twin(True)
    assert tokenizer._scanner_for(small, True) is tokenizer._twin(True)
    assert tokenizer._scanner_for(small, False) is tokenizer._twin(False)


def general_rows(text: str, references: bool) -> tuple[list[Row], list[SideItem]]:
    """The tokens of ``text`` read by the scanner, every batch described token by token."""

    def general(
        text: str,
        batch: list[regex.Match[str]],
        side: list[SideItem],
        position: tokenizer._Position,
        plan: tokenizer._Plan,
    ) -> tokenizer.Columns:
        groups = [plan.names[match.lastindex or 0] for match in batch]
        texts = [match.group(match.lastindex or 0) for match in batch]
        starts = [match.start(match.lastindex or 0) for match in batch]
        return tokenizer._general_columns(text, groups, texts, starts, side, position)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenizer, "_batch_columns", general)
        return rows_and_side(text, original(references), references, 16)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(text=mixed_texts(), references=st.booleans())
def test_words_of_unspaced_scripts_are_split_alike_in_bulk(text: str, references: bool) -> None:
    """A batch with a word to split again (CJK, Thai, superscript letters) is described in bulk
    after splitting (``_split_words``): the same tokens as token by token."""
    assert rows_and_side(text, original(references), references, 16) == general_rows(
        text, references
    )


# The wide twin (``tokenizer._WIDE_RANGES``): Chinese and Japanese text, box drawing.
WIDE = tokenizer._twin_characters(wide=True)
WIDE_ONLY = "".join(sorted(set(WIDE) - set(ALPHABET)))
CJK_FRAGMENTS = [
    "漢字", "日本語の", "中文，", "。", "、", "「引用」", "（注）", "ー", "々", "〇", "ｶﾀｶﾅ",
    "Ｆｕｌｌ", "１２３", "─", "│", "├──", "●", "\u3000", "漢-\nabc", "字\u2010\r\nxy", "漢-\n 字",
    "漢\u0301",
    "か\u3099", "ｶﾞ", "Debian用", "x²漢", "ª漢", "漢ª", "漢[1]", "漢 [1] 字", "漢,", "漢.", "漢:",
    "漢。 ", "…", "漢...", "A+漢", "〜", "・", "〽", "※",
]  # fmt: skip


def earn_the_wide_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenizer._WIDE_DEMAND, "scanned", tokenizer._TWIN_AFTER)


def wide_texts() -> st.SearchStrategy[str]:
    """Texts over the wide twin's alphabet, with a few characters outside it."""
    part = st.one_of(
        st.sampled_from(COMMON),
        st.sampled_from(FRAGMENTS),
        st.sampled_from(CJK_FRAGMENTS),
        st.sampled_from(WIDE_ONLY),
        st.sampled_from(ALPHABET),
        st.from_regex(r"[a-z]{1,6}", fullmatch=True),
    )
    return st.lists(part, max_size=40).map("".join)


@settings(max_examples=500, derandomize=True, deadline=None)
@given(text=wide_texts(), references=st.booleans(), chunk=st.sampled_from([1, 2, 256]))
def test_the_wide_twin_makes_the_scanners_tokens(text: str, references: bool, chunk: int) -> None:
    """The scanner reads a run of CJK characters as one word and splits it into units; the wide
    twin reads each unit as a token: the same tokens, flags and side items, wherever the pieces
    are cut."""
    expected = rows_and_side(text, original(references), references)
    with pytest.MonkeyPatch.context() as patch:
        earn_the_wide_twin(patch)
        twin = tokenizer._twin(references)
        for piece in (1, 3, 16):
            assert rows_and_side(text, twin, references, chunk, piece) == expected, piece


def test_every_wide_character_is_scanned_alike_in_every_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    earn_the_wide_twin(monkeypatch)
    ideographs = regex.compile(r"\p{Han}")
    sample = [c for i, c in enumerate(WIDE_ONLY) if not ideographs.match(c) or i % 97 == 0]
    for character in sample:
        for text in contexts(character):
            expected = rows_and_side(text, original(True), True)
            assert rows_and_side(text, tokenizer._twin(True), True, 1, 64) == expected, text


def test_no_wide_character_extends_a_grapheme_or_is_invisible() -> None:
    """A character of an unspaced script is a unit of its own unless a character that extends
    its grapheme follows it: none of those is in the wide alphabet (the guard sends a piece
    where one from the narrow alphabet follows it to the scanner)."""
    assert [c for c in WIDE_ONLY if regex.fullmatch(r"\X", "\u6f22" + c)] == []
    assert regex.search(rf"[{INVISIBLE}]", WIDE_ONLY) is None
    emoji_start = r"[\U0001f000-\U0001faff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff]"
    assert regex.search(emoji_start, WIDE_ONLY) is None


def test_a_cjk_piece_is_read_by_the_wide_twin_once_it_has_been_earned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "中文的文本，「引用」。"
    assert pieces_read_by_the_scanner(text, 64) == [(0, len(text))]
    earn_the_wide_twin(monkeypatch)
    assert pieces_read_by_the_scanner(text, 64) == []
    assert rows_and_side(text, tokenizer._twin(True), True, 1, 64) == rows_and_side(
        text, original(True), True
    )


@pytest.mark.parametrize("text", ["文字-\nabc", "漢\u0301字", "ok 😀 漢字", "สวัสดี 漢"])
def test_a_cjk_piece_the_wide_twin_cannot_read_goes_to_the_scanner(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    earn_the_wide_twin(monkeypatch)
    assert pieces_read_by_the_scanner(text, 64) == [(0, len(text))]
    expected = rows_and_side(text, original(True), True)
    assert rows_and_side(text, tokenizer._twin(True), True, 1, 64) == expected
