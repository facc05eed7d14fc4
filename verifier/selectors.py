"""W3C Web Annotation selectors: TextQuoteSelector and TextPositionSelector.

Positions count Unicode code points, as the W3C model says.  JavaScript front ends count
UTF-16 code units; such offsets carry ``"unit": "utf16"`` and are converted (against the
source text) on import and export, never stored mixed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Self

from verifier.errors import OffsetError, SelectorError
from verifier.offsets import codepoint_to_utf16, utf16_to_codepoint

MAX_CONTEXT: Final = 32
CODEPOINT: Final = "codepoint"
UTF16: Final = "utf16"
# Every spelling of a position's unit that snap reads, for every reader of positions (the W3C
# form here, citation inputs in records.inputs): one list, so no input is read two ways.
UNIT_SPELLINGS: Final = {
    "codepoint": CODEPOINT,
    "codepoints": CODEPOINT,
    "utf16": UTF16,
    "utf-16": UTF16,
}


def position_unit(name: object) -> str:
    """``CODEPOINT`` or ``UTF16``, as ``name`` (a position's ``unit``) spells it; SelectorError
    for any other value."""
    unit = UNIT_SPELLINGS.get(name) if isinstance(name, str) else None
    if unit is None:
        raise SelectorError(f"unknown position unit {str(name)[:40]!r}; use 'codepoint' or 'utf16'")
    return unit


@dataclass(frozen=True, slots=True)
class TextQuoteSelector:
    """The quoted text with up to ``MAX_CONTEXT`` code points of context on either side."""

    exact: str
    prefix: str = ""
    suffix: str = ""

    def __post_init__(self) -> None:
        for name in ("exact", "prefix", "suffix"):
            if not isinstance(getattr(self, name), str):
                raise SelectorError(f"TextQuoteSelector {name} must be a string")
        if not self.exact:
            raise SelectorError("TextQuoteSelector exact must not be empty")

    def to_w3c(self) -> dict[str, object]:
        """The W3C JSON form."""
        return {
            "type": "TextQuoteSelector",
            "exact": self.exact,
            "prefix": self.prefix,
            "suffix": self.suffix,
        }

    @classmethod
    def from_w3c(cls, obj: Mapping[str, object]) -> Self:
        """Read the W3C JSON form; prefix and suffix are optional."""
        _require_type(obj, "TextQuoteSelector")
        if "exact" not in obj:
            raise SelectorError("TextQuoteSelector has no exact text")
        exact, prefix, suffix = obj["exact"], obj.get("prefix", ""), obj.get("suffix", "")
        if not (isinstance(exact, str) and isinstance(prefix, str) and isinstance(suffix, str)):
            raise SelectorError("TextQuoteSelector exact, prefix and suffix must be strings")
        return cls(exact, prefix, suffix)


@dataclass(frozen=True, slots=True)
class TextPositionSelector:
    """A ``[start, end)`` range of code points in the source text."""

    start: int
    end: int

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise SelectorError(f"TextPositionSelector {name} must be an integer")
            if value < 0:
                raise SelectorError(f"TextPositionSelector {name} {value} is negative")
        if self.start > self.end:
            raise SelectorError(f"TextPositionSelector start {self.start} is after end {self.end}")

    def to_utf16(self, text: str) -> tuple[int, int]:
        """``(start, end)`` in UTF-16 code units of ``text``."""
        return codepoint_to_utf16(text, self.start), codepoint_to_utf16(text, self.end)

    def to_w3c(self, *, unit: str = CODEPOINT, text: str | None = None) -> dict[str, object]:
        """The W3C JSON form; ``unit="utf16"`` (needs ``text``) writes an internal record."""
        if unit == CODEPOINT:
            return {"type": "TextPositionSelector", "start": self.start, "end": self.end}
        start, end = self.to_utf16(_text_for(unit, text))
        return {"type": "TextPositionSelector", "start": start, "end": end, "unit": UTF16}

    @classmethod
    def from_w3c(cls, obj: Mapping[str, object], *, text: str | None = None) -> Self:
        """Read the W3C JSON form; a record with ``"unit": "utf16"`` needs ``text``."""
        _require_type(obj, "TextPositionSelector")
        if "start" not in obj or "end" not in obj:
            raise SelectorError("TextPositionSelector needs start and end")
        start, end = _integer(obj["start"], "start"), _integer(obj["end"], "end")
        unit = position_unit(obj.get("unit", CODEPOINT))
        if unit == CODEPOINT:
            return cls(start, end)
        source = _text_for(unit, text)
        try:
            return cls(utf16_to_codepoint(source, start), utf16_to_codepoint(source, end))
        except OffsetError as error:
            raise SelectorError(f"TextPositionSelector: {error}") from error


def position_from_utf16(text: str, start: int, end: int) -> TextPositionSelector:
    """A code-point position selector from UTF-16 offsets into ``text``."""
    return TextPositionSelector(utf16_to_codepoint(text, start), utf16_to_codepoint(text, end))


def describe_span(
    source: str, start: int, end: int, *, context: int = MAX_CONTEXT
) -> tuple[TextQuoteSelector, TextPositionSelector]:
    """Both selectors for ``source[start:end]``.

    Prefix and suffix take ``context`` code points (at most ``MAX_CONTEXT``) of the source on
    either side, always the full amount available: more context disambiguates better after
    the source has been edited, and the W3C limit keeps records small.
    """
    if isinstance(context, bool) or not isinstance(context, int):
        raise SelectorError("context must be an integer")
    if not 0 <= context <= MAX_CONTEXT:
        raise SelectorError(f"context must be between 0 and {MAX_CONTEXT}, got {context}")
    position = TextPositionSelector(start, end)
    if end > len(source):
        raise OffsetError(f"span end {end} runs past the end of the source ({len(source)})")
    quote = TextQuoteSelector(
        exact=source[start:end],
        prefix=source[max(start - context, 0) : start],
        suffix=source[end : end + context],
    )
    return quote, position


def _require_type(obj: Mapping[str, object], expected: str) -> None:
    if not isinstance(obj, Mapping):
        raise SelectorError(f"{expected} must be a JSON object")
    if obj.get("type") != expected:
        raise SelectorError(f"expected type {expected}, got {obj.get('type')!r}")


def _integer(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SelectorError(f"TextPositionSelector {name} must be an integer, got {value!r}")
    return value


def _text_for(unit: object, text: str | None) -> str:
    if unit != UTF16:
        raise SelectorError(f"unknown position unit {unit!r}; use {CODEPOINT!r} or {UTF16!r}")
    if text is None:
        raise SelectorError("utf16 positions can only be converted against the source text")
    return text
