"""Which adapter reads an input: the one place that knows every accepted format.

Adapters are tried in order, each recognising its own shape; providers come before snap's own
formats because snap's minimal ``{"url", "quote"}`` shape is the loosest. An input no adapter
recognises is refused with one line naming every accepted format. A provider's shape is told
by ``shapes`` and its adapter imported only then (most inputs are in snap's own format).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from records.inputs import shapes, snap_formats
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


# In the order tried: the adapter module (records.inputs.<name>) and its shape.
PROVIDERS: tuple[tuple[str, Callable[[Any], bool]], ...] = (
    ("anthropic", shapes.is_anthropic),
    ("perplexity", shapes.is_perplexity),
    ("openai", shapes.is_openai),
    ("gemini", shapes.is_gemini),
)


def adapter_of(document: Any) -> tuple[str, Parse] | None:
    """The name of the format ``document`` is in and its parser, or ``None``."""
    for module, recognises in PROVIDERS:
        if recognises(document):
            adapter = importlib.import_module(f"records.inputs.{module}")
            name: str = adapter.NAME
            parse: Parse = adapter.parse
            return name, parse
    if snap_formats.recognises(document):
        return "snap", lambda document, _docs: snap_formats.parse(document)
    return None


def detect(document: Any) -> str | None:
    """The name of the format ``document`` is in, or ``None``."""
    found = adapter_of(document)
    return None if found is None else found[0]


def parse_document(document: Any, documents: DocumentMap = NO_DOCUMENTS) -> VerifyInput:
    """``document`` (parsed JSON) as the internal request, by the adapter recognising it."""
    found = adapter_of(document)
    if found is None and _is_list_of_answers(document):
        raise InputError(
            "a list of answers is not read as one input: give each answer ({answerId, claims})"
            " in a file of its own, or its claims as a list of citations"
        )
    if found is None:
        raise InputError(f"expected a JSON object or list in a format snap reads: {ACCEPTED}")
    name, parse = found
    return replace(parse(document, documents), input_format=name)


def _is_list_of_answers(document: Any) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(item, dict) and "claims" in item for item in document)
    )


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
    except InputError as error:  # its own class kept: NothingToCheck is told apart by it
        raise type(error)(f"{name}: {error.message}") from None
