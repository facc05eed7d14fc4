"""The other side replays the exported WACZ of a browser capture in pywb and looks at it:
a Chromium screenshot of the replayed page, at the capture's viewport, matches the screenshot
snap stored (``snap show --screenshot``) in size and, but for a small mean difference, in
pixels; the image and the stylesheet come from the archive alone, and nothing leaves loopback.

The page is replayed as captured, in pywb's identity form (``/COLL/TIMESTAMPid_/URL``): its
``mp_`` form, loaded as the top page, draws pywb's banner over the first 90 pixels (and makes
the page 8 pixels taller), so it is not what the reader saw.  The page's own links to its
stylesheet and image (``/replay/...``) reach pywb, which answers them from the archive by the
referring replay URL.  The replaying Chromium runs with the network flags of
``tests.fidelity.browser_text`` and aborts, and records, any request not to loopback.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from records.capture import capture_source
from snapshotter.browser import BrowserOptions
from tests.browser.conftest import OpenWorkspace
from tests.browser.png import Image, decode, encode_rgb, mean_difference
from tests.browser.test_browser_capture import run_snap
from tests.fidelity.browser_text import (
    LOADED_MACHINE_TIMEOUT_MS,
    LOOPBACK_HOSTS,
    chromium_args,
    closed_loopback_port,
)
from tests.http_fixtures import LoopbackServer

if TYPE_CHECKING:
    from playwright.sync_api import Route

MAX_MEAN_DIFFERENCE = 1.0  # of 255 a channel value; measured 0.0 here, text antialiasing aside
BACKGROUND = bytes((0xF4, 0xEF, 0xE1))  # the stylesheet's page colour


def banded(x: int, y: int) -> tuple[int, int, int]:
    """A picture with edges, so that a missing or misplaced image shows in the difference."""
    return (200, 40, 40) if (x // 20 + y // 20) % 2 else (30, 90, 200)


IMAGE = encode_rgb(240, 160, banded)
STYLE = b"""body { margin: 0; background: #f4efe1; font: 16px/1.4 sans-serif }
main { margin: 40px; padding: 24px; border: 6px solid #2a6f3b; background: #ffffff }
h1 { color: #8a1c1c } .bar { height: 50px; background: #1c3f8a }"""
PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>Replayed</title>
<link rel="stylesheet" href="/replay/style.css"></head>
<body><main><h1>A page with a picture and a stylesheet</h1>
<p>The picture below and the colours of this page come from the archive when replayed.</p>
<img src="/replay/picture.png" width="240" height="160" alt="bands">
<div class="bar"></div></main></body></html>"""


def serve_page(server: LoopbackServer) -> str:
    server.route("/replay/page", body=PAGE)
    server.route("/replay/style.css", body=STYLE, content_type="text/css")
    server.route("/replay/picture.png", body=IMAGE, content_type="image/png")
    return server.url("/replay/page")


def replay_screenshot(url: str, viewport: tuple[int, int]) -> tuple[bytes, list[str]]:
    """A full-page screenshot of ``url`` (pywb on loopback) and the requests refused, taken
    in a thread of its own: Playwright's sync API refuses a thread where another test's
    Playwright (the fidelity suite's, kept for the session) already runs its event loop."""
    with ThreadPoolExecutor(max_workers=1) as own_thread:
        return own_thread.submit(_screenshot, url, viewport).result()


def _screenshot(url: str, viewport: tuple[int, int]) -> tuple[bytes, list[str]]:
    from playwright.sync_api import sync_playwright

    refused: list[str] = []

    def only_loopback(route: Route) -> None:
        host = urlsplit(route.request.url).hostname or ""
        if route.request.url.startswith(("data:", "about:")) or host in LOOPBACK_HOSTS:
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=[*chromium_args(closed_loopback_port()), "--hide-scrollbars"],
            timeout=LOADED_MACHINE_TIMEOUT_MS,
        )
        try:
            width, height = viewport
            page = browser.new_page(viewport={"width": width, "height": height})
            page.route("**/*", only_loopback)
            page.goto(url, wait_until="load", timeout=LOADED_MACHINE_TIMEOUT_MS)
            page.wait_for_load_state("networkidle", timeout=LOADED_MACHINE_TIMEOUT_MS)
            png = page.screenshot(full_page=True, type="png")
        finally:
            browser.close()
    return png, refused


def test_pywb_replay_of_the_wacz_looks_like_the_stored_screenshot(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, tmp_path: Path
) -> None:
    from tests.exports.test_replay import add_collection, timestamp, wayback

    url = serve_page(http_server)
    workspace = open_workspace()
    record = capture_source(workspace, url, method="browser")
    home = Path(workspace.settings.home)
    archive = tmp_path / "evidence.wacz"
    exported = run_snap(
        home, "export", "--format", "wacz", "-o", str(archive), "--snapshot", record.snapshot_id
    )
    assert exported.exit_code == 0, exported.output
    stored = tmp_path / "stored.png"
    shown = run_snap(home, "show", "--screenshot", record.snapshot_id, "-o", str(stored))
    assert shown.exit_code == 0, shown.output

    replay = tmp_path / "pywb"
    replay.mkdir()
    add_collection(replay, "case", archive)
    http_server.requests.clear()
    with wayback(replay) as base:
        replayed, refused = replay_screenshot(
            f"{base}/case/{timestamp(record.fetched_at)}id_/{url}", BrowserOptions().viewport
        )
    assert refused == []
    assert http_server.requests == []  # the page, image and stylesheet came from the archive

    captured, seen = decode(stored.read_bytes()), decode(replayed)
    assert (seen.width, seen.height) == (captured.width, captured.height)
    assert captured.width == BrowserOptions().viewport[0]
    assert mean_difference(captured, seen) < MAX_MEAN_DIFFERENCE
    # The bound tells pages apart: the bare page colour alone is far from the capture.
    bare = Image(captured.width, captured.height, BACKGROUND * (captured.width * captured.height))
    assert mean_difference(captured, bare) > 10 * MAX_MEAN_DIFFERENCE
