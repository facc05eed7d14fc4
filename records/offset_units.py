"""One offset in the three units callers count in: code points (Python, W3C), UTF-16 code units
(JavaScript, TypeScript, Java) and UTF-8 bytes (Go, Rust, Gemini's grounding segments).

Every offset snap prints in ``--json`` goes through ``span_units``; the conversion itself is
``verifier.offsets.TextOffsets``, prepared once per text: a snapshot's text keeps its own with
its tokens (``PreparedSource.offsets``), other texts (an answer's) are cached here.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from verifier.errors import OffsetError
from verifier.offsets import TextOffsets

CODEPOINT = "codepoint"
UTF16 = "utf16"
UTF8 = "utf8"


@lru_cache(maxsize=16)
def offsets_of(text: str) -> TextOffsets:
    """The prepared converter of ``text``: a report converts many offsets of a few texts."""
    return TextOffsets(text)


def span_units(text: str, start: int, end: int) -> dict[str, dict[str, int]]:
    """``text[start:end]`` (code points) as ``{unit: {"start", "end"}}`` in all three units."""
    return span_units_in(offsets_of(text), start, end)


def span_units_in(offsets: TextOffsets, start: int, end: int) -> dict[str, dict[str, int]]:
    """``span_units`` with the text's converter at hand (a prepared source keeps its own:
    ``PreparedSource.offsets``)."""
    if not 0 <= start <= end <= offsets.length:
        raise OffsetError(
            f"span {start}–{end} does not lie in a text of {offsets.length} code points"
        )
    return {
        CODEPOINT: {"start": start, "end": end},
        UTF16: {"start": offsets.to_utf16(start), "end": offsets.to_utf16(end)},
        UTF8: {"start": offsets.to_utf8(start), "end": offsets.to_utf8(end)},
    }


def utf8_to_codepoint(text: str, offset: int) -> int:
    """The code-point offset of UTF-8 byte ``offset`` in ``text``; one inside a character or
    past the end is an error, never rounded (it would point at different text)."""
    return offsets_of(text).from_utf8(offset)


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
