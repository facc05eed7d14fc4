"""verifier: pure functions that prove a quote is in its source text (no I/O).

Exact by default: a quote passes only when every character equals the source's, except the
documented copy noise (see ``verifier.tokenizer``); similarity is only ever shown as the
closest passage.  Positions are Unicode code points; ``verifier.offsets`` converts to and
from UTF-16 and UTF-8.  Statuses are ``verifier.status.Status``; errors ``verifier.errors``.

The names below are loaded on first use (PEP 562): importing ``verifier.errors`` or
``verifier.status`` alone does not compile the tokenizer's patterns, so a command that never
checks a quote does not pay for them.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them; at run time, __getattr__
    from verifier.closest import Closest as Closest
    from verifier.code import NO_CODE as NO_CODE
    from verifier.code import CodeSpans as CodeSpans
    from verifier.matcher import COULD_NOT_CHECK as COULD_NOT_CHECK
    from verifier.matcher import NOT_FOUND as NOT_FOUND
    from verifier.matcher import QUOTE_FOUND as QUOTE_FOUND
    from verifier.matcher import VERIFIER_ID as VERIFIER_ID
    from verifier.matcher import PreparedSource as PreparedSource
    from verifier.matcher import QuoteCheck as QuoteCheck
    from verifier.matcher import check_quote as check_quote
    from verifier.matcher import normalized_digest as normalized_digest
    from verifier.matcher import prepare as prepare
    from verifier.offsets import TextOffsets as TextOffsets
    from verifier.offsets import codepoint_to_utf16 as codepoint_to_utf16
    from verifier.offsets import utf16_to_codepoint as utf16_to_codepoint
    from verifier.resolve import CONTEXT_MISMATCH as CONTEXT_MISMATCH
    from verifier.resolve import POSITION_MISMATCH as POSITION_MISMATCH
    from verifier.resolve import Resolution as Resolution
    from verifier.resolve import resolve as resolve
    from verifier.selectors import TextPositionSelector as TextPositionSelector
    from verifier.selectors import TextQuoteSelector as TextQuoteSelector
    from verifier.selectors import describe_span as describe_span
    from verifier.selectors import position_from_utf16 as position_from_utf16
    from verifier.status import Status as Status
    from verifier.tokenizer import NORMALIZER_ID as NORMALIZER_ID
    from verifier.tokenizer import Token as Token
    from verifier.tokenizer import token_keys as token_keys
    from verifier.tokenizer import tokenize as tokenize
    from verifier.tokenizer import word_keys as word_keys

_HOMES = {
    "verifier.closest": ("Closest",),
    "verifier.code": ("NO_CODE", "CodeSpans"),
    "verifier.matcher": (
        "COULD_NOT_CHECK",
        "NOT_FOUND",
        "QUOTE_FOUND",
        "VERIFIER_ID",
        "PreparedSource",
        "QuoteCheck",
        "check_quote",
        "normalized_digest",
        "prepare",
    ),
    "verifier.offsets": ("TextOffsets", "codepoint_to_utf16", "utf16_to_codepoint"),
    "verifier.resolve": ("CONTEXT_MISMATCH", "POSITION_MISMATCH", "Resolution", "resolve"),
    "verifier.selectors": (
        "TextPositionSelector",
        "TextQuoteSelector",
        "describe_span",
        "position_from_utf16",
    ),
    "verifier.status": ("Status",),
    "verifier.tokenizer": ("NORMALIZER_ID", "Token", "token_keys", "tokenize", "word_keys"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "CONTEXT_MISMATCH",
    "COULD_NOT_CHECK",
    "NORMALIZER_ID",
    "NOT_FOUND",
    "NO_CODE",
    "POSITION_MISMATCH",
    "QUOTE_FOUND",
    "VERIFIER_ID",
    "Closest",
    "CodeSpans",
    "PreparedSource",
    "QuoteCheck",
    "Resolution",
    "Status",
    "TextOffsets",
    "TextPositionSelector",
    "TextQuoteSelector",
    "Token",
    "check_quote",
    "codepoint_to_utf16",
    "describe_span",
    "normalized_digest",
    "position_from_utf16",
    "prepare",
    "resolve",
    "token_keys",
    "tokenize",
    "utf16_to_codepoint",
    "word_keys",
]


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'verifier' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """The package, whose ``resolve`` is always the function, never the submodule.

    Importing ``verifier.resolve`` makes the import system bind the submodule to the package's
    attribute of the same name, so ``from verifier import resolve`` gave the module or the
    function depending on what had been imported first.  Binding a submodule over one of the
    names above binds the name instead (the submodule stays in ``sys.modules``, and ``from
    verifier.resolve import ...`` reaches it as ever).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and value.__name__ == _HOME_OF.get(name):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
