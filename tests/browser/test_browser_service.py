"""Browser captures through the HTTP service and the batch path the workers run.

``POST /v1/captures`` takes ``capture``; a batch made by ``snap fetch --enqueue --browser``
carries the method in each item, and one process captures every item of it with one browser
(the workers keep one workspace, and so one browser, per process: ``snap.workers.tasks``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

import snapshotter.browser.session
from records.workspace import Workspace
from snap.config import Settings
from snap.service.app import ServiceConfig, create_app
from snapshotter.browser.session import BrowserSession
from tests.browser.conftest import home_env
from tests.http_fixtures import LoopbackServer


@pytest.fixture
def client(tmp_path: Path, session: BrowserSession) -> Iterator[TestClient]:
    settings = Settings.from_env(home_env(tmp_path / "home"))
    workspace = Workspace.open(settings)
    workspace._browser = session
    with TestClient(create_app(ServiceConfig(settings), workspace=workspace)) as opened:
        yield opened
        workspace._browser = None  # the module's session outlives the app


def test_post_captures_takes_the_capture_method(
    client: TestClient, http_server: LoopbackServer
) -> None:
    http_server.route(
        "/page", body=b"<p>Static.</p><script>document.write('<p>Written.</p>')</script>"
    )
    browser = client.post(
        "/v1/captures", json={"url": http_server.url("/page"), "capture": "browser"}
    )
    assert browser.status_code == 201, browser.text
    assert browser.json()["method"] == "browser"
    assert browser.json()["rendered"]["extractor"].startswith("snap-browser@2+chromium@")
    plain = client.post("/v1/captures", json={"url": http_server.url("/page"), "capture": "http"})
    assert plain.json()["method"] == "http"
    assert plain.json()["snapshotId"] == browser.json()["snapshotId"]
    wrong = client.post("/v1/captures", json={"url": http_server.url("/page"), "capture": "maybe"})
    assert wrong.status_code in (400, 422)


def test_post_captures_browser_without_chromium_is_a_501_problem(
    tmp_path: Path, http_server: LoopbackServer
) -> None:
    settings = Settings.from_env(home_env(tmp_path / "home", SNAP_BROWSER=str(tmp_path / "none")))
    with TestClient(create_app(ServiceConfig(settings))) as opened:
        answer = opened.post(
            "/v1/captures", json={"url": http_server.url("/page"), "capture": "browser"}
        )
    assert answer.status_code == 501
    assert answer.json()["type"] == "/problems/browser-unavailable"
    assert http_server.paths() == []


def test_a_batch_of_browser_captures_uses_one_browser(
    tmp_path: Path, http_server: LoopbackServer, chromium: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Any] = []
    start = snapshotter.browser.session.start_chromium

    def counted(*args: Any, **kwargs: Any) -> Any:
        started.append(start(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(snapshotter.browser.session, "start_chromium", counted)
    for name in ("one", "two", "three"):
        http_server.route(f"/{name}", body=f"<p>Page {name}.</p>".encode())
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(http_server.url(f"/{n}") + "\n" for n in ("one", "two", "three")))
    from snap.cli import cli

    env = home_env(tmp_path / "home")
    result = CliRunner().invoke(
        cli, ["fetch", "--enqueue", "--browser", "--json", str(urls)], env=env
    )
    assert result.exit_code == 0, result.output
    audit = CliRunner().invoke(cli, ["audit", "--json", "--url", http_server.url("/two")], env=env)
    assert [c["method"] for c in json.loads(audit.output)["captures"]] == ["browser"]
    assert len(started) == 1  # three captures, one Chromium
