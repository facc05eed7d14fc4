"""Everything ``snap verify`` reads: one bounded input reader and one adapter per format.

``reader`` reads any file or stream within limits; ``detect`` picks the adapter; each adapter
(snap's own formats, W3C annotations, Anthropic, OpenAI, Gemini, Perplexity) turns its format
into the one internal ``CitationRequest``.
"""

from records.inputs.detect import (
    ACCEPTED,
    detect,
    load_verify_input,
    parse_document,
    verify_input_from_bytes,
)
from records.inputs.documents import DocumentMap, load_document_map
from records.inputs.model import (
    QUOTED,
    SNIPPET,
    UNQUOTED,
    CitationRequest,
    Claim,
    Position,
    VerifyInput,
)
from records.inputs.w3c import ANNOTATION_ID_PREFIX

__all__ = [
    "ACCEPTED",
    "ANNOTATION_ID_PREFIX",
    "QUOTED",
    "SNIPPET",
    "UNQUOTED",
    "CitationRequest",
    "Claim",
    "DocumentMap",
    "Position",
    "VerifyInput",
    "detect",
    "load_document_map",
    "load_verify_input",
    "parse_document",
    "verify_input_from_bytes",
]
