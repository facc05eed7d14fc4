"""The one-off shortcut (``verifier.oneoff``): it tokenizes only windows of the source, and its
answer must always equal ``prepare(source).check``, however far apart an occurrence's tokens
stand in the source, and whichever of the quote's tokens it searches for."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verifier.matcher
import verifier.oneoff
from verifier import check_quote, prepare
from verifier.code import CodeSpans
from verifier.oneoff import MAX_HITS, WindowAnswer, read_windows
from verifier.tokenizer import Token, scan_text

PROFILE = settings(max_examples=300, derandomize=True, deadline=None)
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "7", "42", "3.5"]
FILLER = "Some other words stand here, and more of them there to pad the text out."


@contextmanager
def prepared_lengths() -> Iterator[list[int]]:
    """The length of every text prepared while the block runs: whole sources and windows."""
    lengths: list[int] = []
    original = verifier.matcher.prepare
    original_window = verifier.matcher._prepare_window

    def spy(source: str, code: CodeSpans | None = None) -> verifier.matcher.PreparedSource:
        lengths.append(len(source))
        return original(source, code)

    def window_spy(source: str, code: CodeSpans) -> verifier.matcher.PreparedSource:
        lengths.append(len(source))
        return original_window(source, code)

    verifier.matcher.prepare = spy
    verifier.matcher._prepare_window = window_spy
    try:
        yield lengths
    finally:
        verifier.matcher.prepare = original
        verifier.matcher._prepare_window = original_window


@st.composite
def stretched_sources(draw: st.DrawFn) -> tuple[str, str]:
    """A quote of a few words, and a source holding it once as written and more times with its
    tokens pulled apart by long runs of whitespace, reference marks and emoji, among filler and
    near misses."""
    quote_words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=5))
    gap = st.one_of(
        st.integers(1, 120).map(lambda length: " " * length),
        st.text(alphabet=" \n\t", min_size=1, max_size=9),
        st.sampled_from(
            [" [1] ", "[2] ", " [note 3] ", "[clarification needed] ", " 👍 ", " \n\n "]
        ),
    )
    segments = [" ".join(quote_words)]  # found once as written: the others must be counted
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["quote", "stretched", "filler", "near"]))
        if kind == "quote":
            segments.append(" ".join(quote_words))
        elif kind == "stretched":
            segments.append(quote_words[0] + "".join(draw(gap) + word for word in quote_words[1:]))
        elif kind == "near":
            dropped = draw(st.integers(0, len(quote_words) - 1))
            segments.append(" ".join(quote_words[:dropped] + quote_words[dropped + 1 :]))
        else:
            segments.append(FILLER)
    separator = draw(st.sampled_from([" ", ". ", "\n\n", " x "]))
    return " ".join(quote_words), separator.join(segments)


@PROFILE
@given(case=stretched_sources())
def test_one_off_equals_the_prepared_check_however_stretched(case: tuple[str, str]) -> None:
    quote, source = case
    assert check_quote(quote, source) == prepare(source).check(quote)


def test_an_occurrence_stretched_past_its_window_is_still_counted() -> None:
    source = f"alpha beta gamma. {FILLER} alpha{' ' * 60}beta gamma. {FILLER}"
    result = check_quote("alpha beta gamma", source)
    assert result == prepare(source).check("alpha beta gamma")
    assert result.matches == 2
    assert result.spans[1] == (source.rindex("alpha"), source.rindex("gamma") + len("gamma"))


def test_reference_marks_between_tokens_do_not_hide_an_occurrence() -> None:
    marks = "".join(f"[{number}]" for number in range(1, 30))
    source = f"{FILLER} alpha beta gamma. {FILLER} alpha beta{marks} gamma. {FILLER}"
    result = check_quote("alpha beta gamma", source)
    assert result == prepare(source).check("alpha beta gamma")
    assert result.matches == 2


def test_a_rarer_token_is_searched_when_the_longest_is_too_common() -> None:
    common = " ".join(["frequentword"] * (MAX_HITS + 10))
    source = f"{common}. The rare 42 frequentword stands once. {common}."
    quote = "rare 42 frequentword stands"
    with prepared_lengths() as lengths:
        result = check_quote(quote, source)
    assert result.found
    assert result == prepare(source).check(quote)
    assert lengths
    assert max(lengths) < len(source) / 10  # windows only, never the whole source


def test_a_changed_quote_reads_only_windows_for_its_closest_passage() -> None:
    padding = f"{FILLER} " * 40
    source = f"{padding}The rare 42 word stands once. {padding}"
    quote = "The rare 43 word stands"
    with prepared_lengths() as lengths:
        result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert result.closest is not None
    assert result.closest.text == "The rare 42 word stands"
    assert lengths
    assert max(lengths) < len(source) / 10  # windows only, never the whole source


def test_a_changed_quotes_passage_is_lined_up_in_its_anchors_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The anchor's windows are read wide enough for the alignment of a closest passage in
    them, so a quote with a word changed is not read again around its passage."""
    windows: list[str] = []
    original = verifier.matcher._prepare_window

    def window_spy(text: str, code: CodeSpans) -> verifier.matcher.PreparedSource:
        windows.append(text)
        return original(text, code)

    monkeypatch.setattr(verifier.matcher, "_prepare_window", window_spy)
    padding = f"{FILLER} " * 20
    sentence = "The committee approved the northern railway extension after a long public hearing."
    source = f"{padding}{sentence} {padding}Trains run on the southern line. {padding}"
    quote = "committee approved the southern railway extension after a long public hearing"
    result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert result.closest is not None
    assert result.closest.text.startswith("committee approved the northern railway")
    assert sum("committee approved" in window for window in windows) == 1


@pytest.mark.parametrize(
    ("quote", "found"),
    [
        ("the committee approved the northern railway extension after a long", True),
        ("The Committee approved the northern railway extension after a long", True),
        ("the committee approved the southern railway extension after a long", False),
        ("the committee approved the northern  railway extension after a long", True),
    ],
)
def test_a_quote_written_as_in_the_source_reads_a_window_no_wider_than_it_needs(
    quote: str, found: bool
) -> None:
    """A quote the source holds as written (but for the case of ASCII letters) is all but
    certainly there: the window around its anchor is not widened for lining up a closest
    passage.  One written otherwise (a word changed, or two spaces) is read wide."""
    padding = f"{FILLER} " * 20
    sentence = "The committee approved the northern railway extension after a long hearing."
    source = f"{padding}{sentence} {padding}"
    with prepared_lengths() as lengths:
        result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert result.found is found
    narrow = len(quote) + 2 * verifier.oneoff.MARGIN + 2 * len("there ") + len("x ")
    written = quote.lower() in source.lower()
    assert (max(lengths) <= narrow) is written


def test_a_quote_with_two_tokens_found_nowhere_reads_the_whole_source() -> None:
    source = f"{FILLER} The rare 42 word stands once. {FILLER}"
    quote = "The rare 43 wordiest stands"  # its longest token is the first searched: nowhere
    # not there (two tokens found nowhere), but only the whole source tells the closest passage
    assert read_windows(quote, scan_text(quote), source, prepare) == WindowAnswer((), None)
    assert check_quote(quote, source) == prepare(source).check(quote)


@contextmanager
def searched_tokens() -> Iterator[list[str]]:
    """The text of every token the one-off check searches the source for while the block runs."""
    texts: list[str] = []
    original = verifier.oneoff._search

    def spy(token: Token, lowered: str, unliteral: Any, most: int) -> list[int] | None:
        texts.append(token.text)
        return original(token, lowered, unliteral, most)

    verifier.oneoff._search = spy
    try:
        yield texts
    finally:
        verifier.oneoff._search = original


def test_the_search_stops_at_a_token_found_once_and_the_window_there_tells() -> None:
    source = f"{FILLER} The rare 42 word stands once. {FILLER} The word rare."
    quote = "The rare 42 word stands"
    with searched_tokens() as texts:
        result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert result.found
    assert texts == ["stands"]  # the longest, found once: no other token is searched


def test_a_quote_not_there_after_the_search_stopped_searches_the_rest() -> None:
    source = f"{FILLER} The rare 42 word stands once. {FILLER} The word rare 7."
    quote = "The rare 7 word stands"  # "stands" is found once; every other token is somewhere
    with searched_tokens() as texts:
        result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert result.closest is not None
    assert result.closest.text == "The rare 42 word stands"
    assert texts[0] == "stands"
    assert "7" in texts  # searched once the window there showed the quote is not there


def test_tokens_found_nowhere_after_the_search_stopped_are_searched_for_the_closest() -> None:
    source = f"{FILLER} The rare 42 word stands once. {FILLER}"
    quote = "The rare 43 wordy stands"  # "stands" is found once, "wordy" and "43" nowhere
    with searched_tokens() as texts:
        result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert result.closest is not None
    assert result.closest.text == "The rare 42 word stands"
    # the window around "stands" showed the quote is not there; then every token was searched
    assert texts == ["stands", "wordy", "rare", "The", "43"]


CHANGED_WORDS = ["ab", "cd", "ef", "7", "gh", "ij", "kl", "42", "mn", "op"]


@st.composite
def changed_quotes(draw: st.DrawFn) -> tuple[str, str]:
    """A source of few distinct words, so that passages differing in one word abound and tie,
    and a quote copied from it with one word replaced by one found nowhere (sometimes two), and
    sometimes another by a word found elsewhere."""
    words = draw(st.lists(st.sampled_from(CHANGED_WORDS), min_size=60, max_size=200))
    gaps = st.sampled_from([" "] * 16 + ["\n", ", ", " " * 50, "[1] ", " 👍 "])
    source = words[0] + "".join(draw(gaps) + word for word in words[1:])
    first = draw(st.integers(0, len(words) - 2))
    quote_words = words[first : first + draw(st.integers(2, 7))]
    if draw(st.booleans()):  # a second change, to a word found elsewhere
        quote_words[draw(st.integers(0, len(quote_words) - 1))] = draw(
            st.sampled_from(CHANGED_WORDS)
        )
    for absent in ["zz", "yy"][: draw(st.sampled_from([1, 1, 1, 2]))]:
        quote_words[draw(st.integers(0, len(quote_words) - 1))] = absent
    return " ".join(quote_words), source


@PROFILE
@given(case=changed_quotes())
def test_a_changed_quotes_closest_passage_equals_the_prepared_checks(case: tuple[str, str]) -> None:
    quote, source = case
    assert check_quote(quote, source) == prepare(source).check(quote)


CODE_WORDS = ["f(x)", "a_1[0]", "h", "H", "(x,)", "[x;", "n]", "a{4,}b", "Type[T]", "%p", "12"]


@st.composite
def code_quotes(draw: st.DrawFn) -> tuple[str, str]:
    """A source of code-like words (issue 23: glued commas, indexes, one-letter codes) and a
    quote copied from it, sometimes with one word changed to another or to one found nowhere."""
    words = draw(st.lists(st.sampled_from(CODE_WORDS), min_size=40, max_size=120))
    gaps = st.sampled_from([" "] * 8 + ["\n", "\t", ", ", "; ", " " * 30, "[1] "])
    source = words[0] + "".join(draw(gaps) + word for word in words[1:])
    first = draw(st.integers(0, len(words) - 2))
    quote_words = words[first : first + draw(st.integers(2, 6))]
    change = draw(st.sampled_from(["none", "other", "absent"]))
    if change != "none":
        replacement = draw(st.sampled_from(CODE_WORDS)) if change == "other" else "zz"
        quote_words[draw(st.integers(0, len(quote_words) - 1))] = replacement
    return " ".join(quote_words), source


@PROFILE
@given(case=code_quotes())
def test_code_like_quotes_agree_with_the_prepared_check(case: tuple[str, str]) -> None:
    quote, source = case
    assert check_quote(quote, source) == prepare(source).check(quote)


@pytest.mark.parametrize(
    "quote",
    ["The rare 43 word stands", "rare 42 word stands twice", "The rare 42 word"],
)
def test_changed_and_found_quotes_agree_with_the_prepared_check(quote: str) -> None:
    source = f"{FILLER} The rare 42 word stands once. {FILLER} 43 twice."
    assert check_quote(quote, source) == prepare(source).check(quote)


@pytest.mark.parametrize("mark", ["[clarification needed]", "[better source needed]", "[note 4]"])
@pytest.mark.parametrize("padding", range(0, 24, 3))
def test_a_window_never_starts_inside_a_reference_mark(mark: str, padding: int) -> None:
    """A mark with a space read from its middle would be tokens ("needed", "]"), which would
    count toward the tokens a window must hold before a hit: an occurrence reaching past the
    window's start would be missed."""
    stretched = f"ox{mark} by{' ' * padding} gamma"
    source = f"{FILLER} ox by gamma. {FILLER} {stretched}. {FILLER}"
    result = check_quote("ox by gamma", source)
    assert result == prepare(source).check("ox by gamma")
    assert result.matches == 2


@pytest.mark.parametrize("mark", ["[according to whom?]", "[better source needed]", "[note 4]"])
@pytest.mark.parametrize("padding", range(0, 40, 3))
def test_a_window_never_ends_inside_a_reference_mark(mark: str, padding: int) -> None:
    stretched = f"gamma{' ' * padding} by{mark} ox"
    source = f"{FILLER} gamma by ox. {FILLER} {stretched}. {FILLER}"
    result = check_quote("gamma by ox", source)
    assert result == prepare(source).check("gamma by ox")
    assert result.matches == 2


@pytest.mark.parametrize(
    ("quote", "written", "folded"),
    [
        ("on pages 10-20 here", "10-20", "10\u201320"),  # every dash is "-"
        ("on pages 10-20 here", "10-20", "10\u221220"),  # and so is the minus sign
        ("it costs 1'000 here", "1'000", "1\u2019000"),  # ’ in a number is '
        ("on the strasse here", "strasse", "stra\u00dfe"),  # ß folds to ss
        ("on the strasse here", "strasse", "STRA\u1e9eE"),  # and so does ẞ
    ],
)
def test_a_token_that_folding_joins_to_other_spellings_is_never_the_anchor(
    quote: str, written: str, folded: str
) -> None:
    """A token is searched for as written only where no other spelling has its key: an
    occurrence spelled otherwise would be missed by the search, so miscounted."""
    other_words = " ".join(word for word in quote.split() if word != written)
    common = f"{other_words}. " * 5  # every other token of the quote is more common
    source = f"{common}{quote}. {FILLER} {quote.replace(written, folded)}. {common}"
    result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert result.matches == 2


def test_only_sharp_s_folds_to_ascii_among_normalized_characters() -> None:
    """The word rule above rests on this: of the characters NFKC leaves alone, only ß and ẞ
    case-fold to ASCII (into "ss"); a new Unicode version that added one would need it too."""
    folding_to_ascii = [
        char
        for char in map(chr, range(0x80, 0x110000))
        if not 0xD800 <= ord(char) <= 0xDFFF
        and unicodedata.normalize("NFKC", char) == char
        and char.casefold().isascii()
    ]
    assert folding_to_ascii == ["\u00df", "\u1e9e"]


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("ab cd zz", f"{FILLER} " * 5 + "ab cd"),  # the passage would run past the end
        ("zz cd ef", "cd ef " + f"{FILLER} " * 5),  # or before the start
        ("ab cd zz", "ab cd " + f"{FILLER} " * 5 + "ab cd"),
    ],
)
def test_a_closest_passage_never_runs_past_an_end_of_the_source(quote: str, source: str) -> None:
    assert check_quote(quote, source) == prepare(source).check(quote)
