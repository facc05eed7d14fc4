"""Every offset snap prints comes in three units, and all three cut out the same text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from records.offset_units import CODEPOINT, UTF8, UTF16, slice_in, span_units, utf8_to_codepoint
from snap.errors import OffsetError

TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=60)


@given(TEXT, st.data())
def test_the_three_units_slice_to_the_same_text(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    spans = span_units(text, start, end)
    assert set(spans) == {CODEPOINT, UTF16, UTF8}
    for unit, span in spans.items():
        assert slice_in(text, unit, span) == text[start:end]


@given(TEXT, st.data())
def test_utf8_offsets_convert_back_to_code_points(text: str, data: st.DataObject) -> None:
    offset = data.draw(st.integers(0, len(text)))
    utf8 = span_units(text, offset, offset)[UTF8]["start"]
    assert utf8_to_codepoint(text, utf8) == offset


LONG_TEXT = st.lists(st.sampled_from(["a", "é", "€", "🚀", " ", "\n"]), min_size=400, max_size=3000)


@given(LONG_TEXT, st.data())
def test_long_texts_convert_across_table_checkpoints(chars: list[str], data: st.DataObject) -> None:
    text = "".join(chars)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    spans = span_units(text, start, end)
    for unit, span in spans.items():
        assert slice_in(text, unit, span) == text[start:end]
    assert utf8_to_codepoint(text, spans[UTF8]["start"]) == start
    assert utf8_to_codepoint(text, spans[UTF8]["end"]) == end


def test_a_utf8_offset_inside_a_character_or_past_the_end_is_refused() -> None:
    with pytest.raises(OffsetError, match="inside a character"):
        utf8_to_codepoint("é", 1)
    with pytest.raises(OffsetError, match="runs past the end"):
        utf8_to_codepoint("abc", 4)


def test_astral_characters_count_two_utf16_units_and_four_bytes() -> None:
    assert span_units("🚀a", 1, 2) == {
        CODEPOINT: {"start": 1, "end": 2},
        UTF16: {"start": 2, "end": 3},
        UTF8: {"start": 4, "end": 5},
    }


@pytest.mark.parametrize(
    "unit", ["codepoint", "codepoints", "utf16", "utf-16", "UTF16", "code_point", "bytes", "", 16]
)
def test_one_reading_of_a_position_unit_for_w3c_selectors_and_citation_inputs(unit: object) -> None:
    """verifier.selectors and records.inputs read a position's unit from one list: a spelling
    one accepts the other accepts as the same unit, and one refuses the other refuses."""
    from records.inputs.fields import Field
    from records.inputs.w3c import parse_position
    from snap.errors import InputError
    from verifier.errors import SelectorError
    from verifier.selectors import TextPositionSelector

    selector = {"type": "TextPositionSelector", "start": 0, "end": 2, "unit": unit}
    try:
        read = TextPositionSelector.from_w3c(selector, text="ab")
    except SelectorError:
        with pytest.raises(InputError, match=r"position\.unit: "):
            parse_position(Field(selector, "position"))
        return
    position = parse_position(Field(selector, "position"))
    assert (position.start, position.end) == (read.start, read.end)
    assert position.unit in ("codepoint", "utf16")
