"""W3C selectors: JSON round trips, validation, description of a span, and resolution."""

from __future__ import annotations

from typing import Any

import pytest

from snap.errors import OffsetError, SelectorError
from verifier import (
    CONTEXT_MISMATCH,
    COULD_NOT_CHECK,
    NOT_FOUND,
    POSITION_MISMATCH,
    QUOTE_FOUND,
    TextPositionSelector,
    TextQuoteSelector,
    check_quote,
    describe_span,
    position_from_utf16,
    prepare,
    resolve,
)
from verifier.matcher import INNER_ELLIPSIS

PAGE = "A cache hit ratio of 90 percent means the origin serves only 1 request in 10."


def test_quote_selector_w3c_round_trip() -> None:
    selector = TextQuoteSelector("the origin", prefix="means ", suffix=" serves")
    assert selector.to_w3c() == {
        "type": "TextQuoteSelector",
        "exact": "the origin",
        "prefix": "means ",
        "suffix": " serves",
    }
    assert TextQuoteSelector.from_w3c(selector.to_w3c()) == selector


def test_quote_selector_prefix_and_suffix_are_optional() -> None:
    selector = TextQuoteSelector.from_w3c({"type": "TextQuoteSelector", "exact": "x"})
    assert selector == TextQuoteSelector("x")


def test_position_selector_w3c_round_trip() -> None:
    selector = TextPositionSelector(38, 76)
    assert selector.to_w3c() == {"type": "TextPositionSelector", "start": 38, "end": 76}
    assert TextPositionSelector.from_w3c(selector.to_w3c()) == selector


BAD_QUOTES: list[Any] = [
    {"type": "TextQuoteSelector"},
    {"type": "TextQuoteSelector", "exact": ""},
    {"type": "TextQuoteSelector", "exact": 5},
    {"type": "TextQuoteSelector", "exact": "x", "prefix": None},
    {"type": "TextPositionSelector", "exact": "x"},
    {"exact": "x"},
    ["TextQuoteSelector", "x"],
]


@pytest.mark.parametrize("obj", BAD_QUOTES)
def test_bad_quote_selectors_are_refused(obj: Any) -> None:
    with pytest.raises(SelectorError) as raised:
        TextQuoteSelector.from_w3c(obj)
    assert "\n" not in str(raised.value)


BAD_POSITIONS: list[Any] = [
    {"type": "TextPositionSelector", "start": 5, "end": 4},
    {"type": "TextPositionSelector", "start": -1, "end": 4},
    {"type": "TextPositionSelector", "start": 1.0, "end": 4},
    {"type": "TextPositionSelector", "start": "1", "end": 4},
    {"type": "TextPositionSelector", "start": True, "end": 4},
    {"type": "TextPositionSelector", "start": 1},
    {"type": "TextPositionSelector", "start": 1, "end": 4, "unit": "bytes"},
    {"type": "TextPositionSelector", "start": 1, "end": 4, "unit": "utf16"},
    {"type": "TextQuoteSelector", "start": 1, "end": 4},
]


@pytest.mark.parametrize("obj", BAD_POSITIONS)
def test_bad_position_selectors_are_refused(obj: Any) -> None:
    with pytest.raises(SelectorError) as raised:
        TextPositionSelector.from_w3c(obj)
    assert "\n" not in str(raised.value)


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(SelectorError):
        TextPositionSelector(3, 2)
    with pytest.raises(SelectorError):
        TextQuoteSelector("")


def test_utf16_records_are_converted_on_import_and_export() -> None:
    text = "😀 said 𝑥 = 5"
    selector = TextPositionSelector(2, 6)  # "said"
    record = selector.to_w3c(unit="utf16", text=text)
    assert record == {"type": "TextPositionSelector", "start": 3, "end": 7, "unit": "utf16"}
    assert TextPositionSelector.from_w3c(record, text=text) == selector
    assert position_from_utf16(text, 3, 7) == selector
    assert selector.to_utf16(text) == (3, 7)


def test_utf16_record_splitting_a_surrogate_pair_is_refused() -> None:
    record = {"type": "TextPositionSelector", "start": 1, "end": 3, "unit": "utf16"}
    with pytest.raises(SelectorError, match="surrogate"):
        TextPositionSelector.from_w3c(record, text="😀 said")
    with pytest.raises(OffsetError):
        position_from_utf16("😀 said", 1, 3)


def test_describe_span_takes_up_to_32_code_points_of_context() -> None:
    quote, position = describe_span(PAGE, 38, 76)
    assert position == TextPositionSelector(38, 76)
    assert quote.exact == "the origin serves only 1 request in 10"
    assert quote.prefix == PAGE[6:38]
    assert len(quote.prefix) == 32
    assert quote.suffix == "."


def test_describe_span_context_is_bounded() -> None:
    quote, _ = describe_span(PAGE, 38, 76, context=5)
    assert quote.prefix == "eans "
    with pytest.raises(SelectorError):
        describe_span(PAGE, 38, 76, context=33)
    with pytest.raises(OffsetError):
        describe_span(PAGE, 38, len(PAGE) + 1)
    with pytest.raises(SelectorError):
        describe_span(PAGE, 40, 38)


def test_resolve_at_the_position() -> None:
    quote, position = describe_span(PAGE, 38, 76)
    result = resolve(PAGE, quote, position)
    assert result.status == QUOTE_FOUND
    assert (result.start, result.end, result.matches) == (38, 76, 1)


@pytest.mark.parametrize(("start", "end"), [(37, 77), (38, 77), (37, 76)])
def test_position_with_surrounding_space_and_punctuation_still_counts(start: int, end: int) -> None:
    result = resolve(PAGE, TextQuoteSelector(PAGE[38:76]), TextPositionSelector(start, end))
    assert result.status == QUOTE_FOUND
    assert (result.start, result.end) == (38, 76)


@pytest.mark.parametrize(("start", "end"), [(39, 76), (38, 75), (33, 76), (38, 200)])
def test_position_cutting_or_adding_tokens_is_a_mismatch(start: int, end: int) -> None:
    result = resolve(PAGE, TextQuoteSelector(PAGE[38:76]), TextPositionSelector(start, end))
    assert result.status == POSITION_MISMATCH
    assert (result.start, result.end) == (None, None)
    assert result.spans == ((38, 76),)


def test_moved_quote_is_reported_not_repaired() -> None:
    edited = "Note: " + PAGE
    quote, position = describe_span(PAGE, 38, 76)
    result = resolve(edited, quote, position)
    assert result.status == POSITION_MISMATCH
    assert result.spans == ((44, 82),)
    assert result.matches == 1


def test_several_occurrences_disambiguated_by_position() -> None:
    source = "to be or not to be"
    result = resolve(source, TextQuoteSelector("to be"), TextPositionSelector(13, 18))
    assert result.status == QUOTE_FOUND
    assert (result.start, result.end) == (13, 18)
    assert result.spans == ((0, 5), (13, 18))


def test_several_occurrences_disambiguated_by_prefix_and_suffix() -> None:
    source = "first: to be sure. second: to be honest."
    by_suffix = resolve(source, TextQuoteSelector("to be", suffix=" honest."))
    assert (by_suffix.status, by_suffix.start, by_suffix.matches) == (QUOTE_FOUND, 27, 1)
    by_prefix = resolve(source, TextQuoteSelector("to be", prefix="FIRST:  "))
    assert (by_prefix.start, by_prefix.end, by_prefix.matches) == (7, 12, 1)
    assert by_prefix.spans == ((7, 12),)


def test_a_prefix_that_disagrees_is_a_context_mismatch() -> None:
    source = "the drug is not effective in adults"
    result = resolve(source, TextQuoteSelector("effective in adults", prefix="the drug is "))
    assert result.status == CONTEXT_MISMATCH
    assert result.spans == ((16, 35),)
    assert result.start is None
    agreeing = resolve(source, TextQuoteSelector("effective in adults", prefix="drug is not "))
    assert agreeing.status == QUOTE_FOUND


def test_a_suffix_that_disagrees_is_a_context_mismatch() -> None:
    source = "take 5 mg daily, never 5 mg twice"
    result = resolve(source, TextQuoteSelector("5 mg", prefix="", suffix=" hourly"))
    assert result.status == CONTEXT_MISMATCH
    assert resolve(source, TextQuoteSelector("5 mg", suffix=" twice")).start == 23


def test_the_outermost_context_word_may_be_cut() -> None:
    source = "A cache hit ratio of 90 percent means the origin serves"
    quote = TextQuoteSelector("the origin", prefix="ercent means ", suffix=" ser")
    assert resolve(source, quote).status == QUOTE_FOUND
    assert resolve(source, TextQuoteSelector("the origin", prefix="xpercent means ")).status == (
        CONTEXT_MISMATCH
    )


def test_context_running_past_the_source_start_disagrees() -> None:
    result = resolve("the origin serves", TextQuoteSelector("the origin", prefix="so "))
    assert result.status == CONTEXT_MISMATCH


def test_still_ambiguous_is_found_with_several_matches() -> None:
    result = resolve("to be or to be", TextQuoteSelector("to be"))
    assert result.status == QUOTE_FOUND
    assert result.matches == 2
    assert (result.start, result.end) == (0, 5)


def test_resolve_passes_on_not_found_and_could_not_check() -> None:
    missing = resolve(PAGE, TextQuoteSelector("the origin serves only 2 request in 10"))
    assert missing.status == NOT_FOUND
    assert missing.closest is not None
    assert missing.closest.score == 0.875
    unchecked = resolve(PAGE, TextQuoteSelector("the origin … in 10"), TextPositionSelector(0, 1))
    assert (unchecked.status, unchecked.reason) == (COULD_NOT_CHECK, INNER_ELLIPSIS)


def test_resolve_accepts_a_prepared_source() -> None:
    prepared = prepare(PAGE)
    quote, position = describe_span(PAGE, 38, 76)
    assert resolve(prepared, quote, position) == resolve(PAGE, quote, position)
    assert check_quote(quote.exact, PAGE).spans == resolve(prepared, quote).spans
