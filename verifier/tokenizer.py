"""The tokenizer: text to comparison tokens that keep their original code-point spans.

Matching compares token *keys*, never raw text, so copy noise (capitals, curly apostrophes,
line breaks, double spaces, NBSP, ligatures) cannot make a real quote fail, while anything
that can change a claim (a digit, a sign, a decimal separator, an operator) is kept exact.

Rules, in the order the scanner tries them at each position:

1. ``numform``: numeric forms the verifier cannot parse ("1/2", "10-20", "10–20", "3:00", "½").
   A quote containing one is never passed (reason ``numeric form``).
2. ``number``: an optional sign (+, -, U+2212), digits with grouping/decimal separators, an
   exponent, superscripts and an attached % or ‰ -- compared exactly as written, except that
   U+2212 and "-" are the same sign.  ``.5`` is a number, so "5" never matches inside it.
3. word runs (letters, combining marks, digits, ZWJ/ZWNJ, super/subscript digits):
   ``word`` (no digits) compared after NFKC and lowercasing; ``ident`` (letters mixed with
   digits: "x²", "5ms", "CO₂") compared exactly as written.
4. ``unit``: %, ‰, °, currency signs.
5. ``op``: a run of operator characters, kept whole, when it contains a comparison sign,
   touches a digit, or stands alone between spaces/brackets ("(a - b)").  Otherwise it is
   prose punctuation ("real-time", "and/or") and only separates tokens.  A run that is an
   operator but not a known one ("===", "!!!") and a factorial ("5!") are ``numform``.

All other punctuation and all whitespace only separate tokens.
"""

from __future__ import annotations

import functools
import sys
import unicodedata
from collections.abc import Iterator
from typing import Final, NamedTuple

import regex

NORMALIZER_ID: Final = "tok-nfkc-lower@1"

WORD: Final = "word"
IDENT: Final = "ident"
NUMBER: Final = "number"
UNIT: Final = "unit"
OP: Final = "op"
NUMFORM: Final = "numform"

_SCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉"
_WORD_CHARS = rf"\p{{L}}\p{{M}}\p{{Nd}}\u200c\u200d{_SCRIPT_DIGITS}"
_SIGN = r"[+\-−]"
_OP_CHARS = r"!+\-−±/×÷*^=<>≤≥≠~≈"
_UNSIGNED = r"(?:\d+(?:[.,]\d+)*|\.\d+)"
_RANGE_PART = r"\d[\d.,]*"

# Branch order is the rule order of the module docstring; the first branch is a fast path
# for letters-only words (most tokens), which no numeric branch could match anyway, and the
# look-aheads on the numeric branches only let them start where a number can.
_SCANNER: Final = regex.compile(
    rf"""
    (?P<word>\p{{L}}[\p{{L}}\p{{M}}\u200c\u200d]*+(?![\p{{Nd}}{_SCRIPT_DIGITS}]))
    | (?P<numform>
        (?=[\d+\-−]) (?<![{_WORD_CHARS}]) (?:(?<![{_WORD_CHARS}.,)\]]){_SIGN})?
        {_RANGE_PART} (?:[/:\-−‐‑–—]{_RANGE_PART})+ [{_WORD_CHARS}%‰]*
      | [\p{{No}}--[{_SCRIPT_DIGITS}]]
    )
    | (?P<number>
        (?=[\d.+\-−]) (?<![{_WORD_CHARS}]) (?:(?<![{_WORD_CHARS}.,)\]]){_SIGN})?
        (?>{_UNSIGNED} (?:[eE]{_SIGN}?\d+)? [⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]* [%‰]?)
        (?![{_WORD_CHARS}])
    )
    | (?P<wordrun>[{_WORD_CHARS}]+)
    | (?P<unit>[%‰°\p{{Sc}}])
    | (?P<op>[{_OP_CHARS}]+)
    """,
    regex.VERBOSE | regex.VERSION1,
)

_HAS_LETTER = regex.compile(r"\p{L}")
_HAS_DIGIT = regex.compile(rf"[\p{{Nd}}{_SCRIPT_DIGITS}]")
_COMPARISON = frozenset("=<>≤≥≠≈")
_KNOWN_MULTI_OPS = frozenset(
    {"!=", "<=", ">=", "==", "**", "//", "->", "<-", "=>", "+=", "-=", "*=", "/=", "+/-"}
)
_BRACKETS = frozenset("()[]{}")


class Token(NamedTuple):
    """One comparison token: its original text and span, its kind, and its comparison key."""

    text: str
    start: int
    end: int
    kind: str
    key: str


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens whose spans are code-point offsets into ``text``."""
    return [Token(text[start:end], start, end, kind, key) for start, end, kind, key in scan(text)]


def token_keys(text: str) -> list[str]:
    """The comparison keys of ``text``: what matching and the normalized digest see."""
    return [key for _, _, _, key in scan(text)]


def scan(text: str) -> Iterator[tuple[int, int, str, str]]:
    """Yield ``(start, end, kind, key)`` for every token; the tuple form avoids an object each."""
    intern = sys.intern
    for match in _SCANNER.finditer(text):
        start, end = match.span()
        group = match.lastgroup
        raw = text[start:end]
        if group == WORD:
            yield start, end, WORD, intern(raw.lower() if raw.isascii() else _fold(raw))
        elif group == "wordrun":
            kind, key = _classify_word(raw)
            yield start, end, kind, intern(key)
        elif group in (NUMBER, OP):
            op_kind = NUMBER if group == NUMBER else _classify_op(text, start, end)
            if op_kind is not None:
                yield start, end, op_kind, intern(raw.replace("−", "-"))
        else:
            yield start, end, str(group), intern(raw)


@functools.lru_cache(maxsize=1 << 16)
def _fold(raw: str) -> str:
    """NFKC, then lowercase: ligatures, full-width letters and capitals compare equal.

    Cached because prose repeats its words; the cache is bounded so it cannot grow without end.
    """
    return unicodedata.normalize("NFKC", raw).lower()


def _classify_word(raw: str) -> tuple[str, str]:
    """Letters-only runs fold case and compatibility forms; runs with digits stay exact."""
    if not _HAS_DIGIT.search(raw):
        return WORD, _fold(raw)
    if _HAS_LETTER.search(raw):
        return IDENT, raw
    return NUMBER, raw


def _classify_op(text: str, start: int, end: int) -> str | None:
    """Decide whether an operator-character run is an operator, a numeric form, or prose."""
    run = text[start:end]
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    touches_digit = _is_digit(before) or _is_digit(after)
    if run.startswith("!") and _is_digit(before) and not run.startswith("!="):
        return NUMFORM
    if set(run) == {"-"} and len(run) > 1:
        return None
    alone = _is_gap(before) and _is_gap(after)
    if not (touches_digit or alone or _COMPARISON.intersection(run)):
        return None
    if len(run) > 1 and run.replace("−", "-") not in _KNOWN_MULTI_OPS:
        return NUMFORM
    return OP


def _is_digit(char: str) -> bool:
    return char.isdigit() or char in _SCRIPT_DIGITS


def _is_gap(char: str) -> bool:
    return char.isspace() or char in _BRACKETS
