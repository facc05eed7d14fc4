"""One offset in the three units callers count in: code points (Python, W3C), UTF-16 code units
(JavaScript, TypeScript, Java) and UTF-8 bytes (Go, Rust, Gemini's grounding segments).

Kept in one place so it can be swapped for the prepared converter of ``verifier.offsets`` once
that exists; every offset snap prints in ``--json`` goes through ``span_units``.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from typing import Any

from snap.errors import OffsetError

CODEPOINT = "codepoint"
UTF16 = "utf16"
UTF8 = "utf8"


STEP = 512  # code points between the checkpoints of an offset table


def utf16_length(text: str) -> int:
    """Code units ``text`` takes in UTF-16 (astral characters take two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class OffsetTable:
    """UTF-16 and UTF-8 offsets of every ``STEP``-th code point of one text, so converting an
    offset costs at most ``STEP`` code points however long the text: many claims of one long
    answer, or many quotes of one long source, stay linear in total."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.utf16 = [0]
        self.utf8 = [0]
        for start in range(0, len(text), STEP):
            chunk = text[start : start + STEP]
            self.utf16.append(self.utf16[-1] + utf16_length(chunk))
            self.utf8.append(self.utf8[-1] + utf8_length(chunk))

    def at(self, offset: int) -> tuple[int, int]:
        """``(utf16, utf8)`` offsets of code point ``offset``."""
        block = offset // STEP
        rest = self.text[block * STEP : offset]
        return self.utf16[block] + utf16_length(rest), self.utf8[block] + utf8_length(rest)


@lru_cache(maxsize=16)
def table_for(text: str) -> OffsetTable:
    return OffsetTable(text)


def span_units(text: str, start: int, end: int) -> dict[str, dict[str, int]]:
    """``text[start:end]`` (code points) as ``{unit: {"start", "end"}}`` in all three units."""
    if not 0 <= start <= end <= len(text):
        raise OffsetError(f"span {start}–{end} does not lie in a text of {len(text)} code points")
    table = table_for(text)
    (u16_start, u8_start), (u16_end, u8_end) = table.at(start), table.at(end)
    return {
        CODEPOINT: {"start": start, "end": end},
        UTF16: {"start": u16_start, "end": u16_end},
        UTF8: {"start": u8_start, "end": u8_end},
    }


def utf8_to_codepoint(text: str, offset: int) -> int:
    """The code-point offset of UTF-8 byte ``offset`` in ``text``; one inside a character or
    past the end is an error, never rounded (it would point at different text)."""
    table = table_for(text)
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= table.utf8[-1]:
        raise OffsetError(
            f"UTF-8 offset {offset!r} does not lie in a text of {table.utf8[-1]} bytes"
        )
    last_block = max(len(table.utf8) - 2, 0)  # the end of the text is in the last block
    block = min(bisect_right(table.utf8, offset) - 1, last_block)
    encoded = table.text[block * STEP : (block + 1) * STEP].encode("utf-8", "surrogatepass")
    rest = offset - table.utf8[block]
    if rest < len(encoded) and encoded[rest] & 0xC0 == 0x80:
        raise OffsetError(f"UTF-8 offset {offset} falls inside a character")
    return block * STEP + len(encoded[:rest].decode("utf-8", "surrogatepass"))


def slice_in(text: str, unit: str, span: dict[str, Any]) -> str:
    """``text`` cut at a span given in ``unit``: what a caller in that language would get."""
    start, end = span["start"], span["end"]
    if unit == UTF16:
        return text.encode("utf-16-le", "surrogatepass")[2 * start : 2 * end].decode(
            "utf-16-le", "surrogatepass"
        )
    if unit == UTF8:
        return text.encode("utf-8", "surrogatepass")[start:end].decode("utf-8", "surrogatepass")
    return text[start:end]
