"""verifier: pure functions that prove a quote is in its source text (no I/O).

A quote passes only by a normalized exact token match (see ``verifier.tokenizer`` for what
is normalized and what is kept exact); similarity is only ever shown as the closest passage.
Positions are Unicode code points; ``verifier.offsets`` converts to and from UTF-16.
"""

from verifier.matcher import (
    COULD_NOT_CHECK,
    NOT_FOUND,
    QUOTE_FOUND,
    VERIFIER_ID,
    Closest,
    PreparedSource,
    QuoteCheck,
    check_quote,
    normalized_digest,
    prepare,
)
from verifier.offsets import codepoint_to_utf16, utf16_to_codepoint
from verifier.resolve import POSITION_MISMATCH, Resolution, resolve
from verifier.selectors import (
    TextPositionSelector,
    TextQuoteSelector,
    describe_span,
    position_from_utf16,
)
from verifier.tokenizer import NORMALIZER_ID, Token, token_keys, tokenize

__all__ = [
    "COULD_NOT_CHECK",
    "NORMALIZER_ID",
    "NOT_FOUND",
    "POSITION_MISMATCH",
    "QUOTE_FOUND",
    "VERIFIER_ID",
    "Closest",
    "PreparedSource",
    "QuoteCheck",
    "Resolution",
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
]
