"""Building the internal request from what a provider adapter found: one place decides how a
quote, a source and a claim become a ``CitationRequest``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from records.inputs.documents import Source
from records.inputs.fields import MAX_STRING_ID, Field
from records.inputs.model import QUOTED, UNQUOTED, CitationRequest, Claim, VerifyInput
from verifier import TextQuoteSelector

WEB_SCHEMES = ("http://", "https://")


def web_source(url: str | None) -> Source | None:
    """A URL snap may capture on behalf of model output (http and https only)."""
    if url and url.lower().startswith(WEB_SCHEMES):
        return Source(url=url)
    return None


def cited(
    where: Field,
    *,
    quote: str | None,
    source: Source,
    claim: Claim | None,
    answer_id: str | None,
    kind: str = QUOTED,
    details: Mapping[str, Any] | None = None,
) -> CitationRequest:
    """One citation; an empty quote makes it an unquoted one (it names a source only)."""
    if quote is None or not quote.strip():
        kind = UNQUOTED
    extra = dict(details or {})
    if source.problem is not None:
        extra["sourceProblem"] = source.problem
    return CitationRequest(
        label=where.path,
        quote=None if kind == UNQUOTED or quote is None else TextQuoteSelector(quote),
        url=source.url,
        snapshot_id=source.snapshot_id,
        claim_text=claim.text if claim else None,
        claim=claim,
        answer_id=answer_id[:MAX_STRING_ID] if answer_id else None,
        kind=kind,
        details=extra,
    )


def provider_input(
    where: Field, requests: Sequence[CitationRequest], provider: str, answer_id: str | None
) -> VerifyInput:
    """A provider's answer as input; an answer that cites nothing is refused (nothing to check)."""
    if not requests:
        from records.errors import NothingToCheck

        problem = f"this {provider} response carries no citations to check"
        raise NothingToCheck(f"{where.path or '(top level)'}: {problem}")
    tagged = tuple(unique_labels(requests))
    return VerifyInput(tagged, is_answer=True, answer_id=answer_id, input_format=provider)


def unique_labels(requests: Sequence[CitationRequest]) -> list[CitationRequest]:
    """Labels are paths; a path giving two requests (one support, two chunks) gets a suffix."""
    counts = Counter(r.label for r in requests)
    seen: Counter[str] = Counter()
    out = []
    for request in requests:
        if counts[request.label] > 1:
            seen[request.label] += 1
            request = replace(request, label=f"{request.label}#{seen[request.label]}")
        out.append(request)
    return out
