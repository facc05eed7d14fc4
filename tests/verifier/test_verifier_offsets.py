"""UTF-16 ↔ code-point offsets: exact both ways, errors instead of clamping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snap.errors import OffsetError
from verifier import codepoint_to_utf16, utf16_to_codepoint

TEXT = "a😀b𝑥c"  # code points: a 😀 b 𝑥 c; UTF-16 units: a, 2, b, 2, c


def test_known_offsets() -> None:
    assert [codepoint_to_utf16(TEXT, i) for i in range(6)] == [0, 1, 3, 4, 6, 7]
    assert [utf16_to_codepoint(TEXT, u) for u in (0, 1, 3, 4, 6, 7)] == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("offset", [2, 5])
def test_offset_inside_a_surrogate_pair_is_an_error(offset: int) -> None:
    with pytest.raises(OffsetError, match="splits a surrogate pair"):
        utf16_to_codepoint(TEXT, offset)


@pytest.mark.parametrize(
    ("convert", "offset"),
    [
        (codepoint_to_utf16, 6),
        (codepoint_to_utf16, -1),
        (utf16_to_codepoint, 8),
        (utf16_to_codepoint, -1),
    ],
)
def test_out_of_range_offsets_are_errors(convert: object, offset: int) -> None:
    assert callable(convert)
    with pytest.raises(OffsetError) as raised:
        convert(TEXT, offset)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("offset", [True, 1.0, "1", None])
def test_non_integer_offsets_are_errors(offset: object) -> None:
    with pytest.raises(OffsetError):
        codepoint_to_utf16(TEXT, offset)  # type: ignore[arg-type]
    with pytest.raises(OffsetError):
        utf16_to_codepoint(TEXT, offset)  # type: ignore[arg-type]


astral_text = st.text(
    alphabet=st.sampled_from(["a", "é", "\u00a0", "😀", "𝑥", "👍", "🏽", "\U0010fffd", "中"]),
    max_size=40,
)


@settings(max_examples=200, derandomize=True)
@given(text=astral_text, data=st.data())
def test_round_trip_with_astral_characters(text: str, data: st.DataObject) -> None:
    offset = data.draw(st.integers(min_value=0, max_value=len(text)))
    units = codepoint_to_utf16(text, offset)
    assert units == len(text[:offset].encode("utf-16-le")) // 2
    assert utf16_to_codepoint(text, units) == offset


@settings(max_examples=200, derandomize=True)
@given(text=astral_text)
def test_every_valid_utf16_offset_round_trips(text: str) -> None:
    total = len(text.encode("utf-16-le")) // 2
    valid = {codepoint_to_utf16(text, i) for i in range(len(text) + 1)}
    for units in range(total + 1):
        if units in valid:
            assert codepoint_to_utf16(text, utf16_to_codepoint(text, units)) == units
        else:
            with pytest.raises(OffsetError):
                utf16_to_codepoint(text, units)
