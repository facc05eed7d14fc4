"""Text-fragment links (``#:~:text=``), checked against the WICG spec.

The parser and the matcher below are written from the spec
(https://wicg.github.io/scroll-to-text-fragment/, "parse a text directive" and "find a range
from a text directive") and share no search code with ``verifier.text_fragments``; they share
only what stands for the browser's locale: which characters compare equal
(``fold``) and where words end (``is_word_boundary``).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from verifier.text_fragments import (
    EXACT_LIMIT,
    fold,
    is_word_boundary,
    percent_encode,
    text_directive,
    text_fragment,
    word_span,
)

PROFILE = settings(max_examples=300, derandomize=True, deadline=None)

# ValidTextDirective, from the spec's grammar.
STRING = r"(?:[a-zA-Z0-9!$'()*+./:;=?@_~]|%[0-9A-F]{2})+"
VALID = re.compile(rf"#:~:text=(?:{STRING}-,)?{STRING}(?:,{STRING})?(?:,-{STRING})?")


# -- the reference: parse and match as the spec says, over one string -------------------------


def parse(fragment: str) -> tuple[str | None, str, str | None, str | None]:
    """(prefix, start, end, suffix), percent-decoded as UTF-8 ("parse a text directive")."""
    assert fragment.startswith("#:~:text=")
    tokens = fragment.removeprefix("#:~:text=").split(",")
    prefix = suffix = end = None
    if tokens[0].endswith("-"):
        prefix = tokens.pop(0)[:-1]
    if tokens[-1].startswith("-"):
        suffix = tokens.pop()[1:]
    assert 1 <= len(tokens) <= 2
    start = tokens[0]
    end = tokens[1] if len(tokens) == 2 else None
    for term in (prefix, start, end, suffix):
        assert term is None or (term and "-" not in term)

    def decode(term: str | None) -> str | None:
        return None if term is None else unquote(term, encoding="utf-8", errors="strict")

    return decode(prefix), str(decode(start)), decode(end), decode(suffix)


def reference_find(text: str, fragment: str) -> tuple[int, int] | None:
    prefix, start, end, suffix = parse(fragment)
    folded = fold(text)

    def at(query: str, index: int, *, word_start: bool, word_end: bool) -> bool:
        wanted = fold(query)
        return (
            folded.startswith(wanted, index)
            and (not word_start or is_word_boundary(text, index))
            and (not word_end or is_word_boundary(text, index + len(wanted)))
        )

    def skip_space(index: int) -> int:
        while index < len(text) and text[index].isspace():
            index += 1
        return index

    must_end_at_word = end is not None or suffix is None
    # Every place the match may start, in document order.
    if prefix is None:
        starts = [
            i for i in range(len(text)) if at(start, i, word_start=True, word_end=must_end_at_word)
        ]
    else:
        starts = []
        for i in range(len(text)):
            if at(prefix, i, word_start=True, word_end=False):
                after = skip_space(i + len(prefix))
                if after < len(text) and at(
                    start, after, word_start=False, word_end=must_end_at_word
                ):
                    starts.append(after)
    for first in starts:
        last = first + len(start)
        while True:
            if end is not None:
                # the next instance of textEnd, searched from where the last one ended
                nexts = [
                    j
                    for j in range(last, len(text))
                    if at(end, j, word_start=True, word_end=suffix is None)
                ]
                if not nexts:
                    return None
                last = nexts[0] + len(end)
            if suffix is None or at(suffix, skip_space(last), word_start=False, word_end=True):
                return first, last
            if end is None:
                break
    return None


def visible(text: str, start: int, end: int) -> bool:
    return any(not c.isspace() for c in text[start:end])


# -- strategies --------------------------------------------------------------------------------

# Few words, many repeats: most quotes are ambiguous and need context to land.
WORDS = [
    "a",
    "A",
    "ab",
    "b-c",
    "x,y",
    "R&D",
    "café",
    "cafe",
    "über",
    "1,000",
    "it's",
    "日本語",
    "—",
]
SEPARATORS = [" ", " ", " ", "  ", ", ", ". ", "\n", "\t", " (", ") "]


@st.composite
def repetitive_text(draw: st.DrawFn) -> str:
    count = draw(st.integers(1, 40))
    pieces = []
    for _ in range(count):
        pieces += [draw(st.sampled_from(WORDS)), draw(st.sampled_from(SEPARATORS))]
    return "".join(pieces[:-1])


@st.composite
def text_and_span(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> tuple[str, int, int]:
    text = draw(texts)
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, min(len(text), start + 400)))
    return text, start, end


def check_lands(text: str, start: int, end: int) -> None:
    """The property, whole: either no directive can single the quote out, or the fragment is
    valid syntax, parses back to strings of the text, and lands on the quote's words."""
    assume(visible(text, start, end))
    first, last = word_span(text, start, end)
    try:
        fragment = text_fragment(text, start, end)
    except ValueError as error:
        refused = str(error)
        fragment = ""
    else:
        refused = ""
    if refused:  # the only refusal of a span with visible text
        assert "no text directive selects" in refused
        return
    assert VALID.fullmatch(fragment), fragment
    for term in parse(fragment):
        assert term is None or term in text
    assert reference_find(text, fragment) == (first, last), fragment


@PROFILE
@given(text_and_span(repetitive_text()))
def test_a_fragment_lands_on_the_quote_in_repetitive_text(case: tuple[str, int, int]) -> None:
    check_lands(*case)


@PROFILE
@given(text_and_span(st.text(max_size=200)))
def test_round_trip_for_any_unicode_text(case: tuple[str, int, int]) -> None:
    check_lands(*case)


@PROFILE
@given(text_and_span(st.text(alphabet=st.sampled_from("ab -,&\n"), max_size=60)))
def test_round_trip_with_syntax_characters(case: tuple[str, int, int]) -> None:
    check_lands(*case)


@PROFILE
@given(text_and_span(repetitive_text()))
def test_the_span_is_widened_to_whole_words_only(case: tuple[str, int, int]) -> None:
    text, start, end = case
    assume(visible(text, start, end))
    first, last = word_span(text, start, end)
    inner = text[start:end]
    stripped_start = start + len(inner) - len(inner.lstrip())
    stripped_end = end - (len(inner) - len(inner.rstrip()))
    assert first <= stripped_start
    assert last >= stripped_end
    assert is_word_boundary(text, first)
    assert is_word_boundary(text, last)
    # nothing but the words the quote touches is added
    assert not any(c.isspace() for c in text[first:stripped_start])
    assert not any(c.isspace() for c in text[stripped_end:last])


@PROFILE
@given(
    st.lists(
        st.text(alphabet="abcdefghijklmnop", min_size=12, max_size=12),
        min_size=2,
        max_size=30,
        unique=True,
    )
)
def test_a_unique_quote_is_textstart_alone(words: list[str]) -> None:
    text = " ".join(words)
    start = len(words[0]) + 1
    end = start + len(words[1])
    assert text_directive(text, start, end).end is None
    assert text_fragment(text, start, end) == "#:~:text=" + words[1]


# -- examples ----------------------------------------------------------------------------------


def test_syntax_characters_are_percent_encoded() -> None:
    assert percent_encode("R&D, x-y") == "R%26D%2C%20x%2Dy"
    assert percent_encode("café") == "caf%C3%A9"
    assert percent_encode("a.b!$'()*+/:;=?@_~") == "a.b!$'()*+/:;=?@_~"


def test_the_spec_example_gets_the_fewest_context_words_that_land() -> None:
    text = "here is an example text. this is an example text fragment"
    start = text.rindex("an example")
    fragment = text_fragment(text, start, start + len("an example"))
    assert fragment == "#:~:text=this%20is-,an%20example"
    # the spec's own directive for this text lands there too
    assert reference_find(text, "#:~:text=this%20is-,an%20example,-text%20fragment") == (
        start,
        start + len("an example"),
    )


def test_context_is_added_only_when_needed() -> None:
    text = "The first cache. The second cache. The third cache."
    start = text.index("second")
    assert text_fragment(text, start, start + 6) == "#:~:text=second"
    start = text.index("cache", text.index("second"))
    assert text_fragment(text, start, start + 5) == "#:~:text=second-,cache"


def test_a_quote_is_widened_to_whole_words() -> None:
    text = "Caching at the edge cuts origin load."
    start = text.index("ching")
    fragment = text_fragment(text, start, text.index("edge") + 2)
    assert fragment == "#:~:text=Caching%20at%20the%20edge"


def test_matching_ignores_case_so_an_earlier_capitalised_word_needs_context() -> None:
    text = "Origin shield. The origin serves one request."
    start = text.index("origin serves")
    assert text_fragment(text, start, start + 6) == "#:~:text=The-,origin"


def test_a_long_quote_is_a_range() -> None:
    words = [f"w{i:03d}" for i in range(100)]
    text = " ".join(words)
    assert len(text) > EXACT_LIMIT
    directive = text_directive(text, 0, len(text))
    assert (directive.start, directive.end) == ("w000 w001 w002", "w097 w098 w099")
    assert text_fragment(text, 0, len(text)) == "#:~:text=w000%20w001%20w002,w097%20w098%20w099"


def test_a_quote_across_a_line_break_is_a_range_of_its_two_blocks() -> None:
    text = "Heading one\nThe body of the section."
    fragment = text_fragment(text, 0, len(text))
    assert fragment == "#:~:text=Heading%20one,of%20the%20section."
    assert reference_find(text, fragment) == (0, len(text))


def test_prefix_may_come_from_the_previous_line() -> None:
    text = "alpha\nsame line\nbeta\nsame line"
    start = text.rindex("same")
    assert text_fragment(text, start, len(text)) == "#:~:text=beta-,same%20line"


def test_identical_lines_cannot_be_told_apart() -> None:
    text = "same\nsame\nsame"
    with pytest.raises(ValueError, match="no text directive selects"):
        text_fragment(text, len(text) - 4, len(text))


@pytest.mark.parametrize("span", [(1, 1), (3, 6), (-1, 2), (2, 99)])
def test_spans_with_nothing_to_link_are_refused(span: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match=r"span|visible"):
        text_fragment("abc   def", *span)
