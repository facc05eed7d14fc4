"""The tokenizer: what becomes a token, what is folded, what only separates."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.tokenizer import (
    CHAR,
    CLOSE,
    NUMBER,
    OPEN,
    QUOTE,
    SCRIPT,
    SUPER_SUB,
    SYMBOL,
    WORD,
    Row,
    SideItem,
    iter_columns,
    scan_text,
    token_keys,
    tokenize,
)


def kinds_and_keys(text: str) -> list[tuple[int, str]]:
    return [(token.kind, token.key) for token in tokenize(text)]


def test_spans_are_code_points_into_the_text() -> None:
    text = "𝒳 said “5 %” — 😀 ok"
    for token in tokenize(text):
        assert text[token.start : token.end] == token.text


def test_words_fold_case_and_compatibility_forms_but_keep_the_exact_form() -> None:
    (token,) = tokenize("ﬁNAL")
    assert (token.kind, token.key, token.exact) == (WORD, "final", "fiNAL")


@pytest.mark.parametrize("number", ["5'000", "1,000.50", "1.000", "3.14", "2024", "５"])
def test_numbers_keep_their_separators(number: str) -> None:
    (token,) = tokenize(number)
    assert token.kind == NUMBER
    assert token.key == unicodedata.normalize("NFKC", number)


def test_a_curly_apostrophe_in_a_number_is_an_apostrophe() -> None:
    assert token_keys("5’000") == token_keys("5'000")


def test_signs_units_and_operators_are_symbol_runs() -> None:
    assert kinds_and_keys("−0.5 %") == [(SYMBOL, "-"), (NUMBER, "0.5"), (SYMBOL, "%")]
    assert kinds_and_keys("a && b || !c") == [
        (WORD, "a"),
        (SYMBOL, "&&"),
        (WORD, "b"),
        (SYMBOL, "||"),
        (SYMBOL, "!"),
        (WORD, "c"),
    ]
    assert kinds_and_keys("x−=1")[1] == (SYMBOL, "-=")


def test_superscripts_and_subscripts_are_their_own_tokens() -> None:
    assert kinds_and_keys("10⁶ CO₂ x⁻¹") == [
        (NUMBER, "10"),
        (SCRIPT, "⁶"),
        (WORD, "co"),
        (SCRIPT, "₂"),
        (WORD, "x"),
        (SCRIPT, "⁻¹"),
    ]


def test_the_super_sub_table_covers_this_pythons_unicode_database() -> None:
    """Every character Unicode tags <super> or <sub> is in the table (it may hold newer ones)."""
    import regex

    in_table = regex.compile(f"[{SUPER_SUB}]")
    missing = [
        f"U+{code:04X}"
        for code in range(sys.maxunicode + 1)
        if unicodedata.decomposition(chr(code)).startswith(("<super>", "<sub>"))
        and not in_table.match(chr(code))
    ]
    assert missing == []


def test_brackets_and_quotation_marks() -> None:
    assert [t.kind for t in tokenize("(a) [b] “c” 'd'")] == [
        OPEN,
        WORD,
        CLOSE,
        OPEN,
        WORD,
        CLOSE,
        QUOTE,
        WORD,
        QUOTE,
        QUOTE,
        WORD,
        QUOTE,
    ]
    assert token_keys("“a”") == token_keys('"a"') != token_keys("'a'")


def test_unspaced_scripts_are_one_grapheme_per_token() -> None:
    assert [t.text for t in tokenize("สวัสดี")] == ["ส", "วั", "ส", "ดี"]
    assert all(t.kind == CHAR for t in tokenize("日本語"))


def test_sentence_punctuation_only_separates() -> None:
    assert token_keys("one, two; three: four. five") == ["one", "two", "three", "four", "five"]
    assert token_keys("a.b a:b") == ["a", ".", "b", "a", ":", "b"]


def test_glued_marks_tokens_with_nothing_visible_before_them() -> None:
    glued = {t.text: t.glued for t in tokenize("C++ and x\u200b+ y")}
    assert glued == {"C": False, "++": True, "and": False, "x": False, "+": True, "y": False}


def test_side_items_are_emoji_and_reference_marks() -> None:
    scanned = scan_text("Ship 👩\u200d💻 it.[12] Done")
    assert [t.text for t in scanned.tokens] == ["Ship", "it", "Done"]
    assert [(item.before, item.key) for item in scanned.side] == [(1, "👩\u200d💻"), (2, "[12]")]


@pytest.mark.parametrize(
    ("word", "sensitive"),
    [
        ("mW", True),
        ("MHz", True),
        ("iPhone", True),
        ("MB", True),
        ("The", False),
        ("NASA", False),
        ("word", False),
        ("a", True),  # a letter alone (a table cell, a line) keeps its case
    ],
)
def test_case_sensitive_words_by_shape(word: str, sensitive: bool) -> None:
    (token,) = tokenize(word)
    assert token.sensitive is sensitive


def test_short_words_next_to_numbers_or_glued_to_symbols_are_case_sensitive() -> None:
    flags = {t.text: t.sensitive for t in tokenize("In 2019, the 5 m run got an A+ and a boat")}
    assert flags["m"]
    assert flags["A"]
    assert not any(flags[word] for word in ("In", "the", "boat"))


# -- batches: the tokenizer reads a text in batches of matches, in bulk where it can ---------

BATCH_PIECES = [
    "the", "The", "IN", "MB", "mW", "iPhone", "m", "A", "x", "5", "5'000", "10⁶", "x²", "CO₂",
    "&&", "+", "−", "%", "?", ".", "“", "”", "(", ")", "日本語", "สวัสดี", "👩\u200d💻", "❤️",
    "[1]", "[citation needed]", "naïve", "ﬁnal", "soft\u00adhyphen", "co-\noperate", "…",
]  # fmt: skip
BATCH_GAPS = ["", " ", " ", "\n", ", ", ". ", "\u200b", " — "]


@st.composite
def batch_texts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(BATCH_PIECES), min_size=0, max_size=24))
    return "".join(piece + draw(st.sampled_from(BATCH_GAPS)) for piece in pieces)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(text=batch_texts(), references=st.booleans())
def test_tokens_are_the_same_whatever_the_batch_size(text: str, references: bool) -> None:
    """Batches split anywhere (a word whose case depends on the next batch, a side item or a
    word of an unspaced script that sends its batch down the match-by-match path) give the
    tokens and side items of one batch for the whole text."""
    whole_side: list[SideItem] = []
    whole = _rows(text, whole_side, references, chunk=10_000)
    for chunk in (1, 2, 3, 5):
        side: list[SideItem] = []
        assert _rows(text, side, references, chunk=chunk) == whole
        assert side == whole_side


def _rows(text: str, side: list[SideItem], references: bool, chunk: int) -> list[Row]:
    return [
        row
        for columns in iter_columns(text, side, references=references, chunk=chunk)
        for row in columns.rows()
    ]


@pytest.mark.parametrize(
    ("text", "sensitive"),
    [
        ("the 5 m mark", ["m"]),
        ("A+ grade", ["A"]),
        ("400 Mb link", ["Mb"]),
        ("WORDS IN CAPITALS", []),
        ("the MB limit", ["MB"]),
        ("a mW laser", ["mW"]),
        ("The Hello world", []),
    ],
)
def test_case_is_settled_across_batch_edges(text: str, sensitive: list[str]) -> None:
    """The word at a batch's end is settled once the next batch shows the token after it."""
    for chunk in (1, 2, 1024):
        rows = _rows(text, [], True, chunk)
        assert [row[0] for row in rows if row[7]] == sensitive


def test_the_description_cache_is_bounded_and_keeps_what_is_still_in_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the cache is full its entries become the old generation: a description still in use
    comes back from there, the same as worked out anew, and the cache never holds more than
    two generations."""
    from verifier import tokenizer

    monkeypatch.setattr(tokenizer, "_DESCRIPTIONS_LIMIT", 4)
    cache = tokenizer._TwinDescriptions()
    work_out = tokenizer._TwinDescriptions._work_out
    worked_out: list[str] = []

    def spy(self: tokenizer._TwinDescriptions, raw: str) -> tokenizer.Description:
        worked_out.append(raw)
        return work_out(self, raw)

    monkeypatch.setattr(tokenizer._TwinDescriptions, "_work_out", spy)
    words = ["alpha", "Beta", "MB", "x", "5", "…"]
    for word in words:
        assert cache[word] == work_out(cache, word)
    assert len(cache) <= 4
    assert cache["alpha"] == work_out(cache, "alpha")
    assert worked_out == words  # "alpha" came back from the old generation
    for word in [f"w{number}" for number in range(20)]:
        cache[word]
        assert len(cache) <= 4
