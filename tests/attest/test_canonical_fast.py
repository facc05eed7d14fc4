"""``canonical`` writes a flat object with the standard library's encoder: byte for byte what
``rfc8785`` writes, and refused where it refuses."""

from __future__ import annotations

import enum
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from records.attest.manifest import JSON_INTEGERS, canonical

any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)  # surrogates too
keys = st.text(max_size=8) | st.text(st.characters(max_codepoint=0x7F), max_size=8) | any_text
integers = st.integers(-(2**60), 2**60) | st.sampled_from([JSON_INTEGERS, -JSON_INTEGERS])
scalars = st.none() | st.booleans() | integers | any_text | st.floats(allow_nan=True)
flat = st.dictionaries(keys, scalars, max_size=8)


def written(document: Any) -> bytes | type[Exception]:
    try:
        return canonical(document)
    except Exception as error:  # the kind of refusal is compared
        return type(error)


def reference(document: Any) -> bytes | type[Exception]:
    try:
        return rfc8785.dumps(document)
    except Exception as error:
        return type(error)


@settings(max_examples=400, deadline=None)
@given(flat)
def test_flat_objects_are_written_as_rfc8785_writes_them(document: dict[str, Any]) -> None:
    assert written(document) == reference(document)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(keys, st.lists(scalars, max_size=3) | flat, max_size=3))
def test_nested_values_are_left_to_rfc8785(document: dict[str, Any]) -> None:
    assert written(document) == reference(document)


class Kind(enum.StrEnum):
    FOUND = "quote_found"


class Level(enum.IntEnum):
    HIGH = 3


@pytest.mark.parametrize(
    "document",
    [
        {"status": Kind.FOUND, "level": Level.HIGH, "ok": True, "none": None},
        {"b": 'a\x00\x1f\x7f\b\t\n\f\r"\\\u2028é😀', "a": -JSON_INTEGERS},
        {"big": JSON_INTEGERS + 1},
        {"lone": "\ud800"},
        {"Z": 1, "a": 2, "_": 3, "~": 4, "": 5},
        {},
    ],
)
def test_the_edges(document: dict[str, Any]) -> None:
    """Enums as their values, every escape, the integer limits, a lone surrogate, ASCII order."""
    assert written(document) == reference(document)
