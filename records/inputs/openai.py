"""OpenAI Responses API and Chat Completions responses.

``url_citation`` annotations carry no quote: the sentence the annotated span belongs to is the
claim (the span itself is the inline link ``([domain](url))``) and the URL its source, so snap
can prove the source was captured, never that it supports the claim (status ``no_quote``,
with the passage of the source closest to the claim as a hint). OpenAI appends
``utm_source=openai`` to the URL; captures are looked up without it (``records.urls``).
``file_citation`` names a file; the text of ``file_search_call.results`` for that file is a
quote and is checked. Files map to sources through ``--documents`` (by file id or filename).
"""

from __future__ import annotations

from typing import Any

from records.inputs.build import cited, provider_input, web_source
from records.inputs.claims import linked_claim, sentence_claim
from records.inputs.documents import DocumentMap, Source
from records.inputs.fields import Field
from records.inputs.model import UNQUOTED, CitationRequest, VerifyInput

NAME = "OpenAI"


def parse(document: Any, documents: DocumentMap) -> VerifyInput:
    root = Field(document)
    answer_id = root.child("id").optional_str()
    if isinstance(document, dict) and isinstance(document.get("output"), list):
        requests = responses_citations(root, documents, answer_id)
    else:
        requests = chat_citations(root, documents, answer_id)
    return provider_input(root, requests, NAME, answer_id)


def responses_citations(
    root: Field, documents: DocumentMap, answer_id: str | None
) -> list[CitationRequest]:
    output = list(root.child("output").items())
    results = file_search_results(output)
    parts = [
        part
        for item in output
        if item.child("type").value == "message"
        for part in item.child("content").optional_items()
        if part.child("type").value == "output_text"
    ]
    requests: list[CitationRequest] = []
    for part in parts:
        text = part.child("text").text(empty=True)
        for note in part.child("annotations").optional_items():
            kind = note.child("type").value
            if kind == "url_citation":
                requests.append(url_citation(note, text, documents, answer_id))
            elif kind == "file_citation":
                requests += file_citation(note, text, documents, results, answer_id)
    return requests


def chat_citations(
    root: Field, documents: DocumentMap, answer_id: str | None
) -> list[CitationRequest]:
    requests: list[CitationRequest] = []
    for choice in root.child("choices").items():
        message = choice.child("message")
        if message.value is None:
            continue
        text = message.child("content").value
        text = text if isinstance(text, str) else ""
        for note in message.child("annotations").optional_items():
            if note.child("type").value == "url_citation":
                inner = note.child("url_citation") if note.has("url_citation") else note
                requests.append(url_citation(inner, text, documents, answer_id))
    return requests


def url_citation(
    note: Field, text: str, documents: DocumentMap, answer_id: str | None
) -> CitationRequest:
    url = note.child("url").text()
    start = note.child("start_index").integer()
    end = note.child("end_index").integer()
    if start > end:
        raise note.fail(f"start_index ({start}) is after end_index ({end})")
    claim = linked_claim(text, start, end)
    details: dict[str, Any] = {"provider": NAME, "citationType": "url_citation"}
    if claim is None:
        details["claimProblem"] = f"the span {start}–{end} does not lie in the answer text"
    title = note.child("title").optional_str()
    source = (
        documents.lookup(url, title)
        or web_source(url)
        or Source(problem=f"the cited URL {url!r} is not an http(s) URL")
    )
    return cited(
        note,
        quote=None,
        source=source,
        claim=claim,
        answer_id=answer_id,
        kind=UNQUOTED,
        details=details,
    )


def file_search_results(output: list[Field]) -> dict[str, list[Field]]:
    """``file_search_call.results`` with text, by file id."""
    by_file: dict[str, list[Field]] = {}
    for item in output:
        if item.child("type").value != "file_search_call":
            continue
        for result in item.child("results").optional_items():
            file_id = result.child("file_id").optional_str()
            if file_id is not None and result.child("text").optional_str() is not None:
                by_file.setdefault(file_id, []).append(result)
    return by_file


def file_citation(
    note: Field,
    text: str,
    documents: DocumentMap,
    results: dict[str, list[Field]],
    answer_id: str | None,
) -> list[CitationRequest]:
    """A cited file: each retrieved passage of it is a quote; without one, nothing is quoted."""
    file_id = note.child("file_id").text()
    filename = note.child("filename").optional_str()
    index = note.child("index").optional_int()
    claim = sentence_claim(text, index) if index is not None else None
    source = documents.lookup(file_id, filename) or Source(
        problem=f"file {file_id}{f' ({filename})' if filename else ''} is not mapped; "
        "name its URL or snapshot with --documents"
    )
    details = {"provider": NAME, "citationType": "file_citation", "fileId": file_id}
    passages = results.get(file_id, [])
    if not passages:
        return [
            cited(
                note,
                quote=None,
                source=source,
                claim=claim,
                answer_id=answer_id,
                kind=UNQUOTED,
                details=details,
            )
        ]
    return [
        cited(
            passage.child("text"),
            quote=passage.child("text").text(),
            source=source,
            claim=claim,
            answer_id=answer_id,
            details=details,
        )
        for passage in passages
    ]
