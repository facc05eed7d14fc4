"""RFC 8785 (JSON Canonicalization Scheme) bytes, written by the standard library's C encoder
where that gives the same bytes, and by the ``rfc8785`` package everywhere else.

Every capture's manifest and every log leaf is canonicalised, two or three documents a page in a
bulk capture, and the ``rfc8785`` package (pure Python, a regular-expression substitution per
string) costs about 35 µs a manifest, six times what ``json``'s C encoder costs. For the values
snap writes the two agree byte for byte: JCS is sorted keys, no whitespace, the escapes of
``json`` with ``ensure_ascii=False`` (``\\" \\\\ \\b \\f \\n \\r \\t`` and ``\\u00xx`` in lower
case for the other control characters), integers as digits. They differ only where JCS asks for
more than ``json`` does, and such values are handed to ``rfc8785`` (which writes or refuses
them): a float (ECMAScript number form), an integer beyond ±(2**53 − 1) (refused), a key that
is not a string (refused), and an object key with a character at or above U+D800 (JCS sorts keys
by UTF-16 code units, ``json`` by code points; the two orders agree below U+D800). A string
holding a lone surrogate cannot be UTF-8 and is refused (as ``rfc8785`` refuses it in a value;
in a key the package lets Python's UnicodeEncodeError out, which becomes the same refusal). A
property test holds ``canonical_json`` equal to ``rfc8785.dumps`` on arbitrary JSON values,
both failing alike.
"""

from __future__ import annotations

import json
from typing import Any, Final

import rfc8785

CanonicalizationError = rfc8785.CanonicalizationError

_SAFE_INTEGER: Final = 2**53 - 1
_FIRST_UNIT_SORTED_APART: Final = "\ud800"  # from here UTF-16 and code point orders can differ
_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, check_circular=False
)


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 bytes of a JSON value; CanonicalizationError for what JCS cannot hold."""
    if _written_alike(value):
        try:
            return _ENCODER.encode(value).encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: refused below, in rfc8785's words
    try:
        return rfc8785.dumps(value)
    except UnicodeEncodeError:  # a lone surrogate in a key, which rfc8785 lets through
        raise CanonicalizationError("input contains non-UTF-8 codepoints") from None


def _written_alike(value: Any) -> bool:
    """Whether ``json``'s encoder writes ``value`` exactly as RFC 8785 does."""
    if value is None or isinstance(value, str | bool):
        return True
    if isinstance(value, int):
        return -_SAFE_INTEGER <= value <= _SAFE_INTEGER
    if isinstance(value, dict):
        return all(
            isinstance(key, str) and _sorts_alike(key) and _written_alike(item)
            for key, item in value.items()
        )
    if isinstance(value, list | tuple):
        return all(_written_alike(item) for item in value)
    return False


def _sorts_alike(key: str) -> bool:
    return key.isascii() or max(key) < _FIRST_UNIT_SORTED_APART
