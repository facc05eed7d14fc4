"""The cap on citations per ``POST /v1/verify``, applied as early as each input shape allows.

A request of 1.2 million citations (a 56 MiB body) once took 2.4 GB and minutes of work. Now:

- a body that is a JSON list is counted item by item (``json.JSONDecoder.raw_decode``, each
  item dropped once decoded) before the real parse, so a list over the cap costs the memory of
  one item and stops at the first item over;
- an object holding a list (an answer's ``claims``, an emitted ``citations`` or
  ``annotations``) is counted after the JSON parse, before any citation is built;
- any other shape (a provider's response) is counted once its citations are built.

The counting never decides whether the input is valid: anything it does not follow is left to
the one input reader, which gives the usual one-line error.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from records.inputs.documents import DocumentMap
from records.inputs.model import VerifyInput
from snap.errors import InputTooLarge

NAME = "request body"
WHITESPACE = " \t\n\r"  # JSON's
LISTS = ("claims", "citations", "annotations")


def verify_input_within(body: bytes, documents: DocumentMap, most: int) -> VerifyInput:
    """The body through the one input reader, as ``snap verify`` reads a file, refusing more
    than ``most`` citations (413, ``InputTooLarge``)."""
    from records.inputs.detect import parse_named
    from records.inputs.reader import decode_text, parse_input_bytes

    refuse_over(items_up_to(decode_text(body, NAME), most + 1), most)
    document = parse_input_bytes(body, NAME)
    refuse_over(listed_citations(document), most)
    given = replace(parse_named(document, documents, NAME), origin=NAME)
    refuse_over(len(given.requests), most)
    return given


def items_up_to(text: str, enough: int) -> int:
    """How many items ``text`` has when it is a JSON list, counting no further than
    ``enough``; 0 when it is not a list or stops being one the decoder can follow."""
    decoder = json.JSONDecoder()
    index = skip(text, 0)
    if not text.startswith("[", index):
        return 0
    index = skip(text, index + 1)
    count = 0
    while count < enough and not text.startswith("]", index):
        try:
            _, index = decoder.raw_decode(text, index)
        except (ValueError, RecursionError):  # not JSON here: the reader says what is wrong
            return count
        count += 1
        index = skip(text, index)
        if not text.startswith(",", index):
            break
        index = skip(text, index + 1)
    return count


def skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in WHITESPACE:
        index += 1
    return index


def listed_citations(document: Any) -> int:
    """How many items the list of snap's own formats holds (0 when not one of those)."""
    if isinstance(document, dict):
        document = next((document[key] for key in LISTS if key in document), None)
    return len(document) if isinstance(document, list) else 0


def refuse_over(count: int, most: int) -> None:
    if count > most:
        raise InputTooLarge(
            f"{NAME}: more than {most} citations, the most one request may carry"
            " (snap serve --max-citations); send them in several requests"
        )
