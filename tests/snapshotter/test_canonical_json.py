"""canonical_json writes what the rfc8785 package writes, and refuses what it refuses."""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from snapshotter.canonical_json import CanonicalizationError, canonical_json

# Every character, lone surrogates and astral ones included, in keys and in values.
ANY_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.integers(min_value=-(2**53) - 2, max_value=-(2**53) + 2)
    | st.integers(min_value=2**53 - 2, max_value=2**53 + 2)
    | st.floats()
    | ANY_TEXT
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(ANY_TEXT, inner, max_size=4)
    ),
    max_leaves=20,
)


def written(write: Any, value: Any) -> bytes | type[Exception]:
    """The bytes, or that it was refused (rfc8785 lets a UnicodeEncodeError out for a lone
    surrogate in a key; canonical_json refuses it as CanonicalizationError)."""
    try:
        return bytes(write(value))
    except (CanonicalizationError, UnicodeEncodeError):
        return CanonicalizationError


@settings(max_examples=600)
@given(JSON_VALUES)
def test_canonical_json_is_rfc8785(value: Any) -> None:
    assert written(canonical_json, value) == written(rfc8785.dumps, value)


@pytest.mark.parametrize(
    "value",
    [
        {"\ue000": 1, "\U0001f600": 2},  # UTF-16 puts the astral key first, code points last
        {"a": 1.5, "b": 1e21, "c": -0.0},  # ECMAScript number forms
        {"line": 'a\u2028b\x7f\x1f"\\'},  # escaped as JCS says, U+2028 and DEL kept
        {"n": 2**53 - 1, "m": -(2**53) + 1},  # the largest integers JCS holds
        ("tuple", [], {}),
    ],
)
def test_cases_where_the_two_encoders_could_part(value: Any) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@pytest.mark.parametrize(
    "value", [2**53, {1: "a"}, "\ud800", {"\ud800": 1}, {"x": float("nan")}, {1, 2}]
)
def test_what_jcs_cannot_hold_is_refused(value: Any) -> None:
    with pytest.raises(CanonicalizationError):
        canonical_json(value)


class Colour(StrEnum):
    RED = "red"


class Size(IntEnum):
    BIG = 3


def test_enums_are_written_as_their_values() -> None:
    assert canonical_json({"c": Colour.RED, "s": Size.BIG}) == b'{"c":"red","s":3}'
