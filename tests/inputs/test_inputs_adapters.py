"""Each provider's response becomes the one internal request: quotes, sources, claims."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from records.inputs import SNIPPET, UNQUOTED, detect, parse_document
from records.inputs.documents import parse_document_map
from records.inputs.reader import load_json_input, parse_input_bytes
from records.offset_units import CODEPOINT, slice_in
from snap.errors import InputError
from tests.inputs.conftest import FIXTURES, NOWHERE, fixture, fixture_text


def test_claude_request_and_response_pair_maps_documents_by_index() -> None:
    given = parse_document(fixture("claude.json"))
    assert given.input_format == "Anthropic Messages"
    assert given.is_answer
    assert given.answer_id == "msg_01HCDu5LRGeP2o7s2xGmxyx8"
    first, second = given.requests
    assert first.url == f"{NOWHERE}/report.txt"
    assert second.url == f"{NOWHERE}/guide.txt"
    assert first.quote is not None
    assert first.quote.exact.startswith("In 2024 the median cache hit ratio")
    assert first.claim_text == "the median cache hit ratio reached 87.5 percent in 2024"
    assert first.details["positionHint"] == {"start_char_index": 27, "end_char_index": 132}
    assert first.position is None  # Anthropic's indices are a hint, never the proof


def test_claude_claim_span_is_the_block_in_the_whole_answer_in_three_units() -> None:
    given = parse_document(fixture("claude.json"))
    answer = "".join(b["text"] for b in fixture("claude.json")["response"]["content"])
    for request in given.requests:
        assert request.claim is not None
        assert request.claim.span is not None
        for unit, span in request.claim.span.items():
            assert slice_in(answer, unit, dict(span)) == request.claim.text


def test_claude_web_search_citations_quote_the_page() -> None:
    (request,) = parse_document(fixture("claude_web_search.json")).requests
    assert request.url == f"{NOWHERE}/guide.txt"
    assert request.details["citationType"] == "web_search_result_location"
    assert request.quote is not None
    assert "300 seconds" in request.quote.exact


def test_claude_pdf_pages_one_page_is_checked_a_range_is_a_hint() -> None:
    documents = parse_document_map({"0": "sha256:" + "ab" * 32})
    one, ranged = parse_document(fixture("claude_pdf_pages.json"), documents).requests
    assert one.page == "2"
    assert one.snapshot_id == "sha256:" + "ab" * 32
    assert ranged.page is None
    assert ranged.details["pages"] == {"start": 2, "end": 4}


def test_claude_inline_document_without_a_mapping_says_how_to_map_it() -> None:
    one, _ = parse_document(fixture("claude_pdf_pages.json")).requests
    assert one.url is None
    assert one.snapshot_id is None
    assert "--documents" in one.details["sourceProblem"]
    assert "base64" in one.details["sourceProblem"]


def test_claude_streaming_transcript_is_assembled(tmp_path: Path) -> None:
    events = load_json_input(FIXTURES / "claude_stream.sse")
    assert detect(events) == "Anthropic Messages"
    documents = parse_document_map(["https://127.0.0.1:9/report.txt"])
    (request,) = parse_document(events, documents).requests
    assert request.claim_text == "tiered caching cut origin load tenfold"
    assert request.url == "https://127.0.0.1:9/report.txt"
    assert request.answer_id == "msg_01StreamQ8eY2H1sKxTgV4nP"
    assert request.claim is not None
    assert request.claim.span is not None
    assert request.claim.span["codepoint"] == {"start": 16, "end": 54}


def stream_events(transcript: str) -> Any:
    return parse_input_bytes(transcript.encode("utf-8"), "stream.sse")


def test_a_cut_or_failed_claude_stream_is_refused_not_checked_in_part() -> None:
    """A transcript cut before message_stop, or ending in an error event, may be missing the
    answer's last words and citations: it is refused with why, never checked as if whole."""
    whole = (FIXTURES / "claude_stream.sse").read_text(encoding="utf-8")
    cut = whole[: whole.index("event: message_delta")]
    with pytest.raises(InputError, match="ends before its message_stop event"):
        parse_document(stream_events(cut))
    overloaded = {"type": "overloaded_error", "message": "Overloaded"}
    error = f"event: error\ndata: {json.dumps({'type': 'error', 'error': overloaded})}\n"
    failed = cut + error
    assert detect(stream_events(failed)) == "Anthropic Messages"
    with pytest.raises(InputError, match=r"error event \(overloaded_error: Overloaded\)"):
        parse_document(stream_events(failed))
    assert parse_document(stream_events(whole)).requests  # the whole stream is checked


def test_a_stream_cut_inside_an_event_names_the_transcript_line() -> None:
    """The JSON parser sees one event's data, always its own line 1; the message names the
    line of the transcript, and a cut inside the last event says the stream may be cut."""
    whole = (FIXTURES / "claude_stream.sse").read_text(encoding="utf-8")
    lines = whole.splitlines(keepends=True)
    last_data = max(n for n, line in enumerate(lines) if line.startswith("data:"))
    cut = "\n\n" + "".join(lines[:last_data]) + lines[last_data][:12]
    with pytest.raises(InputError) as refused:
        parse_input_bytes(cut.encode(), "stream.sse")
    message = refused.value.message
    assert message.startswith(f"stream.sse: line {last_data + 3}, an event's data: not valid JSON")
    assert message.endswith("(the stream is cut short inside its last event?)")
    assert "at column" in message
    assert "at line" not in message
    first_data = min(n for n, line in enumerate(lines) if line.startswith("data:"))
    broken = [*lines[:first_data], "data: {oops}\n", *lines[first_data + 1 :]]
    with pytest.raises(InputError, match=rf"^stream.sse: line {first_data + 1}, an event's data: "):
        parse_input_bytes("".join(broken).encode(), "stream.sse")


def test_openai_several_url_citations_on_one_sentence_are_unquoted_claims() -> None:
    given = parse_document(fixture("openai_responses.json"))
    assert given.input_format == "OpenAI"
    assert [r.kind for r in given.requests] == [UNQUOTED] * 3
    assert all(r.quote is None for r in given.requests)
    assert [r.url for r in given.requests] == [
        f"{NOWHERE}/report.txt",
        f"{NOWHERE}/guide.txt",
        f"{NOWHERE}/report.txt?utm_source=openai",
    ]
    assert given.requests[2].claim_text == "Tiered caching cut origin load tenfold"
    assert given.requests[0].claim_text is not None
    assert given.requests[0].claim_text.endswith("87.5 percent in 2024.")


def test_openai_chat_completions_annotations() -> None:
    (request,) = parse_document(fixture("openai_chat.json")).requests
    assert request.kind == UNQUOTED
    assert request.claim_text == "A max-age of 300 seconds suits static assets."
    assert request.answer_id == "chatcmpl-BVk2nGq7ZsYV1c9xH3jM0aQ2"


def test_openai_file_search_text_is_a_quote_and_an_unmapped_file_says_so() -> None:
    documents = parse_document_map({"file-2dtbBZdjtDKS8eqWxqbgDi": f"{NOWHERE}/report.txt"})
    quoted, unmapped = parse_document(fixture("openai_file_search.json"), documents).requests
    assert quoted.quote is not None
    assert quoted.quote.exact.startswith("Origin load fell")
    assert quoted.url == f"{NOWHERE}/report.txt"
    assert quoted.claim_text == "Enabling tiered caching cut origin load tenfold."
    assert unmapped.kind == UNQUOTED
    assert "file-9XoQm3uVd1Lk7pTz4aBcEf" in unmapped.details["sourceProblem"]


def test_gemini_byte_offsets_after_non_ascii_text_give_the_segment() -> None:
    web, retrieved = parse_document(fixture("gemini.json")).requests
    segment = "the median cache hit ratio was 87.5 percent in 2024."
    for request in (web, retrieved):
        assert request.claim_text == segment
        assert request.claim is not None
        assert request.claim.span is not None
        assert request.claim.span["utf8"] == {"start": 48, "end": 100}
        assert request.claim.span["codepoint"]["start"] == 41
        assert request.claim.span["utf16"]["start"] == 42  # the rocket takes two UTF-16 units
    assert web.kind == UNQUOTED
    assert retrieved.quote is not None
    assert retrieved.quote.exact.startswith("In 2024 the median")


def test_gemini_snake_case_sdk_dump_is_read_too() -> None:
    text = fixture_text("gemini.json")
    for camel, snake in (
        ("groundingMetadata", "grounding_metadata"),
        ("groundingChunks", "grounding_chunks"),
        ("groundingSupports", "grounding_supports"),
        ("groundingChunkIndices", "grounding_chunk_indices"),
        ("retrievedContext", "retrieved_context"),
        ("startIndex", "start_index"),
        ("endIndex", "end_index"),
    ):
        text = text.replace(camel, snake)
    import json

    requests = parse_document(json.loads(text)).requests
    assert [r.claim_text for r in requests] == [
        "the median cache hit ratio was 87.5 percent in 2024."
    ] * 2


def test_gemini_offset_inside_a_character_keeps_the_segment_text_and_says_why() -> None:
    document = fixture("gemini.json")
    document["candidates"][0]["groundingMetadata"]["groundingSupports"][0]["segment"][
        "startIndex"
    ] = 17  # inside "ö"
    web, _ = parse_document(document).requests
    assert web.claim_text == "the median cache hit ratio was 87.5 percent in 2024."
    assert web.claim is not None
    assert web.claim.span is None
    assert "inside a character" in web.details["claimProblem"]


def test_perplexity_snippets_are_checked_and_claims_found_by_marker() -> None:
    given = parse_document(fixture("perplexity.json"))
    assert given.input_format == "Perplexity"
    first, second = given.requests
    assert [first.kind, second.kind] == [SNIPPET, SNIPPET]
    assert first.claim_text == "Tiered caching cut origin load by a factor of ten [1]."
    assert second.claim_text is not None
    assert second.claim_text.startswith("Static assets")


@pytest.mark.parametrize(
    ("answer", "claims"),
    [
        (
            "Deploys happen every Tuesday.[1] Purge by tag instead of by URL.[2]\n\n- More",
            ["Deploys happen every Tuesday.", "Purge by tag instead of by URL."],
        ),
        (
            "It cut load tenfold.[2][1] Zürich p95 was 41 ms.",
            ["It cut load tenfold.", "It cut load tenfold."],
        ),
        (
            "Deploys happen every Tuesday [1]. Purge by tag [2].",
            ["Deploys happen every Tuesday [1].", "Purge by tag [2]."],
        ),
    ],
)
def test_a_perplexity_marker_belongs_to_the_sentence_it_follows(
    answer: str, claims: list[str]
) -> None:
    """Markers after the full stop (Perplexity writes "…Tuesday.[1] Purge…") mark the sentence
    before them, as markers before the full stop do."""
    document = fixture("perplexity.json")
    document["choices"][0]["message"]["content"] = answer
    requests = parse_document(document).requests
    assert [r.claim_text for r in requests] == claims
    for request in requests:
        assert request.claim is not None
        assert request.claim.span is not None
        span = request.claim.span[CODEPOINT]
        assert answer[span["start"] : span["end"]] == request.claim_text


def test_perplexity_bare_citations_quote_nothing() -> None:
    document = fixture("perplexity.json")
    del document["search_results"]
    requests = parse_document(document).requests
    assert [r.kind for r in requests] == [UNQUOTED, UNQUOTED]


def test_snap_formats_are_still_recognised_first_for_their_shapes() -> None:
    assert detect({"url": "https://127.0.0.1:9/a", "quote": "x"}) == "snap"
    assert detect({"claims": []}) == "snap"
    assert detect({"citations": [{"url": "u", "quote": "q"}]}) == "snap"


@pytest.mark.parametrize("document", [{}, {"hello": 1}, [1, 2], "text", 3, None])
def test_unrecognised_shapes_name_every_accepted_format(document: object) -> None:
    with pytest.raises(InputError) as caught:
        parse_document(document)
    message = caught.value.message
    for name in ("Anthropic", "OpenAI", "Gemini", "Perplexity", "snap citation JSON"):
        assert name in message


def test_a_response_without_citations_is_refused_with_one_line() -> None:
    bare = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "No sources."}],
    }
    with pytest.raises(InputError, match="no citations to check"):
        parse_document(bare)


def test_wrong_field_types_name_the_path() -> None:
    document = fixture("claude.json")
    document["response"]["content"][1]["citations"][0]["cited_text"] = 5
    with pytest.raises(
        InputError, match=r"content\[1\]\.citations\[0\]\.cited_text: expected a string"
    ):
        parse_document(document)


def test_claude_search_result_and_content_block_citations() -> None:
    message = {
        "id": "msg_01Rag7",
        "type": "message",
        "role": "assistant",
        "content": [
            {
                "type": "text",
                "text": "Tiered caching helps.",
                "citations": [
                    {
                        "type": "search_result_location",
                        "source": "https://127.0.0.1:9/kb/caching",
                        "title": "Caching KB",
                        "cited_text": "Tiered caching cuts origin load.",
                        "search_result_index": 0,
                        "start_block_index": 0,
                        "end_block_index": 1,
                    },
                    {
                        "type": "content_block_location",
                        "cited_text": "Purge by tag.",
                        "document_index": 2,
                        "document_title": "Runbook",
                        "start_block_index": 3,
                        "end_block_index": 4,
                    },
                ],
            }
        ],
    }
    documents = parse_document_map({"Runbook": "sha256:" + "cd" * 32})
    search, block = parse_document(message, documents).requests
    assert search.url == "https://127.0.0.1:9/kb/caching"
    assert search.details["positionHint"]["search_result_index"] == 0
    assert block.snapshot_id == "sha256:" + "cd" * 32
    assert block.details["positionHint"] == {"start_block_index": 3, "end_block_index": 4}


def test_a_documents_map_of_the_wrong_shape_names_the_entry() -> None:
    with pytest.raises(InputError, match=r"^0: expected a string, got a number"):
        parse_document_map({"0": 5})
