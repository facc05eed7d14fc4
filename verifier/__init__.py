"""verifier: pure functions that prove a quote is in its source text (no I/O).

Exact by default: a quote passes only when every character equals the source's, except the
documented copy noise (see ``verifier.tokenizer``); similarity is only ever shown as the
closest passage.  Positions are Unicode code points; ``verifier.offsets`` converts to and
from UTF-16.  Statuses are ``verifier.status.Status``.
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
from verifier.resolve import CONTEXT_MISMATCH, POSITION_MISMATCH, Resolution, resolve
from verifier.selectors import (
    TextPositionSelector,
    TextQuoteSelector,
    describe_span,
    position_from_utf16,
)
from verifier.status import Status
from verifier.tokenizer import NORMALIZER_ID, Token, token_keys, tokenize

__all__ = [
    "CONTEXT_MISMATCH",
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
    "Status",
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
