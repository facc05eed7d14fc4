"""Fixtures of the fidelity suite: the pages on a loopback server, Chromium, and the report
of the figures measured, printed at the end of the run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fidelity.browser_text import CHROMIUM, BrowserText, chromium
from tests.fidelity.fidelity_pages import PAGES
from tests.fidelity.measure import REPORT
from tests.http_fixtures import LoopbackServer


@pytest.fixture(scope="session")
def pages_server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        for path in PAGES.rglob("*"):
            if path.is_file():
                kind = "text/css" if path.suffix == ".css" else "text/html; charset=utf-8"
                server.route(
                    "/" + path.relative_to(PAGES).as_posix(),
                    body=path.read_bytes(),
                    content_type=kind,
                )
        yield server


@pytest.fixture(scope="module")  # not the session: Playwright's sync API holds an event loop
def browser() -> Iterator[BrowserText]:
    if not CHROMIUM.exists():
        pytest.skip(
            "SKIPPED LOUDLY: Debian's chromium is not at /usr/bin/chromium; tests/run.sh "
            "installs it (apt-get install -y chromium) before pytest, or install it yourself"
        )
    pytest.importorskip("playwright.sync_api", reason="Playwright for Python is a dev extra")
    with chromium() as running:
        yield running
        assert running.refused == [], "a page asked for something outside loopback"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not REPORT:
        return
    terminalreporter.section("fidelity: Chromium's visible lines in snap's HTTP text")
    terminalreporter.write_line(f"{'page':18} {'found':>9} {'whole lines':>15}  shape")
    for figure, note in REPORT:
        terminalreporter.write_line(
            f"{figure.page:18} {figure.found:3}/{figure.lines:<3} {figure.share:4.0%}"
            f" {figure.whole:3}/{figure.lines:<3} {figure.whole_share:4.0%}  {note}"
        )
