"""A page captured under one spelling of its URL is found under the others: a space or a
character outside ASCII typed as it is, or percent-encoded as a browser sends it (``ü`` and
``%C3%BC``, `` `` and ``%20``). Before, only the spelling typed at capture found it, and a
citation giving the other one was reported as never captured. Captures recorded before keep
their keys (the records are append-only) and are found by either spelling too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import records.repository
from records.urls import _canonical
from tests.http_fixtures import LoopbackServer, http_server  # noqa: F401  (fixture)
from tests.snap_cli import run_snap

PAGE = "<html><body><main><p>The origin serves one request in ten.</p></main></body></html>"
QUOTE = "The origin serves one request in ten."


@pytest.fixture
def env(home_env: dict[str, str]) -> dict[str, str]:
    return home_env | {"SNAP_CAPTURE": "http", "SNAP_ALLOW_PRIVATE": "1"}


def captured(env: dict[str, str], server: LoopbackServer) -> tuple[str, str]:
    """A page whose path has a space and a ``ü``, captured by its URL typed with them as they
    are: that URL, and the URL as a browser sends it (which is the path the server sees)."""
    sent = "/cdn%20%C3%BCber%20caching.html"
    server.route(sent, body=PAGE.encode("utf-8"))
    typed = server.url("/cdn über caching.html")
    done = run_snap(["fetch", typed, "--json"], env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["url"] == typed  # recorded as given
    return typed, server.url(sent)


def found_by(env: dict[str, str], url: str, tmp_path: Path) -> tuple[int, int]:
    """(``audit --url``'s exit code, the number of quotes ``verify`` finds) for ``url``."""
    audit = run_snap(["audit", "--url", url], env).returncode
    citation = tmp_path / "citation.json"
    citation.write_text(json.dumps({"url": url, "quote": QUOTE}))
    verified = run_snap(["verify", str(citation), "--json"], env)
    statuses = [result["status"] for result in json.loads(verified.stdout)["results"]]
    return audit, statuses.count("quote_found")


def test_a_page_is_found_by_each_spelling_of_its_url(
    env: dict[str, str],
    http_server: LoopbackServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    typed, encoded = captured(env, http_server)
    lower_hex = encoded.replace("%C3%BC", "%c3%bc")
    for url in (typed, encoded, lower_hex):
        assert found_by(env, url, tmp_path) == (0, 1), url


def test_a_capture_recorded_under_the_old_key_is_found_by_each_spelling(
    env: dict[str, str],
    http_server: LoopbackServer,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with monkeypatch.context() as then:  # the key a capture got before raw characters were encoded
        then.setattr(records.repository, "canonical_url", lambda url: _canonical(url, str))
        typed, encoded = captured(env, http_server)
    for url in (typed, encoded):
        assert found_by(env, url, tmp_path) == (0, 1), url
