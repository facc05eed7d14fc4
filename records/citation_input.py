"""Kept so existing imports keep working: input reading now lives in ``records.inputs``."""

from records.inputs import (
    ANNOTATION_ID_PREFIX,
    CitationRequest,
    Position,
    VerifyInput,
    load_verify_input,
    parse_document,
)

__all__ = [
    "ANNOTATION_ID_PREFIX",
    "CitationRequest",
    "Position",
    "VerifyInput",
    "load_verify_input",
    "parse_document",
]
