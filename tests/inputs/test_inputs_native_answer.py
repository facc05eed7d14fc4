"""snap's own answer format (issue 20): one claim that cites no source, or names a URL but
quotes nothing, is reported as that claim's result; the rest of the answer is still checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from records.inputs import QUOTED, UNQUOTED, parse_document
from snap.cli import cli
from snap.errors import InputError

URL = "http://127.0.0.1:9/page"


def test_uncited_and_url_only_claims_become_requests() -> None:
    given = parse_document(
        {
            "answerId": "a-1",
            "claims": [
                {"text": "Quoted.", "url": URL, "quote": "opened in 1901"},
                {"text": "Only a URL.", "url": URL},
                {"text": "No source at all."},
                {"text": "A quote and no source.", "quote": "six years"},
            ],
        }
    )
    quoted, url_only, uncited, sourceless = given.requests
    assert quoted.kind == QUOTED
    assert (url_only.kind, url_only.url, url_only.quote) == (UNQUOTED, URL, None)
    assert "sourceProblem" not in url_only.details
    assert uncited.kind == UNQUOTED
    assert "cites no source" in uncited.details["sourceProblem"]
    assert sourceless.quote is not None
    assert sourceless.quote.exact == "six years"
    assert "cites no source" in sourceless.details["sourceProblem"]
    assert [r.claim_text for r in given.requests][2] == "No source at all."


def test_a_malformed_claim_still_refuses_the_answer() -> None:
    with pytest.raises(InputError, match=r"claims\[1\]\.url"):
        parse_document({"claims": [{"url": URL, "quote": "q"}, {"url": 3, "quote": "q"}]})


def test_each_claim_is_reported_end_to_end(tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    page.write_text("The harbour opened in 1901 after six years of work.\n", encoding="utf-8")
    env = {"SNAP_HOME": str(tmp_path / "home"), "SNAP_STORE": None, "SNAP_DATABASE_URL": None}
    runner = CliRunner()
    assert runner.invoke(cli, ["fetch", str(page)], env=env).exit_code == 0
    url = page.resolve().as_uri()
    answer = tmp_path / "answer.json"
    claims = [
        {"text": "It opened in 1901.", "url": url, "quote": "opened in 1901"},
        {"text": "It took six years.", "url": url},
        {"text": "It was the largest harbour."},
    ]
    answer.write_text(json.dumps({"answerId": "a-2", "claims": claims}), encoding="utf-8")
    result = runner.invoke(cli, ["verify", "--json", str(answer)], env=env)
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    statuses = [r["status"] for r in report["results"]]
    assert statuses == ["quote_found", "no_quote", "unknown_snapshot"]
    assert report["results"][1]["snapshotId"] is not None  # the URL was captured
    assert report["summary"]["answers"][0]["total"] == 3


def test_a_list_of_answers_is_refused_with_what_to_give_instead() -> None:
    answer = {"answerId": "a-1", "claims": [{"text": "t", "url": "https://x.test/", "quote": "q"}]}
    with pytest.raises(InputError, match="a list of answers is not read as one input") as raised:
        parse_document([answer, {**answer, "answerId": "a-2"}])
    assert "in a file of its own" in str(raised.value)
    with pytest.raises(InputError, match="in a format snap reads"):
        parse_document([answer, {"unrelated": 1}])  # not answers only: the general line
