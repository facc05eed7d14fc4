"""Conversion between code-point offsets (what snap stores), UTF-16 code units (JavaScript, the
W3C selectors) and UTF-8 bytes (files, most other tools).

An offset that runs past the text or lands inside one character's encoding (between the two
halves of a surrogate pair, inside a multi-byte UTF-8 sequence) is an error, never silently
clamped: a clamped offset would point a citation at different text.

``TextOffsets(text)`` prepares the conversion once, in O(N): it records where every block of
``BLOCK`` code points starts in each unit.  A conversion then looks up its block (directly, or by
bisection for the reverse direction) and encodes at most one block, so it costs the same on a
10 MB text as on a 1 KB one.  Texts that are all ASCII, or have no character outside the Basic
Multilingual Plane, need no table at all for the units that equal code points.

Every code point counts alone, as Python sees the text: an astral character is two UTF-16 units
and four UTF-8 bytes, and a lone surrogate (which strict decoding never produces, but a ``str``
can hold) is one UTF-16 unit and three bytes, the width of its ``surrogatepass`` encoding.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Callable
from functools import cache, cached_property

from verifier.errors import OffsetError

BLOCK = 256  # code points per checkpoint: one conversion encodes at most this many


@cache
def _astral() -> re.Pattern[str]:
    return re.compile("[\U00010000-\U0010ffff]")


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _utf8_length(text: str) -> int:
    return len(_utf8(text))


class _Unit:
    """One encoding's checkpoints: ``starts[i]`` is where code point ``i * BLOCK`` begins."""

    def __init__(self, text: str, length_of: Callable[[str], int], block: int) -> None:
        self.length_of = length_of
        self.block = block
        self.starts = array("q", [0])
        total = 0
        for start in range(0, len(text), block):
            total += length_of(text[start : start + block])
            self.starts.append(total)
        self.total = total

    def position(self, text: str, offset: int) -> int:
        """Where code point ``offset`` (already checked) begins in this encoding."""
        block = offset // self.block
        return self.starts[block] + self.length_of(text[block * self.block : offset])

    def block_of(self, offset: int) -> int:
        """The block whose encoding holds ``offset`` (at least 0 and below ``total``)."""
        return bisect_right(self.starts, offset) - 1


class TextOffsets:
    """Offsets of one text in code points, UTF-16 code units and UTF-8 bytes, prepared once.

    Build it once per text; every conversion after that costs a bisection plus work on at most
    ``block`` code points.  Each unit's table is built, in O(N), on its first use.
    """

    def __init__(self, text: str, *, block: int = BLOCK) -> None:
        if block < 1:
            raise ValueError(f"block must be at least 1, got {block}")
        self.text = text
        self.length = len(text)
        self.block = block
        self._ascii = text.isascii()  # O(1): CPython knows it from the string's storage

    @cached_property
    def _utf16(self) -> _Unit | None:
        """None when UTF-16 units equal code points (no character outside the BMP)."""
        if self._ascii or _astral().search(self.text) is None:
            return None
        return _Unit(self.text, _utf16_length, self.block)

    @cached_property
    def _utf8(self) -> _Unit | None:
        """None when UTF-8 bytes equal code points (ASCII)."""
        return None if self._ascii else _Unit(self.text, _utf8_length, self.block)

    @property
    def utf16_length(self) -> int:
        return self.length if self._utf16 is None else self._utf16.total

    @property
    def utf8_length(self) -> int:
        return self.length if self._utf8 is None else self._utf8.total

    def to_utf16(self, offset: int) -> int:
        """The UTF-16 code-unit offset of code-point ``offset``."""
        _require_offset(offset, self.length, "code-point")
        unit = self._utf16
        return offset if unit is None else unit.position(self.text, offset)

    def to_utf8(self, offset: int) -> int:
        """The UTF-8 byte offset of code-point ``offset``."""
        _require_offset(offset, self.length, "code-point")
        unit = self._utf8
        return offset if unit is None else unit.position(self.text, offset)

    def to_codepoint(self, offset: int) -> int:
        """The code-point offset of UTF-16 code-unit ``offset``."""
        unit = self._utf16
        _require_offset(offset, self.length if unit is None else unit.total, "UTF-16")
        if unit is None or offset == unit.total:
            return offset if unit is None else self.length
        block = unit.block_of(offset)
        codepoint, units = block * self.block, unit.starts[block]
        # Walk the block's astral characters (the only ones two units wide) up to ``offset``.
        for astral in _astral().finditer(self.text, codepoint, codepoint + self.block):
            at = units + astral.start() - codepoint
            if offset <= at:
                break
            if offset == at + 1:
                raise OffsetError(f"UTF-16 offset {offset} splits a surrogate pair")
            codepoint, units = astral.start() + 1, at + 2
        return codepoint + offset - units

    def from_utf8(self, offset: int) -> int:
        """The code-point offset of UTF-8 byte ``offset``."""
        unit = self._utf8
        _require_offset(offset, self.length if unit is None else unit.total, "UTF-8")
        if unit is None or offset == unit.total:
            return offset if unit is None else self.length
        block = unit.block_of(offset)
        start = block * self.block
        encoded = _utf8(self.text[start : start + self.block])
        within = offset - unit.starts[block]
        if encoded[within] & 0xC0 == 0x80:  # a continuation byte: inside a sequence
            raise OffsetError(
                f"UTF-8 offset {offset} falls inside a character (splits a UTF-8 sequence)"
            )
        # surrogatepass decodes each lone surrogate's 3 bytes back to that one code point.
        return start + len(encoded[:within].decode("utf-8", "surrogatepass"))


def codepoint_to_utf16(text: str, offset: int) -> int:
    """The UTF-16 code-unit offset of code-point ``offset`` in ``text`` (for one conversion;
    build a ``TextOffsets`` to convert many offsets of the same text)."""
    _require_offset(offset, len(text), "code-point")
    return _utf16_length(text[:offset])


def utf16_to_codepoint(text: str, offset: int) -> int:
    """The code-point offset of UTF-16 code-unit ``offset`` in ``text`` (for one conversion;
    build a ``TextOffsets`` to convert many offsets of the same text)."""
    return TextOffsets(text).to_codepoint(offset)


def _require_offset(offset: object, length: int, unit: str) -> None:
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise OffsetError(f"{unit} offset must be an integer, got {offset!r}")
    if offset < 0:
        raise OffsetError(f"{unit} offset {offset} is negative")
    if offset > length:
        raise OffsetError(f"{unit} offset {offset} runs past the end of the text ({length})")
