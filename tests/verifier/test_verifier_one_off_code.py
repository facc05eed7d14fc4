"""The one-off shortcut on sources with code (``verifier.oneoff`` with code spans): its windows
are tokenized with the code spans inside them, and its answer must always equal
``prepare(source, code).check``, whether the code is backtick-delimited in the text or given as
``CodeSpans``, wherever a window's edge would fall, and whatever the quote changes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.verifier.test_verifier_one_off import prepared_lengths
from verifier import check_quote, prepare
from verifier.code import NO_CODE, CodeSpans

PROFILE = settings(max_examples=400, derandomize=True, deadline=None)
# Prose and code-like pieces: marks that code reads as gaps (a lone "," ";" "." ":"), marks it
# keeps ("::", ":="), an index that is a reference mark outside code, case, a ligature, an
# invisible character and a hyphenated line break (the places a token's key is not its text).
PIECES = [
    "alpha",
    "beta",
    "Gamma",
    "delta",
    "7",
    "42",
    "3.5",
    "self.items",
    "f(a, b)",
    "f(a,b)",
    "x: int",
    "a,b",
    "end.",
    "matrix[2]",
    "-> int",
    "| None",
    "key; value",
    "foo::bar",
    "x := 1",
    "ﬁle.txt",
    "zero\u200bwidth",
    "exam-\nple",
    "HTTP",
]
SEPARATORS = [" ", "  ", "\n", ", ", ". ", " ; ", "\n\n", " " * 20]


@st.composite
def chunks(draw: st.DrawFn) -> str:
    """A run of pieces, as prose or code is written."""
    pieces = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8))
    text = pieces[0]
    for piece in pieces[1:]:
        text += draw(st.sampled_from(SEPARATORS)) + piece
    return text


@st.composite
def code_sources(draw: st.DrawFn) -> tuple[str, CodeSpans]:
    """A source of chunks, each prose, inline backtick code, a fenced block, or code given as a
    span (as an extraction records ``<code>`` and ``<pre>``), and those given spans."""
    source = ""
    given_spans: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(2, 14))):
        if source:
            source += draw(st.sampled_from(SEPARATORS))
        chunk = draw(chunks())
        kind = draw(st.sampled_from(["prose", "prose", "ticks", "fence", "given"]))
        if kind == "ticks":
            source += f"`{chunk}`"
        elif kind == "fence":
            source += f"\n```\n{chunk}\n```\n"
        elif kind == "given":
            given_spans.append((len(source), len(source) + len(chunk)))
            source += chunk
        else:
            source += chunk
    return source, CodeSpans.merged(given_spans)


def _changed(draw: st.DrawFn, quote: str) -> str:
    """The quote, or the quote with one thing changed that code may or may not forgive."""
    change = draw(st.sampled_from(["none", "none", "case", "mark", "space", "word", "ticks"]))
    if change == "case" and re.search(r"[A-Za-z]", quote):
        at = draw(st.sampled_from([m.start() for m in re.finditer(r"[A-Za-z]", quote)]))
        return quote[:at] + quote[at].swapcase() + quote[at + 1 :]
    if change == "mark" and re.search(r"[,;.:]", quote):
        at = draw(st.sampled_from([m.start() for m in re.finditer(r"[,;.:]", quote)]))
        return quote[:at] + draw(st.sampled_from(["", " ", ",", "."])) + quote[at + 1 :]
    if change == "space" and " " in quote:
        at = draw(st.sampled_from([m.start() for m in re.finditer(" ", quote)]))
        return quote[:at] + draw(st.sampled_from(["", "  ", "\n"])) + quote[at + 1 :]
    if change == "word":
        words = quote.split(" ")
        at = draw(st.integers(0, len(words) - 1))
        words[at] = draw(st.sampled_from(["omega", "Alpha", "43", "f(a;b)"]))
        return " ".join(words)
    if change == "ticks":
        return quote.replace("`", "") if "`" in quote else f"`{quote}`"
    return quote


@st.composite
def code_cases(draw: st.DrawFn) -> tuple[str, str, CodeSpans]:
    """A source with code, its given spans, and a quote copied from it between two places of
    whitespace (so often starting or ending inside code), sometimes changed."""
    source, spans = draw(code_sources())
    cuts = [0, *(m.start() for m in re.finditer(r"\s", source)), len(source)]
    first = draw(st.integers(0, len(cuts) - 2))
    last = draw(st.integers(first + 1, min(first + 8, len(cuts) - 1)))
    quote = source[cuts[first] : cuts[last]].strip()
    return _changed(draw, quote) or "alpha", source, spans


@PROFILE
@given(case=code_cases())
def test_one_off_equals_the_prepared_check_with_code(case: tuple[str, str, CodeSpans]) -> None:
    quote, source, spans = case
    assert check_quote(quote, source, spans) == prepare(source, spans).check(quote)


@PROFILE
@given(case=code_cases())
def test_one_off_equals_the_prepared_check_with_backtick_code_only(
    case: tuple[str, str, CodeSpans],
) -> None:
    quote, source, _ = case
    assert check_quote(quote, source) == prepare(source).check(quote)


PADDING = "Some other words stand here, and more of them there to pad the text out. " * 40


SOURCE = f"{PADDING}Then call f(a, b) to read the rare value once. {PADDING}"
CALL = SOURCE.index("f(a, b)")


@pytest.mark.parametrize(
    ("quote", "found"),
    [
        ("call f(a, b) to read the rare value", True),
        ("call f(a,b) to read the rare value", True),  # found with its lone comma as a gap
        ("f(a, b) to read", True),
        ("call f(a, c) to read the rare value", False),
        ("call f(a, b) to read the rare values", False),
    ],
)
def test_a_source_with_code_is_read_in_windows(quote: str, found: bool) -> None:
    code = CodeSpans(((CALL, CALL + len("f(a, b)")),))
    with prepared_lengths() as lengths:
        result = check_quote(quote, SOURCE, code)
    assert result == prepare(SOURCE, code).check(quote)
    assert result.found == found
    assert lengths
    assert max(lengths) < len(SOURCE) / 10  # windows only, never the whole source


@pytest.mark.parametrize("quote", ["to read the rare value", "to read the rare values"])
def test_a_source_with_backtick_code_is_read_in_windows(quote: str) -> None:
    source = SOURCE.replace("f(a, b)", "`f(a, b)`")
    with prepared_lengths() as lengths:
        result = check_quote(quote, source)
    assert result == prepare(source).check(quote)
    assert max(lengths) < len(source) / 10


@pytest.mark.parametrize(
    "quote",
    [
        "call `f(a, b)` to read",  # a backtick: checked in full
        "call f(a b) to read",  # refused by a rule of code: checked in full
        "call F(a, b) to read",
        "call f(a, b",
        "a, b) to read the rare",
    ],
)
def test_quotes_windows_cannot_answer_agree_with_the_prepared_check(quote: str) -> None:
    code = CodeSpans(((CALL, CALL + len("f(a, b)")),))
    assert check_quote(quote, SOURCE, code) == prepare(SOURCE, code).check(quote)


@pytest.mark.parametrize("padding", range(0, 60, 7))
def test_a_window_never_cuts_a_code_span(padding: int) -> None:
    block = "first line of code\n" + " ".join(["x := 1;"] * 12) + "\nrare_name(a, b) -> int"
    source = f"{PADDING}{' ' * padding}\n```\n{block}\n```\nthe rare words after it. {PADDING}"
    for quote in ["rare_name(a, b) -> int", "rare_name(a, b)", "x := 1; x := 1", "1; x"]:
        assert check_quote(quote, source) == prepare(source).check(quote)


def test_window_code_is_the_whole_sources_not_the_windows_own_backticks() -> None:
    # The first backtick opens a pair that the whole source closes far away: a window around
    # "rare" sees only the middle two, which would pair the other way.
    source = f"`{PADDING} a` rare `b {PADDING}`"
    for quote in ["a` rare `b", "a rare b", "rare"]:
        assert check_quote(quote, source) == prepare(source).check(quote)
    assert check_quote("rare", source, NO_CODE) == prepare(source).check("rare")
