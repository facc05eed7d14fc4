"""Which provider's format a parsed input is in, told from its shape alone.

The checks are cheap and need none of the adapters, so ``detect`` imports a provider's parser
only for an input in that provider's format: a file in snap's own format (the common case)
loads no provider adapter at all.
"""

from __future__ import annotations

from typing import Any

STREAM_EVENTS = {
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
}


def is_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("content"), (list, str))
        and (value.get("type") == "message" or value.get("role") in ("assistant", "user"))
    )


def is_stream(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(e, dict) and str(e.get("type")) in STREAM_EVENTS for e in value)
        and any(e.get("type") == "message_start" for e in value)
    )


def is_anthropic(document: Any) -> bool:
    if isinstance(document, dict) and "request" in document and "response" in document:
        return True
    if isinstance(document, list):
        return is_stream(document) or (bool(document) and all(map(is_message, document)))
    return is_message(document)


def is_perplexity(document: Any) -> bool:
    if not isinstance(document, dict) or not isinstance(document.get("choices"), list):
        return False
    citations = document.get("citations")
    return isinstance(document.get("search_results"), list) or (
        isinstance(citations, list) and all(isinstance(c, str) for c in citations)
    )


def is_openai(document: Any) -> bool:
    if not isinstance(document, dict):
        return False
    if isinstance(document.get("output"), list):
        return bool(document.get("object", "response") == "response")
    choices = document.get("choices")
    return isinstance(choices, list) and document.get("object", "chat.completion") in (
        "chat.completion",
        "chat.completion.chunk",
    )


def is_gemini(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("candidates"), list)
