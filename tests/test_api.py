"""``snap.api``: a RAG pipeline's one-line verification, and the rendered answer."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from records.wire import citation_result_json, stored_capture_json
from snap.api import CLOSEST, Workspace, capture_json, result_json, unproven_because
from snap.errors import InputError
from tests.http_fixtures import LoopbackServer
from tests.mcp.support import CHANGED, FOUND, PAGE
from verifier.status import Status


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    loopback = (ipaddress.ip_network("127.0.0.1/32"),)
    opened = Workspace.open(tmp_path / "home", allow_networks=loopback)
    yield opened
    opened.close()


def test_render_keeps_marks_only_on_found_quotes(workspace: Workspace, tmp_path: Path) -> None:
    with LoopbackServer() as pages:
        pages.route("/cache.html", body=PAGE.encode())
        record = workspace.capture(pages.url("/cache.html"))
    answer = {
        "claims": [
            {
                "text": "A tenth reaches the origin.",
                "snapshotId": record.snapshot_id,
                "quote": FOUND,
            },
            {"text": "One in a thousand.", "snapshotId": record.snapshot_id, "quote": CHANGED},
        ]
    }
    saved = tmp_path / "response.json"
    saved.write_text(json.dumps(answer), encoding="utf-8")
    verified = workspace.verify_answer(saved)
    assert verified.rate == 0.5
    assert not verified.passed
    rendered = verified.render()
    found_line = next(line for line in rendered.splitlines() if FOUND in line)
    assert f"“{FOUND}”" in found_line
    start = verified.results[0].outcome.start
    assert f"snap://snapshots/{record.snapshot_id}/text#char={start}," in found_line
    changed_line = next(line for line in rendered.splitlines() if CHANGED in line)
    assert "“" not in changed_line
    assert "”" not in changed_line
    assert f"{CLOSEST} (score" in rendered
    assert "1 request in 100" in rendered.split(CLOSEST)[1]
    assert rendered.index("A tenth") < rendered.index(FOUND) < rendered.index("One in a thousand")
    assert workspace.verify_answer(answer).rate == 0.5  # the parsed JSON, the same


def test_the_documents_are_those_of_the_command_line(workspace: Workspace) -> None:
    """``capture_json`` and ``result_json`` give what ``snap fetch --json`` and ``snap verify
    --json`` print: the same serialisers (records.wire)."""
    with LoopbackServer() as pages:
        pages.route("/cache.html", body=PAGE.encode())
        record = workspace.capture(pages.url("/cache.html"))
    captured = capture_json(record)
    assert captured == stored_capture_json(record)
    assert captured["snapshotId"] == record.snapshot_id
    verified = workspace.verify_answer({"snapshotId": record.snapshot_id, "quote": FOUND})
    [result] = verified.results
    assert result_json(result) == citation_result_json(result)
    assert result_json(result)["status"] == "quote_found"
    assert verified.to_json() == [result_json(result)]


def test_capture_is_web_only(workspace: Workspace) -> None:
    with pytest.raises(InputError):
        workspace.capture("/etc/passwd")


@pytest.mark.parametrize("status", [s for s in Status if not s.passed])
def test_an_unproven_quote_says_why_and_only_not_found_reads_as_not_found(status: Status) -> None:
    """A copy whose digest or seal fails is not a quote "not found in the source": the reader
    is told the evidence does not hold, in the status's own meaning."""
    said = unproven_because(status)
    assert said.endswith(f"({status.value})")
    assert ("not found in the source" in said) == (status is Status.NOT_FOUND)
    if status is Status.INTEGRITY_FAILURE:
        assert "seal" in said
        assert "hash to their digest" in said
