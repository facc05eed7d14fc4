"""snap's own input formats: a citation record, a list of them (also as written by
``snap verify --emit``), an answer with claims, and a minimal model-written ``{"url", "quote"}``.

Input never names a file or key in the store: a snapshot is only ever looked up by id in the
database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from records.inputs.fields import MAX_STRING_ID, Field
from records.inputs.model import UNQUOTED, CitationRequest, Claim, Position, VerifyInput
from records.inputs.w3c import (
    is_annotation,
    parse_annotation,
    parse_position,
    quote_selector,
    require_source,
)

MAX_PAGE = 100
UNCITED = "the claim cites no source (no 'url' or 'snapshotId')"
CITATION_KEYS = ("quote", "selector", "target", "snapshotId", "url")


def recognises(document: Any) -> bool:
    """A list, or an object shaped like one of snap's formats."""
    if isinstance(document, list):
        return all(isinstance(item, dict) and looks_like_citation(item) for item in document)
    if not isinstance(document, dict):
        return False
    if "claims" in document or looks_like_citation(document):
        return True
    emitted = document.get("citations", document.get("annotations"))
    return isinstance(emitted, list) and recognises(emitted)


def looks_like_citation(item: Mapping[str, Any]) -> bool:
    return is_annotation(item) or any(key in item for key in CITATION_KEYS)


def parse(document: Any) -> VerifyInput:
    root = Field(document)
    if isinstance(document, dict) and "claims" not in document:
        for key in ("citations", "annotations"):
            if isinstance(document.get(key), list):  # what `snap verify --emit` writes
                root = root.child(key)
                break
    if isinstance(root.value, list):
        if not root.value:
            raise root.fail("the list of citations is empty")
        requests = tuple(parse_item(item) for item in root.items())
        refuse_reused_ids(requests)
        return VerifyInput(requests)
    if isinstance(root.value, dict) and "claims" in root.value:
        return parse_answer(root)
    return VerifyInput((parse_item(root),))


def parse_answer(root: Field) -> VerifyInput:
    claims = root.child("claims")
    if not isinstance(claims.value, list) or not claims.value:
        raise claims.fail("expected a non-empty list of claims")
    answer_id = root.child("answerId").optional_str(longest=MAX_STRING_ID)
    requests = []
    for claim in claims.items():
        request = parse_claim(claim)
        claim_text = claim.child("text").optional_str()
        requests.append(
            replace(
                request,
                claim_text=claim_text,
                claim=Claim(claim_text) if claim_text else None,
                answer_id=answer_id,
            )
        )
    refuse_reused_ids(requests)
    return VerifyInput(tuple(requests), is_answer=True, answer_id=answer_id)


def parse_claim(claim: Field) -> CitationRequest:
    """One claim of an answer. A claim that quotes nothing (it names only a URL or snapshot)
    or cites no source is reported as such (``no_quote``, ``unknown_snapshot``) beside the
    others, not a reason to refuse the whole answer; a malformed citation still is."""
    fields = claim.obj()
    if is_annotation(fields) or any(key in fields for key in ("quote", "selector")):
        if any(key in fields for key in ("url", "snapshotId")) or is_annotation(fields):
            return parse_item(claim)
        quote, position = parse_selector(claim)
        return CitationRequest(
            label=claim.path,
            quote=quote,
            citation_id=claim.child("citationId").optional_str(longest=MAX_STRING_ID),
            position=position,
            details={"sourceProblem": UNCITED},
        )
    url = claim.child("url").optional_str()
    snapshot_id = claim.child("snapshotId").optional_str()
    return CitationRequest(
        label=claim.path,
        quote=None,
        citation_id=claim.child("citationId").optional_str(longest=MAX_STRING_ID),
        url=url,
        snapshot_id=snapshot_id,
        kind=UNQUOTED,
        details={} if url or snapshot_id else {"sourceProblem": UNCITED},
    )


def refuse_reused_ids(requests: Sequence[CitationRequest]) -> None:
    """One citationId for two different quotes in one file is a mistake in the file."""
    quotes: dict[str, tuple[str, str | None]] = {}
    for request in requests:
        if request.citation_id is None:
            continue
        exact = request.quote.exact if request.quote else None
        first = quotes.setdefault(request.citation_id, (request.label, exact))
        if first[1] != exact:
            raise Field(None, request.label).fail(
                f"citationId {request.citation_id!r} is also used by {first[0]} "
                "for a different quote"
            )


def parse_item(item: Field) -> CitationRequest:
    fields = item.obj()
    if is_annotation(fields):
        return parse_annotation(item)
    quote, position = parse_selector(item)
    request = CitationRequest(
        label=item.path or "citation",
        quote=quote,
        citation_id=item.child("citationId").optional_str(longest=MAX_STRING_ID),
        url=item.child("url").optional_str(),
        snapshot_id=item.child("snapshotId").optional_str(),
        position=position,
        page=optional_page(item.child("page")),
        hashes=parse_hashes(item.child("hashes")),
    )
    require_source(item, request)
    return request


def parse_selector(item: Field) -> tuple[Any, Position | None]:
    selector = item.child("selector")
    if selector.value is None:
        quote = item.child("quote")
        if quote.value is None:
            raise item.fail("needs a 'quote' (the quoted text) or a 'selector'")
        if isinstance(quote.value, dict):
            return quote_selector(quote), None
        return quote_selector(Field({"exact": quote.text()}, quote.path)), None
    inner = selector.child("quote")
    if not isinstance(inner.value, dict):
        raise inner.expected("an object with 'exact'")
    position = selector.child("position")
    parsed = None if position.value is None else parse_position(position)
    return quote_selector(inner), parsed


def optional_page(page: Field) -> str | None:
    if page.value is None:
        return None
    if isinstance(page.value, bool) or not isinstance(page.value, (str, int)):
        raise page.expected("a page label or number")
    if len(str(page.value)) > MAX_PAGE:
        raise page.fail(f"longer than {MAX_PAGE} characters")
    return str(page.value)


def parse_hashes(hashes: Field) -> Mapping[str, str] | None:
    if hashes.value is None:
        return None
    for kind in Field(list(hashes.obj())).items():
        value = hashes.child(kind.value)
        if value.value is not None:
            value.text()
    return {key: value for key, value in hashes.obj().items() if value is not None}
