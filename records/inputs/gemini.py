"""Google Gemini ``groundingMetadata`` (generateContent responses, REST camelCase or the Python
SDK's snake_case dump).

Each grounding support names a segment of the answer (``startIndex``/``endIndex`` are UTF-8
byte offsets into the part's text) and the chunks that support it. A ``retrievedContext``
chunk carries the retrieved text: it is a quote and is checked. A ``web`` chunk carries only a
URI (often a grounding redirect, followed at capture, whose final URL is recorded): it is
``no_quote``, like OpenAI's URL citations.
"""

from __future__ import annotations

from typing import Any

from records.inputs.build import cited, provider_input, web_source
from records.inputs.claims import claim_at
from records.inputs.documents import DocumentMap, Source
from records.inputs.fields import Field
from records.inputs.model import CitationRequest, Claim, VerifyInput
from records.offset_units import utf8_to_codepoint
from verifier.errors import OffsetError

NAME = "Gemini"


def parse(document: Any, documents: DocumentMap) -> VerifyInput:
    root = Field(document)
    answer_id = root.first("responseId", "response_id").optional_str()
    requests: list[CitationRequest] = []
    for candidate in root.child("candidates").items():
        metadata = candidate.first("groundingMetadata", "grounding_metadata")
        if metadata.value is None:
            continue
        parts = part_texts(candidate)
        chunks = list(metadata.first("groundingChunks", "grounding_chunks").optional_items())
        for support in metadata.first("groundingSupports", "grounding_supports").optional_items():
            requests += support_citations(support, parts, chunks, documents, answer_id)
    return provider_input(root, requests, NAME, answer_id)


def part_texts(candidate: Field) -> list[str]:
    content = candidate.child("content")
    if content.value is None:
        return []
    return [
        part.child("text").value if isinstance(part.child("text").value, str) else ""
        for part in content.child("parts").optional_items()
    ]


def segment_claim(segment: Field, parts: list[str]) -> tuple[Claim | None, dict[str, Any]]:
    """The segment as a claim, its byte offsets converted against the part's text; the
    segment's own ``text`` is what the claim is when the offsets cannot be used."""
    part_index = segment.first("partIndex", "part_index").optional_int() or 0
    start = segment.first("startIndex", "start_index").optional_int() or 0
    end = segment.first("endIndex", "end_index").integer()
    stated = segment.child("text").value
    if part_index >= len(parts):
        problem = f"part {part_index} does not exist"
    else:
        before = sum(len(text) for text in parts[:part_index])
        text = parts[part_index]
        try:
            first, last = utf8_to_codepoint(text, start), utf8_to_codepoint(text, end)
        except OffsetError as error:
            problem = error.message
        else:
            claim = claim_at("".join(parts), before + first, before + last)
            if claim is not None and (not isinstance(stated, str) or stated == claim.text):
                return claim, {}
            problem = "the segment's text differs from the answer at its byte offsets"
    fallback = Claim(stated) if isinstance(stated, str) and stated.strip() else None
    return fallback, {"claimProblem": problem}


def support_citations(
    support: Field,
    parts: list[str],
    chunks: list[Field],
    documents: DocumentMap,
    answer_id: str | None,
) -> list[CitationRequest]:
    claim, problem = segment_claim(support.child("segment"), parts)
    requests = []
    indices = support.first("groundingChunkIndices", "grounding_chunk_indices")
    for position in indices.optional_items():
        index = position.integer()
        if index >= len(chunks):
            raise position.fail(f"no grounding chunk {index} (there are {len(chunks)})")
        requests.append(chunk_citation(chunks[index], index, claim, problem, documents, answer_id))
    return requests


def chunk_citation(
    chunk: Field,
    index: int,
    claim: Claim | None,
    problem: dict[str, Any],
    documents: DocumentMap,
    answer_id: str | None,
) -> CitationRequest:
    details: dict[str, Any] = {"provider": NAME, "chunkIndex": index, **problem}
    context = chunk.first("retrievedContext", "retrieved_context")
    if context.value is not None:
        uri = context.child("uri").optional_str()
        title = context.child("title").optional_str()
        details["citationType"] = "retrievedContext"
        source = (
            documents.lookup(uri, title, index)
            or web_source(uri)
            or Source(
                problem=f"retrieved context {uri or title or index!r} is not a web URL; "
                "map it with --documents"
            )
        )
        quote = context.child("text").optional_str()
        return cited(
            context, quote=quote, source=source, claim=claim, answer_id=answer_id, details=details
        )
    web = chunk.child("web")
    uri = web.child("uri").text()
    details["citationType"] = "web"
    source = (
        documents.lookup(uri, web.child("title").optional_str(), index)
        or web_source(uri)
        or Source(problem=f"the chunk's URI {uri!r} is not an http(s) URL")
    )
    return cited(web, quote=None, source=source, claim=claim, answer_id=answer_id, details=details)
