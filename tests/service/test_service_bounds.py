"""What one request may cost: a cap on citations, and work that stops at the deadline."""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import records.reverify
import records.verify
from snap.config import Settings
from snap.service.app import DEFAULT_MAX_CITATIONS, ServiceConfig, openapi_document
from snap.service.cap import items_up_to
from tests.http_fixtures import LoopbackServer
from tests.service.conftest import client_for, embedded_settings
from tests.service.test_service_guards import assert_problem

# The module, not the function of the same name that records.inputs exports.
DETECT = importlib.import_module("records.inputs.detect")
TOO_MANY = (
    "request body: more than 3 citations, the most one request may carry"
    " (snap serve --max-citations); send them in several requests"
)


def citations(count: int) -> list[dict[str, str]]:
    return [{"url": f"http://127.0.0.1:9/p{i}", "quote": "a quote"} for i in range(count)]


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the inputs turned into citation requests (after the JSON parse)."""
    calls: list[int] = []
    real = DETECT.parse_named

    def counting(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(DETECT, "parse_named", counting)
    return calls


# --- the cap ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [citations(4), {"claims": citations(4)}, {"citations": citations(4)}],
    ids=["a list", "an answer's claims", "an emitted list"],
)
def test_more_citations_than_the_cap_are_413_before_any_is_built(
    settings: Settings, built: list[int], body: Any
) -> None:
    with client_for(ServiceConfig(settings, max_citations=3)) as capped:
        document = assert_problem(capped.post("/v1/verify", json=body), 413, TOO_MANY)
        assert document["errorType"] == "InputTooLarge"
        assert built == []  # refused after the JSON parse, before a citation was built
        fits = capped.post("/v1/verify", json=citations(3))
        assert fits.status_code == 200
        assert fits.json()["summary"]["total"] == 3


def test_the_cap_is_in_the_openapi_document(settings: Settings) -> None:
    with client_for(ServiceConfig(settings, max_citations=3)) as capped:
        operation = capped.get("/openapi.json").json()["paths"]["/v1/verify"]["post"]
    assert operation["x-max-citations"] == 3
    assert "At most 3 citations" in operation["requestBody"]["description"]
    printed = openapi_document()["paths"]["/v1/verify"]["post"]
    assert printed["x-max-citations"] == DEFAULT_MAX_CITATIONS == 10_000


def test_serve_takes_the_cap_and_header_timeout_as_options() -> None:
    from click.testing import CliRunner

    from snap.cli import cli

    shown = CliRunner().invoke(cli, ["serve", "--help"]).output
    assert "--max-citations" in shown
    assert "--header-timeout" in shown


# --- the deadline -----------------------------------------------------------------------------


def test_a_verify_past_its_deadline_stops_at_the_next_citation(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 checks of 0.1 s each under a 0.5 s limit: answered 504, and the thread stops there
    (it used to go on checking all 40 and record them after the client had its 504)."""
    checked: list[int] = []
    real = records.verify.check_planned

    def slow(*args: Any) -> Any:
        time.sleep(0.1)
        checked.append(1)
        return real(*args)

    monkeypatch.setattr(records.verify, "check_planned", slow)
    with client_for(ServiceConfig(settings, request_timeout=0.5)) as quick:
        assert_problem(quick.post("/v1/verify", json=citations(40)), 504)
        at_answer = len(checked)
        time.sleep(1.0)
        assert len(checked) <= at_answer + 1, "the work went on after the 504"
        assert len(checked) < 40
    # Asked of a service without the 0.5 s limit: on a loaded 2-core machine the audit's own
    # first call (its modules load on first use) can take longer than that and be answered 504.
    with client_for(ServiceConfig(settings)) as patient:
        nothing = patient.get("/v1/audit", params={"url": "http://127.0.0.1:9/p0"})
        assert_problem(nothing, 404)  # a stopped verify records nothing


def test_a_reverify_past_its_deadline_stops_after_the_group_it_is_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three snapshot groups of 1 s each under a 1.5 s limit: the group running at the 504
    is finished and recorded, the third never starts (it used to run all three after the
    504).  The limit leaves the planning before the first group half a second even on a
    loaded 2-core machine."""
    settings = embedded_settings(tmp_path / "home", allow_private=True)
    with LoopbackServer() as pages, client_for(ServiceConfig(settings)) as client:
        cited = []
        for number in range(3):
            text = f"page {number} " + "words of the page " * 20
            pages.route(f"/p{number}", body=f"<html><main><p>{text}</p></main></html>".encode())
            url = pages.url(f"/p{number}")
            assert client.post("/v1/captures", json={"url": url}).status_code == 201
            cited.append({"url": url, "quote": f"page {number}"})
        assert client.post("/v1/verify", content=json.dumps(cited)).status_code == 200
    groups: list[int] = []
    real = records.reverify.check_group

    def slow(*args: Any) -> Any:
        time.sleep(1.0)
        groups.append(1)
        return real(*args)

    monkeypatch.setattr(records.reverify, "check_group", slow)
    with client_for(ServiceConfig(settings, request_timeout=1.5)) as quick:
        assert_problem(quick.post("/v1/reverify", json={}), 504)
        time.sleep(2.5)  # all three would be done by now
        assert 1 <= len(groups) <= 2


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@given(items=st.lists(json_values, max_size=12), enough=st.integers(0, 15), indent=st.booleans())
def test_a_list_is_counted_up_to_enough(items: list[Any], enough: int, indent: bool) -> None:
    text = json.dumps(items, indent=2 if indent else None)
    assert items_up_to(text, enough) == min(len(items), enough)


def test_what_is_not_a_list_counts_nothing() -> None:
    assert items_up_to('{"claims": [1, 2]}', 10) == 0
    assert items_up_to("  [1, 2, oops", 10) == 2  # the reader refuses it afterwards
    assert items_up_to("[", 10) == 0
