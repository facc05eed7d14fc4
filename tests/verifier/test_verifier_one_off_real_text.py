"""The one-off shortcut on real text (issue 25): the characters real pages have here and there (a
no-break space, "…", letter-like symbols, ligatures, full-width letters, invisible characters,
hyphenated line breaks, emoji, CJK, RTL, reference marks, runs of symbols) cost the windows
around them, never the shortcut for the whole source, and never the answer: it must equal
``prepare(source).check`` (found or not, matches, spans, the closest passage)."""

from __future__ import annotations

import re
import string
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.verifier.test_verifier_one_off import FILLER, prepared_lengths
from verifier import check_quote, prepare
from verifier.oneoff import (
    _LETTER_BEFORE,
    _LOWER_AFTER,
    IGNORABLE,
    NFKC_CHANGES,
    _ascii_lowered,
    _folds_to,
    _Unliteral,
)
from verifier.tokenizer import INVISIBLE

PROFILE = settings(max_examples=400, derandomize=True, deadline=None)

# Each word, and the ways a source may spell it that the tokenizer reads as the same token but
# that a search for its text does not find.
SPELLINGS = {
    "final": [
        "ﬁnal",
        "ｆｉｎａｌ",
        "fi\u200bnal",
        "fi\u00adnal",
        "fi-\nnal",
        "FINAL",
        "fi\u2060nal",
    ],
    "office": ["oﬃce", "of-\n  fice", "oﬀice"],
    "zeta": ["ℤeta", "ｚｅｔａ", "z\ufeffeta"],
    "42": ["４２", "42"],
    "3.5": ["３.５", "3.5"],
    "kilo": ["\u212aILO", "kilo"],
    "ab": ["ａb", "a\u034fb"],
    "cd": ["cd"],
    "s1": ["ſ1", "s１"],
}
WORDS = list(SPELLINGS)
NOISE = [
    "\u00a0", "…", "ℤ", "ℝ", "😀", "👩\u200d💻", "中文", "日本語の", "שלום", "مرحبا", "\u200f",
    "[1]", "[note 3]", "※", "──────", "--snip--\n", "\u200b", "½", "x²", "CO₂", "｡", "\u3000",
    "—", "−5", "«", "»", "“", "”", "...", "?…", ":", "ﬁ", "-\n", "a-\nB", "é", "\t", "\n\n",
]  # fmt: skip


@st.composite
def real_like(draw: st.DrawFn) -> tuple[str, str]:
    """A quote of a few words, and a source holding it, and near misses, with the words spelled
    in any of their ways and noise between them; the quote is copied, or has one word changed
    to another or to one found nowhere, or dropped."""
    quote_words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=6))
    gap = st.one_of(st.just(" "), st.just(" "), st.sampled_from(NOISE).map(lambda n: f" {n} "))
    segments = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["quote", "spelled", "filler", "noise", "near"]))
        words = list(quote_words)
        if kind == "near":
            words[draw(st.integers(0, len(words) - 1))] = draw(st.sampled_from(WORDS))
        if kind in ("spelled", "near"):
            words = [draw(st.sampled_from(SPELLINGS[word])) for word in words]
        if kind == "filler":
            segments.append(FILLER)
        elif kind == "noise":
            segments.append("".join(draw(st.lists(st.sampled_from(NOISE), max_size=6))))
        else:
            segments.append(words[0] + "".join(draw(gap) + word for word in words[1:]))
    separator = draw(st.sampled_from([" ", ". ", "\n", " \u00a0", " … "]))
    change = draw(st.sampled_from(["copied", "copied", "other", "absent", "dropped"]))
    if change in ("other", "absent"):
        quote_words[draw(st.integers(0, len(quote_words) - 1))] = (
            draw(st.sampled_from(WORDS)) if change == "other" else "zz"
        )
    elif change == "dropped" and len(quote_words) > 2:
        del quote_words[draw(st.integers(0, len(quote_words) - 1))]
    return " ".join(quote_words), separator.join(segments)


@PROFILE
@given(case=real_like())
def test_one_off_equals_the_prepared_check_on_real_like_text(case: tuple[str, str]) -> None:
    quote, source = case
    assert check_quote(quote, source) == prepare(source).check(quote)


@PROFILE
@given(case=real_like(), padding=st.integers(0, 3))
def test_one_off_equals_the_prepared_check_among_long_filler(
    case: tuple[str, str], padding: int
) -> None:
    """The same with filler around, so that windows are smaller than the source and their edges
    fall anywhere."""
    quote, source = case
    source = f"{FILLER} " * padding + source + f" {FILLER}" * (3 - padding)
    assert check_quote(quote, source) == prepare(source).check(quote)


@pytest.mark.parametrize("noise", ["\u00a0", "…", "ℤ", "\u200b", "ﬁ", "co-\noperate", "--snip--\n"])
@pytest.mark.parametrize("quote", ["The rare 42 word stands once", "The rare 43 word stands"])
def test_a_character_far_away_does_not_send_the_check_to_the_whole_source(
    noise: str, quote: str
) -> None:
    """One such character anywhere used to switch the shortcut off for the whole source."""
    padding = f"{FILLER} " * 40
    source = f"{padding}{noise} {padding}The rare 42 word stands once. {padding}{noise}"
    with prepared_lengths() as lengths:
        result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert lengths
    assert max(lengths) < len(source) / 10


@pytest.mark.parametrize(
    ("quote", "spelled"),
    [
        ("the final word here", "the ﬁnal word here"),
        ("the final word here", "the fi\u200bnal word here"),
        ("the final word here", "the fi-\nnal word here"),
        ("the final word here", "the ｆｉｎａｌ word here"),
        ("costs 42 units here", "costs ４２ units here"),
        ("ends at a:b here", "ends at a：b here"),
    ],
)
def test_an_occurrence_spelled_otherwise_is_found_and_counted(quote: str, spelled: str) -> None:
    """The anchor's text is not in such an occurrence: the place that spells it otherwise is a
    hit too, so the occurrence is read and counted, and a quote changed there is not told
    absent."""
    common = " ".join(word for word in quote.split()[1:] if word != "final") + ". "
    source = f"{common * 5}{quote}. {FILLER} {spelled}. {common * 5}"
    result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert result.matches == 2
    alone = f"{common * 5}{FILLER} {spelled}. {common * 5}"
    assert check_quote(quote, alone) == prepare(alone).check(quote)
    assert check_quote(quote, alone).found


@pytest.mark.parametrize("padding", range(0, 60, 2))
@pytest.mark.parametrize("quote", ["the sum is 5", "is 5 mil", "lion of them"])
def test_a_window_never_cuts_a_word_joined_across_a_line_break(padding: int, quote: str) -> None:
    """ "mil-⏎lion" is the one word "million": a window cut at its line break would read "5"
    before "mil", which does not continue the number, and find "the sum is 5"."""
    source = f"{FILLER} the sum is 5{' ' * padding} mil-\nlion of them. {FILLER} the sum is 5 x"
    assert check_quote(quote, source) == prepare(source).check(quote)


def test_the_folded_class_holds_every_character_nfkc_changes_but_whitespace() -> None:
    """Checked against the running Python: a character it missed would be a place where a token
    is spelled otherwise unseen."""
    changed = [
        char
        for char in map(chr, range(0x110000))
        if not 0xD800 <= ord(char) <= 0xDFFF
        and not char.isspace()
        and unicodedata.normalize("NFKC", char) != char
    ]
    assert [char for char in changed if not NFKC_CHANGES.fullmatch(char)] == []


def test_the_ignorable_class_holds_every_invisible_character() -> None:
    """The tokenizer drops invisible characters inside words: each is a place too."""
    invisible = re.compile(f"[{INVISIBLE}]")
    every = [char for char in map(chr, range(0x110000)) if invisible.fullmatch(char)]
    assert len(every) > 100
    assert [char for char in every if not IGNORABLE.fullmatch(char)] == []


# The pieces a page is built of for the places' oracle: the hyphens, spaces and line breaks a
# joined word is made of, letters of either case, and characters NFKC changes or that are
# invisible among plain ASCII and other non-ASCII text.
PLACE_PIECES = [
    "-", "\u2010", "\u00ad", " ", "\t", "\r", "\n", "a", "B", "é", "ﬁ", "ｆ", "…", "\u00a0",
    "\u200b", "\u2060", "\ufeff", "ℤ", "中", "😀", "\u3000", "x²", "word ",
]  # fmt: skip
_FORWARD_JOIN = re.compile(r"[\-\u2010\u00ad][^\S\n]*\r?\n[^\S\n]*")


def whole_page_places(
    source: str,
) -> tuple[list[tuple[int, int]], list[int], list[tuple[int, frozenset[str]]]]:
    """The places as the tokenizer's rules define them, by searches of the whole page: the joins
    read forward from the hyphen, every default-ignorable character and every one NFKC changes."""
    joins = [
        match.span()
        for match in _FORWARD_JOIN.finditer(source)
        if match.start() > 0
        and _LETTER_BEFORE.match(source, match.start() - 1)
        and _LOWER_AFTER.match(source, match.end())
    ]
    ignorable = [match.start() for match in IGNORABLE.finditer(source)]
    folded = [
        (match.start(), gives)
        for match in NFKC_CHANGES.finditer(source)
        if (gives := _folds_to(match.group()))
    ]
    return joins, sorted([start for start, _ in joins] + ignorable), folded


@settings(max_examples=1500, derandomize=True, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(PLACE_PIECES), max_size=40),
    plain=st.integers(0, 4000),
)
def test_places_equal_the_whole_page_searches(pieces: list[str], plain: int) -> None:
    """Whether the non-ASCII characters are told one by one (few of them) or by searching the
    page (many), and the joins found with either hyphen's pattern, the places are the same."""
    source = "".join(pieces) + "x" * plain + "".join(reversed(pieces))
    places = _Unliteral(source)
    assert (places.joins, places.anywhere, places.folded) == whole_page_places(source)


def test_no_ascii_character_is_a_place() -> None:
    """Only the non-ASCII characters of a page are told one by one."""
    ascii_text = "".join(map(chr, range(128)))
    assert IGNORABLE.search(ascii_text) is None
    assert NFKC_CHANGES.search(ascii_text) is None


_ASCII_CAPITALS = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


@settings(max_examples=1000, derandomize=True, deadline=None)
@given(text=st.text(st.characters(exclude_categories=())))
def test_the_searched_text_lowers_ascii_capitals_only(text: str) -> None:
    """Character for character, lone surrogates included: a hit's place is its place in the
    source."""
    assert _ascii_lowered(text) == text.translate(_ASCII_CAPITALS)


def test_a_character_that_lowers_to_ascii_is_a_place() -> None:
    """The search reads only ASCII capitals as lower case: a non-ASCII character that
    ``str.lower`` maps to an ASCII letter (the Kelvin sign) must be a place, so that a token
    spelled with it is still a hit.  The one exception, "İ", lowers to "i" and a combining dot,
    which no ASCII anchor's key holds."""
    lowering_to_ascii = [
        char
        for char in map(chr, range(0x80, 0x110000))
        if not 0xD800 <= ord(char) <= 0xDFFF and any(low.isascii() for low in char.lower())
    ]
    assert "\u212a" in lowering_to_ascii
    places = [char for char in lowering_to_ascii if NFKC_CHANGES.fullmatch(char)]
    assert sorted(set(lowering_to_ascii) - set(places)) == ["\u0130"]


def test_places_are_found_in_a_source() -> None:
    source = "a\u00a0b … ﬁne x\u200by co-\noperate 5-\n6 ｆ"
    places = _Unliteral(source)
    assert places.joins == [(source.index("-\no"), source.index("operate"))]
    assert places.anywhere == sorted([source.index("\u200b"), source.index("-\no")])
    assert [source[at] for at, _ in places.folded] == ["…", "ﬁ", "ｆ"]
    fine = places.places_for("fine")
    assert fine == [*places.anywhere, source.index("ﬁ"), source.index("ｆ")]
    assert places.places_for("42") == places.anywhere
    assert places.confirmed(fine, "fine") == [source.index("ﬁ")]
    assert places.confirmed(fine, "cooperate") == [source.index("co-")]
    assert places.confirmed(fine, "xy") == [source.index("x\u200b")]
    plain = _Unliteral("plain ascii text")
    assert (plain.anywhere, plain.folded, plain.joins) == ([], [], [])
