"""OpenAI ``url_citation`` as the API really gives it (issue 20): the annotated span is the
inline link ``([domain](url?utm_source=openai))`` after the sentence it supports, and the URL
carries ``utm_source=openai``, which the captured page's URL does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from records.inputs import UNQUOTED, parse_document
from records.offset_units import slice_in
from records.urls import without_tracking
from tests.http_fixtures import LoopbackServer
from tests.inputs.conftest import FIXTURES, NOWHERE
from tests.records.conftest import Backend

SENTENCES = (
    "Tiered caching cut origin load tenfold",
    " The median hit ratio reached 87.5 percent in 2024.",
)


def linked_answer(base: str) -> tuple[dict[str, Any], str]:
    """A Responses API answer: one link before a sentence's full stop, one after it."""
    first = f" ([example.org]({base}/report.txt?utm_source=openai))"
    second = f" ([example.org]({base}/guide.txt?utm_source=openai))"
    text = SENTENCES[0] + first + "." + SENTENCES[1] + second
    spans = [
        (len(SENTENCES[0]) + 1, len(SENTENCES[0]) + len(first), f"{base}/report.txt"),
        (len(text) - len(second) + 1, len(text), f"{base}/guide.txt"),
    ]
    notes = [
        {"type": "url_citation", "start_index": a, "end_index": b, "url": f"{u}?utm_source=openai"}
        for a, b, u in spans
    ]
    part = {"type": "output_text", "text": text, "annotations": notes}
    message = {"type": "message", "role": "assistant", "content": [part]}
    return {"id": "resp_1", "object": "response", "output": [message]}, text


def test_the_claim_is_the_sentence_around_the_link_not_the_link() -> None:
    document, text = linked_answer(NOWHERE)
    first, second = parse_document(document).requests
    assert first.kind == second.kind == UNQUOTED
    assert first.claim_text == "Tiered caching cut origin load tenfold"
    assert second.claim_text == "The median hit ratio reached 87.5 percent in 2024."
    for request in (first, second):
        assert request.claim is not None
        assert request.claim.span is not None
        for unit, span in request.claim.span.items():
            assert slice_in(text, unit, dict(span)) == request.claim.text
    assert first.url == f"{NOWHERE}/report.txt?utm_source=openai"  # kept as given


def test_a_page_captured_without_utm_source_is_the_cited_page(
    backend: Backend, tmp_path: Path, http_server: LoopbackServer
) -> None:
    for name in ("report.txt", "guide.txt"):
        body = (FIXTURES / name).read_bytes()
        http_server.route(f"/{name}", body=body, content_type="text/plain; charset=utf-8")
    base = http_server.url("").rstrip("/")
    for name in ("report.txt", "guide.txt"):
        assert backend.snap("fetch", f"{base}/{name}").returncode == 0
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(linked_answer(base)[0]), encoding="utf-8")
    done = backend.snap("verify", "--json", str(path))
    assert done.returncode == 1, done.stderr  # no_quote never passes
    results = json.loads(done.stdout)["results"]
    assert [r["status"] for r in results] == ["no_quote", "no_quote"]
    assert all(r["snapshotId"] for r in results)
    assert results[0]["url"] == f"{base}/report.txt?utm_source=openai"
    pinned = tmp_path / "pinned.json"
    citation = {
        "url": f"{base}/report.txt?utm_source=openai",
        "snapshotId": results[0]["snapshotId"],
        "quote": "In 2024 the median cache hit ratio",
    }
    pinned.write_text(json.dumps(citation), encoding="utf-8")
    checked = backend.snap("verify", "--json", str(pinned))
    assert json.loads(checked.stdout)["results"][0]["status"] == "quote_found", checked.stdout
    human = backend.snap("verify", str(path)).stdout
    assert "claim: Tiered caching cut origin load tenfold" in human
    assert "claim: ([" not in human


NAMES = st.sampled_from(["utm_source", "UTM_medium", "utm_", "id", "q", "utmost", "source"])
FIELDS = st.lists(st.tuples(NAMES, st.text("abc=%", max_size=4)), max_size=5)


@given(FIELDS)
def test_only_utm_parameters_are_dropped_and_the_rest_kept_in_order(
    fields: list[tuple[str, str]],
) -> None:
    query = "&".join(f"{name}={value}" for name, value in fields)
    url = f"https://example.org/a?{query}" if query else "https://example.org/a"
    kept = [f"{n}={v}" for n, v in fields if not n.lower().startswith("utm_")]
    untracked = without_tracking(url)
    if len(kept) == len(fields):
        assert untracked is None  # nothing to drop: the URL is looked up once, as given
    else:
        assert untracked == "https://example.org/a" + ("?" + "&".join(kept) if kept else "")
        assert without_tracking(untracked) is None


WORDS = st.text("abc xyz,é🚀", min_size=1, max_size=30).filter(lambda t: t.strip() != "")


@given(WORDS, WORDS, st.sampled_from([".", ""]), st.sampled_from(["", " More."]))
def test_a_link_claim_is_a_slice_of_the_answer_without_the_link(
    earlier: str, sentence: str, stop: str, after: str
) -> None:
    link = " ([a.org](https://a.org/p?utm_source=openai))"
    text = f"{earlier}. {sentence}{stop}{link}{after}"
    start = text.index(link) + 1
    (request,) = parse_document(
        {
            "object": "response",
            "output": [
                {
                    "type": "message",
                    "content": [
                        {
                            "type": "output_text",
                            "text": text,
                            "annotations": [
                                {
                                    "type": "url_citation",
                                    "start_index": start,
                                    "end_index": start + len(link) - 1,
                                    "url": "https://a.org/p?utm_source=openai",
                                }
                            ],
                        }
                    ],
                }
            ],
        }
    ).requests
    assert request.claim is not None
    assert request.claim.span is not None
    assert request.claim.text == (sentence + stop).strip()
    for unit, span in request.claim.span.items():
        assert slice_in(text, unit, dict(span)) == request.claim.text
