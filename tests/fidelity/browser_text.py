"""What Chromium shows: ``document.body.innerText`` of a page, with no packet leaving loopback.

Chromium is Debian's ``/usr/bin/chromium``, driven by Playwright for Python through
``executable_path`` (Playwright's own browser downloads are never used).  Network rules, all
at once, because Chromium contacts outside hosts at start-up by itself:

- ``--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"``: no name resolves, so no DNS
  lookup leaves the process;
- ``--proxy-server`` points at a loopback port that was bound and closed again, so any request
  that is not to loopback (which Chromium never proxies) fails on the spot;
- ``--disable-background-networking``, ``--disable-component-update``, ``--no-first-run``;
- every request the page makes is routed: one to 127.0.0.1 or ::1 goes on (to the test's
  loopback server), any other is aborted and recorded in ``BrowserText.refused``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Route

CHROMIUM = Path("/usr/bin/chromium")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "[::1]"})
LOADED_MACHINE_TIMEOUT_MS = 120_000  # a shared 2-core machine can start Chromium slowly


def closed_loopback_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def chromium_args(proxy_port: int) -> list[str]:
    return [
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--disable-quic",
        "--no-sandbox",
        "--disable-gpu",
    ]


@dataclass
class BrowserText:
    """A running Chromium that reads pages' visible text."""

    browser: Browser
    refused: list[str] = field(default_factory=list)  # non-loopback URLs a page asked for

    def _route(self, route: Route) -> None:
        host = urlsplit(route.request.url).hostname or ""
        if route.request.url.startswith(("data:", "about:")) or host in LOOPBACK_HOSTS:
            route.continue_()
        else:
            self.refused.append(route.request.url)
            route.abort()

    def inner_text(self, url: str, furniture: str = "") -> tuple[str, str]:
        """``document.body.innerText`` of the page at ``url`` (a loopback URL), and the
        innerText of the elements matching the CSS selector ``furniture`` (navigation,
        menus and footers the extractor leaves out on purpose), one element after another."""
        page = self.browser.new_page()
        try:
            page.route("**/*", self._route)
            page.goto(url, wait_until="load", timeout=LOADED_MACHINE_TIMEOUT_MS)
            body = str(page.evaluate("() => document.body.innerText"))
            left_out = ""
            if furniture:
                left_out = str(
                    page.evaluate(
                        "(selector) => Array.from(document.querySelectorAll(selector))"
                        ".map((element) => element.innerText).join('\\n')",
                        furniture,
                    )
                )
            return body, left_out
        finally:
            page.close()


@contextmanager
def chromium() -> Iterator[BrowserText]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=chromium_args(closed_loopback_port()),
            timeout=LOADED_MACHINE_TIMEOUT_MS,
        )
        try:
            yield BrowserText(browser)
        finally:
            browser.close()
