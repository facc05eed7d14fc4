"""UTF-16 ↔ code-point offsets: exact both ways, errors instead of clamping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snap.errors import OffsetError
from verifier import codepoint_to_utf16, utf16_to_codepoint
from verifier.offsets import TextOffsets

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


# -- TextOffsets: prepared once, every unit checked against plain encoding ---------------------

# One character of each UTF-8 width, astral ones, and lone surrogates (a ``str`` can hold them;
# each is one code point, one UTF-16 unit and three surrogatepass bytes). A high surrogate
# followed by a low one stays two code points, as Python sees the text.
ANY_WIDTH = [
    "a",
    " ",
    "é",
    "ß",
    "中",
    "\u00a0",
    "😀",
    "𝑥",
    "\U0010fffd",
    "\ud83d",
    "\ude00",
    "\udbff",
]
mixed_text = st.text(alphabet=st.sampled_from(ANY_WIDTH), max_size=60)
blocks = st.sampled_from([1, 2, 3, 7, 256])


def utf16_of(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf8_of(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=300, derandomize=True)
@given(text=mixed_text, block=blocks)
def test_text_offsets_match_plain_encoding_in_all_units(text: str, block: int) -> None:
    offsets = TextOffsets(text, block=block)
    assert offsets.utf16_length == utf16_of(text)
    assert offsets.utf8_length == utf8_of(text)
    for codepoint in range(len(text) + 1):
        assert offsets.to_utf16(codepoint) == utf16_of(text[:codepoint])
        assert offsets.to_utf8(codepoint) == utf8_of(text[:codepoint])
        assert codepoint_to_utf16(text, codepoint) == utf16_of(text[:codepoint])


@settings(max_examples=300, derandomize=True)
@given(text=mixed_text, block=blocks)
def test_reverse_conversions_hit_exactly_the_character_starts(text: str, block: int) -> None:
    offsets = TextOffsets(text, block=block)
    starts16 = {utf16_of(text[:i]): i for i in range(len(text) + 1)}
    starts8 = {utf8_of(text[:i]): i for i in range(len(text) + 1)}
    for units in range(utf16_of(text) + 1):
        if units in starts16:
            assert offsets.to_codepoint(units) == starts16[units]
            assert utf16_to_codepoint(text, units) == starts16[units]
        else:
            with pytest.raises(OffsetError, match="splits a surrogate pair"):
                offsets.to_codepoint(units)
    for byte in range(utf8_of(text) + 1):
        if byte in starts8:
            assert offsets.from_utf8(byte) == starts8[byte]
        else:
            with pytest.raises(OffsetError, match="splits a UTF-8 sequence"):
                offsets.from_utf8(byte)


@settings(max_examples=100, derandomize=True)
@given(text=mixed_text, block=blocks, beyond=st.integers(min_value=1, max_value=5))
def test_offsets_past_either_end_are_errors_in_every_unit(
    text: str, block: int, beyond: int
) -> None:
    offsets = TextOffsets(text, block=block)
    ends = {
        offsets.to_utf16: len(text),
        offsets.to_utf8: len(text),
        offsets.to_codepoint: utf16_of(text),
        offsets.from_utf8: utf8_of(text),
    }
    for convert, end in ends.items():
        with pytest.raises(OffsetError, match=f"runs past the end of the text \\({end}\\)"):
            convert(end + beyond)
        with pytest.raises(OffsetError, match="is negative"):
            convert(-beyond)
        with pytest.raises(OffsetError, match="must be an integer"):
            convert(True)


def test_a_lone_surrogate_pair_is_two_code_points() -> None:
    """Two lone surrogates that would form a pair in UTF-16 are still two code points here:
    the offset between them is a boundary, as Python (and snap's stored offsets) count."""
    offsets = TextOffsets("x\ud83d\ude00y")
    assert [offsets.to_utf16(i) for i in range(5)] == [0, 1, 2, 3, 4]
    assert [offsets.to_codepoint(u) for u in range(5)] == [0, 1, 2, 3, 4]
    assert [offsets.to_utf8(i) for i in range(5)] == [0, 1, 4, 7, 8]
    assert [offsets.from_utf8(b) for b in (0, 1, 4, 7, 8)] == [0, 1, 2, 3, 4]


def test_large_text_conversions_do_not_rescan_the_text() -> None:
    """The point of preparing: converting near the end of a long text touches one block."""
    text = ("naïve 😀 " * 200_000) + "end"
    offsets = TextOffsets(text)
    end_units = offsets.utf16_length
    assert offsets.to_codepoint(end_units - 3) == len(text) - 3
    assert offsets.to_utf16(len(text) - 3) == end_units - 3
    assert offsets.from_utf8(offsets.utf8_length - 3) == len(text) - 3
    for unit in (offsets._utf16, offsets._utf8):  # the tables are one entry per block
        assert unit is not None
        assert len(unit.starts) == -(-len(text) // offsets.block) + 1


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab é\u00e9𝔘😀\u4e2d"), max_size=600))
def test_a_prepared_source_keeps_one_converter_of_its_text(text: str) -> None:
    """Reports convert a snapshot's spans with ``PreparedSource.offsets``: made once, kept with
    the tokens, converting as a converter of the text made afresh."""
    from verifier import prepare

    prepared = prepare(text)
    kept = prepared.offsets
    assert prepared.offsets is kept
    fresh = TextOffsets(text)
    for offset in range(len(text) + 1):
        assert kept.to_utf16(offset) == fresh.to_utf16(offset)
        assert kept.to_utf8(offset) == fresh.to_utf8(offset)
