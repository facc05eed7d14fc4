"""One offset in the three units callers count in: code points (Python, W3C), UTF-16 code units
(JavaScript, TypeScript, Java) and UTF-8 bytes (Go, Rust, Gemini's grounding segments).

Kept in one place so it can be swapped for the prepared converter of ``verifier.offsets`` once
that exists; every offset snap prints in ``--json`` goes through ``span_units``.
"""

from __future__ import annotations

from typing import Any

from snap.errors import OffsetError

CODEPOINT = "codepoint"
UTF16 = "utf16"
UTF8 = "utf8"


def utf16_length(text: str) -> int:
    """Code units ``text`` takes in UTF-16 (astral characters take two)."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def span_units(text: str, start: int, end: int) -> dict[str, dict[str, int]]:
    """``text[start:end]`` (code points) as ``{unit: {"start", "end"}}`` in all three units."""
    if not 0 <= start <= end <= len(text):
        raise OffsetError(f"span {start}–{end} does not lie in a text of {len(text)} code points")
    head, middle = text[:start], text[start:end]
    u16, u8 = utf16_length(head), utf8_length(head)
    return {
        CODEPOINT: {"start": start, "end": end},
        UTF16: {"start": u16, "end": u16 + utf16_length(middle)},
        UTF8: {"start": u8, "end": u8 + utf8_length(middle)},
    }


def utf8_to_codepoint(text: str, offset: int) -> int:
    """The code-point offset of UTF-8 byte ``offset`` in ``text``; one inside a character or
    past the end is an error, never rounded (it would point at different text)."""
    encoded = text.encode("utf-8", "surrogatepass")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= len(encoded):
        raise OffsetError(f"UTF-8 offset {offset!r} does not lie in a text of {len(encoded)} bytes")
    if offset < len(encoded) and encoded[offset] & 0xC0 == 0x80:
        raise OffsetError(f"UTF-8 offset {offset} falls inside a character")
    return len(encoded[:offset].decode("utf-8", "surrogatepass"))


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
