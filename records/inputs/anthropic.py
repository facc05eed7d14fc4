"""Anthropic Messages API responses: text blocks carrying ``citations``.

Accepted: one message, a list of messages (a conversation), a ``{"request", "response"}``
pair, and a streaming transcript (its events, or the saved server-sent-events text) which is
assembled into the message first. Every citation type carries ``cited_text``: that is the
quote, and the text block holding the citation is the claim. Anthropic does not document
whether its character indices count code points or UTF-16 units, so ``start_char_index`` and
friends are kept as a position hint only, never used as proof.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from records.inputs.build import cited, provider_input, web_source
from records.inputs.claims import claim_at
from records.inputs.documents import DocumentMap, Source
from records.inputs.fields import Field
from records.inputs.model import CitationRequest, GivenDocument, VerifyInput
from records.inputs.shapes import is_stream

NAME = "Anthropic Messages"
HINT_FIELDS = (
    "start_char_index",
    "end_char_index",
    "start_page_number",
    "end_page_number",
    "start_block_index",
    "end_block_index",
    "search_result_index",
)


def parse(document: Any, documents: DocumentMap) -> VerifyInput:
    root = Field(document)
    request_messages: list[Field] = []
    if isinstance(document, dict) and "request" in document:
        request_messages = list(root.child("request").child("messages").optional_items())
        answers = messages_of(root.child("response"))
    else:
        answers = messages_of(root)
    conversation = [*request_messages, *answers]
    given = DocumentsInRequest(conversation, documents)
    requests: list[CitationRequest] = []
    answer_ids: list[str | None] = []
    for message in answers:
        if message.child("role").value not in (None, "assistant"):
            continue
        answer_id = message.child("id").optional_str()
        answer_ids.append(answer_id)
        requests += message_citations(message, given, answer_id)
    parsed = provider_input(root, requests, NAME, answer_ids[0] if len(answer_ids) == 1 else None)
    return replace(parsed, documents=given.every_document())


def messages_of(root: Field) -> list[Field]:
    if is_stream(root.value):
        return [Field(assemble_stream(root), root.path)]
    if isinstance(root.value, list):
        return list(root.items())
    return [root]


def assemble_stream(events: Field) -> dict[str, Any]:
    """The message a streaming transcript describes: text deltas appended, ``citations_delta``
    citations added to their block. Only a whole stream is checked: one that ends in an
    ``error`` event, or before ``message_stop`` (a transcript cut short), is refused, since the
    answer it carries may be missing its last words and citations."""
    message: dict[str, Any] = {"content": []}
    blocks: dict[int, dict[str, Any]] = {}
    stopped = False
    for event in events.items():
        kind = event.child("type").value
        stopped = stopped or kind == "message_stop"
        if kind == "error":
            raise event.fail(f"the stream ended in an error event ({stream_error(event)})")
        if kind == "message_start":
            message = {**event.child("message").obj(), "content": []}
        elif kind == "content_block_start":
            block = dict(event.child("content_block").obj())
            block.setdefault("citations", [])
            blocks[event.child("index").integer()] = block
        elif kind == "content_block_delta":
            apply_delta(event, blocks)
    if not stopped:
        raise events.fail(
            "the stream ends before its message_stop event: the transcript was cut short,"
            " and a cut answer is not checked"
        )
    message["content"] = [blocks[index] for index in sorted(blocks)]
    message.setdefault("role", "assistant")
    return message


def stream_error(event: Field) -> str:
    """An error event's type and message, as the API sent them (bounded)."""
    error = event.child("error")
    if not isinstance(error.value, dict):
        return "no details"
    kind, text = error.value.get("type"), error.value.get("message")
    return ": ".join(str(part)[:200] for part in (kind, text) if part) or "no details"


def apply_delta(event: Field, blocks: dict[int, dict[str, Any]]) -> None:
    index = event.child("index")
    block = blocks.get(index.integer())
    if block is None:
        raise index.fail("a delta for a content block that was never started")
    delta = event.child("delta")
    kind = delta.child("type").value
    if kind == "text_delta":
        block["text"] = str(block.get("text") or "") + delta.child("text").text(empty=True)
    elif kind == "citations_delta":
        citations = block.get("citations")
        block["citations"] = [
            *(citations if isinstance(citations, list) else []),
            delta.child("citation").obj(),
        ]


class DocumentsInRequest:
    """Documents given to the model, numbered as ``document_index`` counts them: every
    ``document`` block of the conversation, in order. A ``--documents`` entry wins."""

    def __init__(self, conversation: list[Field], mapped: DocumentMap) -> None:
        self.mapped = mapped
        self.blocks: list[Field] = []
        for message in conversation:
            content = message.child("content") if isinstance(message.value, dict) else None
            if content is None or not isinstance(content.value, list):
                continue
            self.blocks += [b for b in content.items() if block_type(b) == "document"]

    def every_document(self) -> tuple[GivenDocument, ...]:
        """Every document of the request snap can find a source for."""
        found = []
        for index, block in enumerate(self.blocks):
            title = block.child("title").value if isinstance(block.value, dict) else None
            source = self.source(index, title if isinstance(title, str) else None)
            if source.url or source.snapshot_id:
                found.append(GivenDocument(index, source.url, source.snapshot_id))
        return tuple(found)

    def source(self, index: int | None, title: str | None) -> Source:
        found = self.mapped.lookup(index, title)
        if found is not None:
            return found
        if index is not None and 0 <= index < len(self.blocks):
            return source_of_block(self.blocks[index], index)
        name = f"document {index}" + (f" ({title!r})" if title else "")
        return Source(
            problem=f"{name} is not in the request and not mapped; name its URL or snapshot "
            "with --documents"
        )


def block_type(block: Field) -> Any:
    return block.value.get("type") if isinstance(block.value, dict) else None


def source_of_block(block: Field, index: int) -> Source:
    source = block.child("source")
    kind = source.child("type").value if isinstance(source.value, dict) else None
    if kind == "url":
        url = source.child("url").text()
        return web_source(url) or Source(problem=f"document {index} has a non-web URL {url!r}")
    return Source(
        problem=f"document {index} was given to the model as {kind or 'inline'} content; "
        "capture it (snap fetch FILE, or snap fetch - for standard input) and map it with "
        "--documents"
    )


def message_citations(
    message: Field, given: DocumentsInRequest, answer_id: str | None
) -> list[CitationRequest]:
    content = message.child("content")
    if isinstance(content.value, str):
        return []
    answer, spans = answer_text(content)
    requests = []
    for block, (start, end) in zip(content.items(), spans, strict=True):
        if block_type(block) != "text":
            continue
        claim = claim_at(answer, start, end)
        for citation in block.child("citations").optional_items():
            requests.append(one_citation(citation, given, claim, answer_id))
    return requests


def answer_text(content: Field) -> tuple[str, list[tuple[int, int]]]:
    """The answer as a reader sees it (its text blocks joined) and each block's span in it."""
    pieces, spans, cursor = [], [], 0
    for block in content.items():
        text = block.child("text").text(empty=True) if block_type(block) == "text" else ""
        pieces.append(text)
        spans.append((cursor, cursor + len(text)))
        cursor += len(text)
    return "".join(pieces), spans


def one_citation(
    citation: Field, given: DocumentsInRequest, claim: Any, answer_id: str | None
) -> CitationRequest:
    kind = citation.child("type").text()
    quote = citation.child("cited_text").optional_str()
    details: dict[str, Any] = {"provider": NAME, "citationType": kind}
    hints = {name: citation.child(name).integer() for name in HINT_FIELDS if citation.has(name)}
    if hints:
        details["positionHint"] = hints
    page = None
    if kind == "web_search_result_location":
        url = citation.child("url").text()
        source = (
            given.mapped.lookup(url)
            or web_source(url)
            or Source(problem=f"the cited URL {url!r} is not an http(s) URL")
        )
    elif kind == "search_result_location":
        name = citation.child("source").optional_str()
        title = citation.child("title").optional_str()
        source = (
            given.mapped.lookup(name, title)
            or web_source(name)
            or Source(problem=f"search result {name!r} is not a web URL; map it with --documents")
        )
    else:
        index = citation.child("document_index").optional_int()
        title = citation.child("document_title").optional_str()
        details["documentIndex"] = index
        source = given.source(index, title)
        if kind == "page_location":
            page = single_page(citation, details)
    request = cited(
        citation, quote=quote, source=source, claim=claim, answer_id=answer_id, details=details
    )
    return request if page is None else replace(request, page=page)


def single_page(citation: Field, details: dict[str, Any]) -> str | None:
    """``page_location`` pages are 1-based, end exclusive: one page is checked as a page;
    a range is kept as a hint (the quote is then checked anywhere in the document)."""
    start = citation.child("start_page_number").integer(minimum=1)
    end = citation.child("end_page_number").integer(minimum=1)
    if end <= start + 1:
        return str(start)
    details["pages"] = {"start": start, "end": end}
    return None
