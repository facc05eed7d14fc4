"""The JSON a user's scripts read from ``snap verify``, ``snap reverify`` and ``snap fetch``
(``--json``), pinned as ``test_records_wire_shapes.py`` pins the others: every key, in order,
every value's type, and the words that name a state.

``snap verify`` and ``snap reverify`` print a result per citation (``CitationResult``) and a
summary; the HTTP service's ``POST /v1/verify`` and ``POST /v1/reverify`` and the MCP
``verify`` tool answer the same documents through the same serialisers. The citations below
reach every status the two commands print with their own keys: found (with the quote, the
spans and offsets), not found (the closest passage and its alignment), a position and a
context mismatch (where the quote is), a quote that cannot be checked, an unknown snapshot,
an answer's claims (the share verified, a quote found in another source of the answer), a
source that changed, a refetch that failed, and a run continued from its recorded checks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend
from tests.records.test_records_wire_shapes import QUOTE, run_json, shapes_found, types_not_pinned
from tests.records.wire_shapes_checks_pinned import PINNED

TIDE_QUOTE = "The tide tables for the harbour were first printed in 1902"
MORE = (
    "<p>The town grew around the harbour through the following decades, and the fishing"
    " fleet that had sheltered in the river mouth moved inside the wall. Boats are still built"
    " on the slipway by the old customs house, and the lifeboat station keeps its records of"
    " every launch since the first one.</p>"
)


def page(title: str, *paragraphs: str) -> bytes:
    """A page long enough to be checked (not ``too_short``)."""
    body = "".join(f"<p>{text}</p>" for text in paragraphs)
    return (
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"{body}{MORE}</article></body></html>"
    ).encode()


HARBOUR = page("The harbour", f"{QUOTE}, after two storms.", "Ships still moor there.")
TIDE = page("Tides", f"{TIDE_QUOTE}, by the harbour master.", "They are printed each winter.")
TIDE_LATER = page("Tides", "The tide tables are now published online by the port authority.")


def citations(harbour: str, tide: str, never: str) -> list[dict[str, Any]]:
    """One citation for each status ``snap verify`` reports with keys of its own."""
    return [
        {"citationId": "found", "url": harbour, "quote": QUOTE},
        {
            "citationId": "gone",
            "url": harbour,
            "quote": "The harbour wall was finished in the autumn of 1891",
        },
        {
            "citationId": "moved",
            "url": harbour,
            "selector": {
                "quote": {"exact": QUOTE},
                "position": {"start": 100, "end": 100 + len(QUOTE)},
            },
        },
        {
            "citationId": "context",
            "url": harbour,
            "selector": {"quote": {"exact": QUOTE, "prefix": "Nothing like ", "suffix": ""}},
        },
        {"citationId": "elided", "url": harbour, "quote": "The harbour wall … in 1891"},
        {"citationId": "never", "url": never, "quote": "The harbour was never built"},
        {"citationId": "tide", "url": tide, "quote": TIDE_QUOTE},
    ]


def answer(harbour: str, tide: str) -> dict[str, Any]:
    """Claims of one answer: one found, one quoting the other source (``foundElsewhere``),
    one quoting nothing (the passage closest to the claim)."""
    return {
        "answerId": "a-1",
        "claims": [
            {"text": "The wall is from 1891.", "url": harbour, "quote": QUOTE},
            {"text": "The tides were printed.", "url": tide, "quote": QUOTE},
            {"text": "The harbour has a lifeboat station.", "url": harbour},
        ],
    }


@pytest.fixture
def documents(backend: Backend, http_server: LoopbackServer, tmp_path: Path) -> dict[str, Any]:
    """Two captured pages, citations of every kind verified, the tide page changed, then
    ``reverify --refetch`` (a source changed, a refetch failed) and the same run again
    (every result read back from the records)."""
    http_server.route("/harbour", body=HARBOUR)
    http_server.route("/tide", body=TIDE)
    harbour, tide = http_server.url("/harbour"), http_server.url("/tide")
    never = http_server.url("/never")  # not routed: a 404
    fetched = run_json(backend, "fetch", harbour)
    run_json(backend, "fetch", tide)
    cited = tmp_path / "citations.json"
    cited.write_text(json.dumps(citations(harbour, tide, never)))
    verified = run_json(backend, "verify", str(cited), code=1)
    answered = tmp_path / "answer.json"
    answered.write_text(json.dumps(answer(harbour, tide)))
    verified_answer = run_json(backend, "verify", str(answered), code=1)
    http_server.route("/tide", body=TIDE_LATER)
    reverified = failed_urls_named(run_json(backend, "reverify", "--refetch", code=1), never)
    run = reverified["summary"]["runId"]
    return {
        "fetch": fetched,
        "verify": verified,
        "verify ANSWER": verified_answer,
        "reverify --refetch": reverified,
        "reverify --run": run_json(backend, "reverify", "--run", run, code=1),
    }


def failed_urls_named(document: dict[str, Any], url: str) -> dict[str, Any]:
    """The summary's ``refetchErrors`` is keyed by URL; the loopback port changes each run."""
    errors = document["summary"]["refetchErrors"]
    assert list(errors) == [url]
    document["summary"]["refetchErrors"] = {"URL": errors[url]}
    return document


def test_every_check_wire_shape_is_as_pinned(documents: dict[str, Any]) -> None:
    found = shapes_found(documents)
    assert list(found) == list(PINNED)  # every key, in order, and no other
    assert types_not_pinned(found, PINNED) == {}
