"""Property tests for selectors: what describe_span writes, resolve finds again, in place."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import (
    QUOTE_FOUND,
    TextPositionSelector,
    TextQuoteSelector,
    describe_span,
    position_from_utf16,
    resolve,
)
from verifier.tokenizer import tokenize

PROFILE = settings(max_examples=150, derandomize=True, deadline=None)
WORDS = st.sampled_from(["cache", "Origin", "serves", "only", "𝑥", "naïve", "🚀", "ratio", "hit"])


@st.composite
def text_with_span(draw: st.DrawFn) -> tuple[str, int, int]:
    """A source of words (some astral) and a span of whole tokens in it."""
    words = draw(st.lists(WORDS, min_size=1, max_size=30))
    source = " ".join(words)
    tokens = tokenize(source)
    if not tokens:
        return source + " end", len(source) + 1, len(source) + 4
    first = draw(st.integers(min_value=0, max_value=len(tokens) - 1))
    last = draw(st.integers(min_value=first, max_value=len(tokens) - 1))
    return source, tokens[first].start, tokens[last].end


@PROFILE
@given(case=text_with_span())
def test_a_described_span_resolves_to_itself(case: tuple[str, int, int]) -> None:
    source, start, end = case
    quote, position = describe_span(source, start, end)
    assert quote.exact == source[start:end]
    assert len(quote.prefix) <= 32
    assert len(quote.suffix) <= 32
    found = resolve(source, quote, position)
    assert found.status == QUOTE_FOUND
    assert (found.start, found.end) == (start, end)


@PROFILE
@given(case=text_with_span())
def test_utf16_positions_round_trip_through_selectors(case: tuple[str, int, int]) -> None:
    source, start, end = case
    start16, end16 = TextPositionSelector(start, end).to_utf16(source)
    assert position_from_utf16(source, start16, end16) == TextPositionSelector(start, end)
    assert start16 >= start
    assert end16 >= end


@PROFILE
@given(exact=st.text(min_size=1).filter(str.strip), prefix=st.text(), suffix=st.text())
def test_quote_selector_w3c_round_trip(exact: str, prefix: str, suffix: str) -> None:
    selector = TextQuoteSelector(exact, prefix, suffix)
    assert TextQuoteSelector.from_w3c(selector.to_w3c()) == selector


@PROFILE
@given(start=st.integers(min_value=0, max_value=10**6), length=st.integers(0, 10**6))
def test_position_selector_w3c_round_trip(start: int, length: int) -> None:
    selector = TextPositionSelector(start, start + length)
    assert TextPositionSelector.from_w3c(selector.to_w3c()) == selector
