"""Reading what users hand to ``snap verify``: every accepted shape becomes a CitationRequest.

Accepted: a citation record, a list of them, an answer with claims, a W3C Web Annotation, and a
minimal model-written ``{"url", "quote"}``.  Input never names a file or key in the store: a
snapshot is only ever looked up by id in the database.  Every problem is one ``InputError`` line
naming the item and the field.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from snap.errors import InputError
from verifier import TextQuoteSelector

ANNOTATION_ID_PREFIX = "urn:snap:citation:"
UNITS = {"utf16": "utf16", "utf-16": "utf16", "codepoint": "codepoint", "codepoints": "codepoint"}


@dataclass(frozen=True)
class Position:
    start: int
    end: int
    unit: str  # "codepoint" | "utf16"


@dataclass(frozen=True)
class CitationRequest:
    """One citation to check, as the user gave it."""

    label: str  # "item 2" / "claim 3": where it came from, for messages
    quote: TextQuoteSelector
    citation_id: str | None = None
    url: str | None = None
    snapshot_id: str | None = None
    position: Position | None = None
    page: str | None = None
    hashes: Mapping[str, str] | None = None
    claim_text: str | None = None
    answer_id: str | None = None


@dataclass(frozen=True)
class VerifyInput:
    requests: tuple[CitationRequest, ...]
    is_answer: bool = False
    answer_id: str | None = None
    origin: str | None = None  # the file it came from, named in every later input error


def read_input_text(path: Path) -> str:
    """The file's text (``-`` is standard input); UTF-8, with or without a byte-order mark."""
    try:
        if str(path) == "-":
            return sys.stdin.buffer.read().decode("utf-8-sig")
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a JSON file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None


def load_verify_input(path: Path) -> VerifyInput:
    """Parse ``path``; any problem raises InputError naming the file."""
    text = read_input_text(path)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise InputError(f"{path}: the JSON is nested too deeply") from None
    try:
        parsed = parse_document(document)
    except InputError as exc:
        raise InputError(f"{path}: {exc.message}") from None
    except RecursionError:
        raise InputError(f"{path}: the JSON is nested too deeply") from None
    return replace(parsed, origin=str(path))


MAX_ID = 200  # the citation and answer id columns
MAX_PAGE = 100


def unstorable_text(value: Any) -> str | None:
    """Text no database column can hold: NUL (PostgreSQL refuses it) or a lone UTF-16
    surrogate (``\\ud800`` is valid JSON but not Unicode text). Refused at the door."""
    if isinstance(value, str):
        if "\x00" in value:
            return "a NUL character (\\u0000)"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone UTF-16 surrogate (such as \\ud800)"
        return None
    if isinstance(value, dict):
        parts = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        parts = value
    else:
        return None
    return next((problem for problem in map(unstorable_text, parts) if problem), None)


def parse_document(document: Any) -> VerifyInput:
    problem = unstorable_text(document)
    if problem is not None:
        raise InputError(f"the input contains {problem}, which is not text snap can store")
    if isinstance(document, dict) and "claims" not in document:
        emitted = document.get("citations", document.get("annotations"))
        if isinstance(emitted, list):  # what `snap verify --emit` writes
            document = emitted
    if isinstance(document, list):
        if not document:
            raise InputError("the list of citations is empty")
        requests = tuple(parse_item(item, f"item {n}") for n, item in enumerate(document, 1))
        refuse_reused_ids(requests)
        return VerifyInput(requests)
    if isinstance(document, dict) and "claims" in document:
        return parse_answer(document)
    if isinstance(document, dict):
        return VerifyInput((parse_item(document, "citation"),))
    raise InputError("expected a JSON object or a list of objects")


def parse_answer(document: dict[str, Any]) -> VerifyInput:
    claims = document["claims"]
    if not isinstance(claims, list) or not claims:
        raise InputError("'claims' must be a non-empty list")
    answer_id = optional_str(document, "answerId", "answer", longest=MAX_ID)
    requests = []
    for n, claim in enumerate(claims, 1):
        label = f"claim {n}"
        request = parse_item(claim, label)
        claim_text = optional_str(claim, "text", label)
        requests.append(replace(request, claim_text=claim_text, answer_id=answer_id))
    refuse_reused_ids(requests)
    return VerifyInput(tuple(requests), is_answer=True, answer_id=answer_id)


def refuse_reused_ids(requests: Sequence[CitationRequest]) -> None:
    """One citationId for two different quotes in one file is a mistake in the file."""
    quotes: dict[str, tuple[str, str]] = {}
    for request in requests:
        if request.citation_id is None:
            continue
        first = quotes.setdefault(request.citation_id, (request.label, request.quote.exact))
        if first[1] != request.quote.exact:
            raise InputError(
                f"{request.label}: citationId {request.citation_id!r} is also used by "
                f"{first[0]} for a different quote"
            )


def parse_item(item: Any, label: str) -> CitationRequest:
    if not isinstance(item, dict):
        raise InputError(f"{label}: expected a JSON object")
    if item.get("type") == "Annotation" or "target" in item:
        return parse_annotation(item, label)
    quote, position = parse_selector(item, label)
    request = CitationRequest(
        label=label,
        quote=quote,
        citation_id=optional_str(item, "citationId", label, longest=MAX_ID),
        url=optional_str(item, "url", label),
        snapshot_id=optional_str(item, "snapshotId", label),
        position=position,
        page=optional_page(item, label),
        hashes=parse_hashes(item, label),
    )
    require_source(request)
    return request


def parse_selector(item: dict[str, Any], label: str) -> tuple[TextQuoteSelector, Position | None]:
    selector = item.get("selector")
    if selector is None:
        quote = item.get("quote")
        if quote is None:
            raise InputError(f"{label}: needs a 'quote' (the quoted text) or a 'selector'")
        if isinstance(quote, dict):
            return quote_selector(quote, f"{label}: quote"), None
        return quote_selector({"exact": quote}, f"{label}: quote"), None
    if not isinstance(selector, dict):
        raise InputError(f"{label}: 'selector' must be an object")
    quote = selector.get("quote")
    if not isinstance(quote, dict):
        raise InputError(f"{label}: 'selector.quote' must be an object with 'exact'")
    position = selector.get("position")
    parsed = None if position is None else parse_position(position, f"{label}: selector.position")
    return quote_selector(quote, f"{label}: selector.quote"), parsed


def quote_selector(quote: Mapping[str, Any], label: str) -> TextQuoteSelector:
    exact = quote.get("exact")
    if not isinstance(exact, str) or not exact.strip():
        raise InputError(f"{label}: 'exact' must be a non-empty string")
    for field in ("prefix", "suffix"):
        if not isinstance(quote.get(field, ""), str):
            raise InputError(f"{label}: '{field}' must be a string")
    return TextQuoteSelector(exact, quote.get("prefix", ""), quote.get("suffix", ""))


def parse_position(position: Any, label: str, default_unit: str = "codepoint") -> Position:
    if not isinstance(position, dict):
        raise InputError(f"{label} must be an object with 'start' and 'end'")
    start, end = position.get("start"), position.get("end")
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{label}.{name} must be a whole number")
        if value < 0:
            raise InputError(f"{label}.{name} must not be negative")
    assert isinstance(start, int)
    assert isinstance(end, int)
    if start > end:
        raise InputError(f"{label}: start ({start}) is after end ({end})")
    unit = position.get("unit", default_unit)
    if unit not in UNITS:
        raise InputError(f"{label}.unit must be 'utf16' or 'codepoint', got {unit!r}")
    return Position(start, end, UNITS[unit])


def parse_annotation(item: dict[str, Any], label: str) -> CitationRequest:
    """A W3C Web Annotation: target.source, target.selector, and target.state.cached (our id)."""
    target = item.get("target")
    if not isinstance(target, dict):
        raise InputError(f"{label}: 'target' must be an object")
    selectors = target.get("selector")
    selectors = selectors if isinstance(selectors, list) else [selectors]
    quote, position = None, None
    for selector in selectors:
        if not isinstance(selector, dict):
            raise InputError(f"{label}: each target.selector must be an object")
        if selector.get("type") == "TextQuoteSelector":
            quote = quote_selector(selector, f"{label}: TextQuoteSelector")
        elif selector.get("type") == "TextPositionSelector":
            position = parse_position(selector, f"{label}: TextPositionSelector")
    if quote is None:
        raise InputError(f"{label}: the annotation has no TextQuoteSelector")
    state = target.get("state")
    cached = state.get("cached") if isinstance(state, dict) else None
    request = CitationRequest(
        label=label,
        quote=quote,
        citation_id=annotation_citation_id(optional_str(item, "id", label)),
        url=optional_str(target, "source", f"{label}: target"),
        snapshot_id=cached if isinstance(cached, str) else None,
        position=position,
    )
    require_source(request)
    return request


def annotation_citation_id(annotation_id: str | None) -> str | None:
    """Annotations snap wrote carry ``urn:snap:citation:<id>``; others keep their own IRI."""
    if annotation_id is None:
        return None
    return annotation_id.removeprefix(ANNOTATION_ID_PREFIX)[:200]


def optional_str(
    item: Mapping[str, Any], key: str, label: str, *, longest: int | None = None
) -> str | None:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InputError(f"{label}: '{key}' must be a non-empty string")
    if longest is not None and len(value) > longest:
        raise InputError(f"{label}: '{key}' is longer than {longest} characters")
    return value


def optional_page(item: Mapping[str, Any], label: str) -> str | None:
    page = item.get("page")
    if page is None:
        return None
    if isinstance(page, bool) or not isinstance(page, (str, int)):
        raise InputError(f"{label}: 'page' must be a page label or number")
    if len(str(page)) > MAX_PAGE:
        raise InputError(f"{label}: 'page' is longer than {MAX_PAGE} characters")
    return str(page)


def parse_hashes(item: Mapping[str, Any], label: str) -> Mapping[str, str] | None:
    hashes = item.get("hashes")
    if hashes is None:
        return None
    if not isinstance(hashes, dict) or not all(
        isinstance(value, str) or value is None for value in hashes.values()
    ):
        raise InputError(f"{label}: 'hashes' must map raw/text/norm to 'sha256:…' strings")
    return {key: value for key, value in hashes.items() if value is not None}


def require_source(request: CitationRequest) -> None:
    if request.snapshot_id is None and request.url is None:
        raise InputError(f"{request.label}: needs a 'snapshotId' or a 'url'")
