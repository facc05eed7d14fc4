"""Which adapter reads an input: the one place that knows every accepted format.

Adapters are tried in order, each recognising its own shape; providers come before snap's own
formats because snap's minimal ``{"url", "quote"}`` shape is the loosest. An input no adapter
recognises is refused with one line naming every accepted format.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from records.inputs import anthropic, gemini, openai, perplexity, snap_formats
from records.inputs.documents import NO_DOCUMENTS, DocumentMap
from records.inputs.model import VerifyInput
from records.inputs.reader import load_json_input, parse_input_bytes
from snapshotter.errors import InputError

Parse = Callable[[Any, DocumentMap], VerifyInput]
ACCEPTED = (
    "snap citation JSON (a citation, a list, an answer with claims, a W3C Web Annotation), "
    "an Anthropic Messages response, an OpenAI Responses or Chat Completions response, "
    "a Gemini generateContent response, a Perplexity chat completion"
)


def adapters() -> list[tuple[str, Callable[[Any], bool], Parse]]:
    return [
        (anthropic.NAME, anthropic.recognises, anthropic.parse),
        (perplexity.NAME, perplexity.recognises, perplexity.parse),
        (openai.NAME, openai.recognises, openai.parse),
        (gemini.NAME, gemini.recognises, gemini.parse),
        ("snap", snap_formats.recognises, lambda document, _docs: snap_formats.parse(document)),
    ]


def detect(document: Any) -> str | None:
    """The name of the format ``document`` is in, or ``None``."""
    return next((name for name, recognises, _ in adapters() if recognises(document)), None)


def parse_document(document: Any, documents: DocumentMap = NO_DOCUMENTS) -> VerifyInput:
    """``document`` (parsed JSON) as the internal request, by the adapter recognising it."""
    for name, recognises, parse in adapters():
        if recognises(document):
            return replace(parse(document, documents), input_format=name)
    raise InputError(f"expected a JSON object or list in a format snap reads: {ACCEPTED}")


def load_verify_input(path: Path, documents: DocumentMap = NO_DOCUMENTS) -> VerifyInput:
    """Read ``path`` through the one input reader and parse it; errors name the file."""
    document = load_json_input(path)
    name = "standard input" if str(path) == "-" else str(path)
    return replace(parse_named(document, documents, name), origin=str(path))


def verify_input_from_bytes(
    data: bytes, name: str, documents: DocumentMap = NO_DOCUMENTS
) -> VerifyInput:
    """The same as ``load_verify_input`` for bytes already read within the input limit (an
    HTTP request body): the same formats, checks and one-line errors, named ``name``."""
    document = parse_input_bytes(data, name)
    return replace(parse_named(document, documents, name), origin=name)


def parse_named(document: Any, documents: DocumentMap, name: str) -> VerifyInput:
    try:
        return parse_document(document, documents)
    except InputError as error:
        raise InputError(f"{name}: {error.message}") from None
