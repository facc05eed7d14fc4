"""Perplexity chat completions: ``search_results`` (``url``, ``title``, ``snippet``) and the
older ``citations`` list of URLs, referenced from the answer as ``[1]``, ``[2]``…

A snippet is a search engine's excerpt, never promised to be verbatim: it is checked exactly,
and one that is not in the source is reported as ``snippet_not_verbatim`` (with the closest
passage), not as a fabricated quote. A result without a snippet, and a bare citation URL, quote
nothing (``no_quote``).
"""

from __future__ import annotations

from typing import Any

from records.inputs.build import cited, provider_input, web_source
from records.inputs.claims import marker_claim
from records.inputs.documents import DocumentMap, Source
from records.inputs.fields import Field
from records.inputs.model import SNIPPET, CitationRequest, VerifyInput

NAME = "Perplexity"


def parse(document: Any, documents: DocumentMap) -> VerifyInput:
    root = Field(document)
    answer_id = root.child("id").optional_str()
    answer = answer_text(root)
    requests: list[CitationRequest] = []
    covered = set()
    for number, result in enumerate(root.child("search_results").optional_items(), 1):
        url = result.child("url").text()
        covered.add(url)
        snippet = result.child("snippet").optional_str()
        requests.append(one(result, url, snippet, number, answer, documents, answer_id))
    for number, entry in enumerate(root.child("citations").optional_items(), 1):
        url = entry.text()
        if url not in covered:
            requests.append(one(entry, url, None, number, answer, documents, answer_id))
    return provider_input(root, requests, NAME, answer_id)


def answer_text(root: Field) -> str:
    for choice in root.child("choices").items():
        message = choice.child("message")
        if isinstance(message.value, dict) and isinstance(message.value.get("content"), str):
            return str(message.value["content"])
    return ""


def one(
    where: Field,
    url: str,
    snippet: str | None,
    number: int,
    answer: str,
    documents: DocumentMap,
    answer_id: str | None,
) -> CitationRequest:
    source = (
        documents.lookup(url)
        or web_source(url)
        or Source(problem=f"the cited URL {url!r} is not an http(s) URL")
    )
    details = {"provider": NAME, "citationType": "search_result", "reference": number}
    return cited(
        where,
        quote=snippet,
        source=source,
        claim=marker_claim(answer, number),
        answer_id=answer_id,
        kind=SNIPPET,
        details=details,
    )
