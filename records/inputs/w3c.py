"""W3C Web Annotations as input: ``target.source``, ``target.selector`` and
``target.state.cached`` (snap's snapshot id). The selectors are read by the one W3C selector
parser, ``verifier.selectors``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from records.inputs.fields import MAX_STRING_ID, Field
from records.inputs.model import CitationRequest, Position
from verifier import TextQuoteSelector
from verifier.errors import SelectorError
from verifier.selectors import position_unit

ANNOTATION_ID_PREFIX = "urn:snap:citation:"


def is_annotation(item: Mapping[str, Any]) -> bool:
    return item.get("type") == "Annotation" or "target" in item


def quote_selector(quote: Field) -> TextQuoteSelector:
    """A ``{"exact", "prefix", "suffix"}`` object, through the W3C parser."""
    fields = quote.obj()
    exact = quote.child("exact")
    exact.text()
    for name in ("prefix", "suffix"):
        if fields.get(name) is not None:
            quote.child(name).text(empty=True)
    try:
        return TextQuoteSelector.from_w3c({**fields, "type": "TextQuoteSelector"})
    except SelectorError as error:
        raise quote.fail(error.message) from None


def parse_annotation(item: Field) -> CitationRequest:
    target = item.child("target")
    target.obj()
    selectors = target.child("selector")
    listed = selectors.items() if isinstance(selectors.value, list) else iter([selectors])
    quote, position = None, None
    for selector in listed:
        kind = selector.child("type").value
        if kind == "TextQuoteSelector":
            quote = quote_selector(selector)
        elif kind == "TextPositionSelector":
            position = parse_position(selector)
    if quote is None:
        raise target.fail("the annotation has no TextQuoteSelector")
    state = target.child("state")
    cached = state.child("cached").value if isinstance(state.value, dict) else None
    request = CitationRequest(
        label=item.path or "annotation",
        quote=quote,
        citation_id=annotation_citation_id(item.child("id").optional_str()),
        url=target.child("source").optional_str(),
        snapshot_id=cached if isinstance(cached, str) else None,
        position=position,
    )
    require_source(item, request)
    return request


def parse_position(position: Field, default_unit: str = "codepoint") -> Position:
    position.obj()
    start = position.child("start").integer()
    end = position.child("end").integer()
    if start > end:
        raise position.fail(f"start ({start}) is after end ({end})")
    unit = position.child("unit")
    try:
        name = position_unit(default_unit if unit.value is None else unit.text())
    except SelectorError as error:
        raise unit.fail(str(error)) from None
    return Position(start, end, name)


def annotation_citation_id(annotation_id: str | None) -> str | None:
    """Annotations snap wrote carry ``urn:snap:citation:<id>``; others keep their own IRI."""
    if annotation_id is None:
        return None
    return annotation_id.removeprefix(ANNOTATION_ID_PREFIX)[:MAX_STRING_ID]


def require_source(item: Field, request: CitationRequest) -> None:
    if request.snapshot_id is None and request.url is None:
        raise item.fail("needs a 'snapshotId' or a 'url'")
