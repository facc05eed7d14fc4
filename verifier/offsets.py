"""Conversion between code-point offsets (what snap stores) and UTF-16 code units (JavaScript).

An offset that runs past the text or lands between the two halves of a surrogate pair is an
error, never silently clamped: a clamped offset would point a citation at different text.
"""

from __future__ import annotations

from snap.errors import OffsetError

_HIGH_SURROGATES = range(0xD800, 0xDC00)
_LOW_SURROGATES = range(0xDC00, 0xE000)


def codepoint_to_utf16(text: str, offset: int) -> int:
    """The UTF-16 code-unit offset of code-point ``offset`` in ``text``."""
    _require_offset(offset, len(text), "code-point")
    return len(_utf16(text[:offset])) // 2


def utf16_to_codepoint(text: str, offset: int) -> int:
    """The code-point offset of UTF-16 code-unit ``offset`` in ``text``."""
    encoded = _utf16(text)
    _require_offset(offset, len(encoded) // 2, "UTF-16")
    if _splits_pair(encoded, offset):
        raise OffsetError(f"UTF-16 offset {offset} splits a surrogate pair")
    return len(encoded[: 2 * offset].decode("utf-16-le", "surrogatepass"))


def _utf16(text: str) -> bytes:
    # surrogatepass keeps lone surrogates countable instead of failing on them.
    return text.encode("utf-16-le", "surrogatepass")


def _splits_pair(encoded: bytes, offset: int) -> bool:
    """True when ``offset`` falls between a high surrogate and the low surrogate after it."""
    if offset == 0 or 2 * offset >= len(encoded):
        return False
    return (
        _unit_at(encoded, offset - 1) in _HIGH_SURROGATES
        and _unit_at(encoded, offset) in _LOW_SURROGATES
    )


def _unit_at(encoded: bytes, index: int) -> int:
    return int.from_bytes(encoded[2 * index : 2 * index + 2], "little")


def _require_offset(offset: object, length: int, unit: str) -> None:
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise OffsetError(f"{unit} offset must be an integer, got {offset!r}")
    if offset < 0:
        raise OffsetError(f"{unit} offset {offset} is negative")
    if offset > length:
        raise OffsetError(f"{unit} offset {offset} runs past the end of the text ({length})")
