"""The built manual in a real browser: Material's search finds a command, offline.

The site is served from a loopback HTTP server and opened in Debian's ``/usr/bin/chromium``,
driven by Playwright for Python. Chromium contacts outside hosts at start-up by itself, so it
runs with no name resolving (``--host-resolver-rules``), a proxy on a closed loopback port,
background networking and component updates off; every request a page or its search worker
makes is routed, and one to anything but 127.0.0.1 is aborted, recorded and fails the test.
"""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Request, Route

CHROMIUM = Path("/usr/bin/chromium")
CLOSED_LOOPBACK_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens on it here
CHROMIUM_ARGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    f"--proxy-server={CLOSED_LOOPBACK_PROXY}",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
]
LOADED_MACHINE_TIMEOUT_MS = 120_000  # a shared 2-core machine can start Chromium slowly
LOCAL_SCHEMES = ("data:", "blob:", "about:")


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """The test's output is the browser's findings, not an access log."""


@pytest.fixture
def site_url(site: Path) -> Iterator[str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def is_loopback(url: str) -> bool:
    return url.startswith(LOCAL_SCHEMES) or urlsplit(url).hostname == "127.0.0.1"


def test_the_proxy_port_is_closed() -> None:
    """The proxy Chromium is given must refuse: then nothing it would proxy goes anywhere."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        assert probe.connect_ex(("127.0.0.1", 9)) != 0


def test_search_finds_a_command_and_nothing_leaves_loopback(site_url: str) -> None:
    if not CHROMIUM.exists():
        pytest.skip(
            "SKIPPED LOUDLY: Debian's chromium is not at /usr/bin/chromium; tests/run.sh "
            "installs it (apt-get install -y chromium) before pytest, or install it yourself"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is a dev extra")
    refused: list[str] = []
    requested: list[str] = []

    def guard(route: Route) -> None:
        if is_loopback(route.request.url):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    def note(request: Request) -> None:
        requested.append(request.url)

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            timeout=LOADED_MACHINE_TIMEOUT_MS,
        )
        try:
            context = browser.new_context(service_workers="block")
            context.route("**/*", guard)
            context.on("request", note)
            page = context.new_page()
            page.goto(site_url, wait_until="load", timeout=LOADED_MACHINE_TIMEOUT_MS)
            search = page.locator("input.md-search__input")
            search.click()
            search.press_sequentially("reextract")
            results = page.locator(".md-search-result__item a.md-search-result__link")
            results.first.wait_for(timeout=LOADED_MACHINE_TIMEOUT_MS)
            links = [str(link.get_attribute("href")) for link in results.all()]
        finally:
            browser.close()

    assert any(
        urlsplit(link).path == "/commands/" and urlsplit(link).fragment == "snap-reextract"
        for link in links
    ), f"the commands page's section is not among the search results: {links}"
    assert any("search_index.json" in url for url in requested), "the search index was not read"
    assert refused == [], f"requests outside loopback: {refused}"
    assert [url for url in requested if not is_loopback(url)] == []
