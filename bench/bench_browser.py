"""Benchmark of browser capture against the HTTP path and against Playwright on its own.

Run: ``.venv/bin/python bench/bench_browser.py [--json] [--runs N]``

Three pages from a loopback HTTP server started here: a small static page (30 paragraphs, no
script), one of about 1 MB of text, and one with 50 subresources (30 images, 15 stylesheets, 5
scripts). For each, best of ``--runs`` after a warm
run, with one Chromium kept across runs (as the workers keep it):

* ``http``: ``snap fetch`` over HTTP (fetch, extract, store);
* ``playwright``: the fair baseline, the same Chromium and Playwright doing the same browser
  work with its own network stack against the same server (navigate, wait for load and up to
  2 s of network idle, the visible text read by snap's own page script, the DOM, a full-page
  screenshot), storing nothing;
* ``browser``: ``snap fetch --browser`` (every request through snap's fetcher, every blob
  stored, the HTTP-path extraction too), into a folder store.

The ratio ``browser / playwright`` is what routing every request through snap and storing the
evidence costs; the goal is at most 1.5.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.async_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from snapshotter.browser import BrowserOptions, capture_in_browser  # noqa: E402
from snapshotter.browser.chromium import find_executable  # noqa: E402
from snapshotter.browser.reading import read_visible_text  # noqa: E402
from snapshotter.browser.render import MAX_SCREENSHOT_HEIGHT, PAGE_HEIGHT  # noqa: E402
from snapshotter.browser.session import BrowserSession  # noqa: E402
from snapshotter.capture import capture  # noqa: E402
from snapshotter.fetch import FetchOptions  # noqa: E402
from snapshotter.store import FolderStore  # noqa: E402
from tests.http_fixtures import LoopbackServer  # noqa: E402

PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d6a4c70000000049454e44ae426082"
)


def serve(server: LoopbackServer) -> dict[str, str]:
    sentence = "A cache hit ratio of 90 percent means the origin serves one request in ten. "
    paragraphs = "".join(f"<p>{i}: {sentence * 6}</p>\n" for i in range(2200))
    big = f"<!doctype html><title>Big</title><main>{paragraphs}</main>".encode()
    server.route("/big", body=big)
    links = []
    for i in range(30):
        server.route(f"/img/{i}.png", body=PIXEL + bytes([i]), content_type="image/png")
        links.append(f'<img src="/img/{i}.png" alt="">')
    for i in range(15):
        server.route(
            f"/css/{i}.css", body=f".c{i} {{ color: #{i:06x} }}".encode(), content_type="text/css"
        )
        links.append(f'<link rel="stylesheet" href="/css/{i}.css">')
    for i in range(5):
        server.route(
            f"/js/{i}.js", body=f"window.v{i} = {i};".encode(), content_type="text/javascript"
        )
        links.append(f'<script src="/js/{i}.js"></script>')
    many = (
        "<!doctype html><title>Many</title><main><p>Fifty subresources.</p>"
        + "".join(links)
        + "</main>"
    ).encode()
    server.route("/many", body=many)
    small = "".join(f"<p>Static paragraph {i} of plain text.</p>" for i in range(30))
    server.route(
        "/static", body=f"<!doctype html><title>Static</title><main>{small}</main>".encode()
    )
    return {
        "static page": server.url("/static"),
        "1 MB page": server.url("/big"),
        "50 subresources": server.url("/many"),
    }


async def playwright_alone(session: BrowserSession, url: str) -> None:
    browser = session._browser
    assert browser is not None
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = await context.new_page()
        await page.goto(url, wait_until="load")
        # 500 ms without a request, at most 2 s: what snap's quiet wait is on a static page
        with contextlib.suppress(PlaywrightTimeout):
            await page.wait_for_load_state("networkidle", timeout=2000)
        await read_visible_text(page)
        await page.content()
        height = int(await page.evaluate(PAGE_HEIGHT))
        clip: Any = None  # cut where snap cuts
        if height > MAX_SCREENSHOT_HEIGHT:
            clip = {"x": 0, "y": 0, "width": 1280, "height": MAX_SCREENSHOT_HEIGHT}
        await page.screenshot(full_page=True, type="png", clip=clip)
    finally:
        await context.close()


def best(runs: int, works: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """The best time of each way, the ways taking turns (a warm run of each first), so a
    busy spell of a shared machine does not fall on one way only."""
    times: dict[str, list[float]] = {name: [] for name in works}
    for turn in range(runs + 1):
        for name, work in works.items():
            started = time.perf_counter()
            work()
            if turn:
                times[name].append(time.perf_counter() - started)
    return {name: min(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    executable = find_executable(None)
    if executable is None:
        sys.exit("no Chromium installed: apt-get install chromium")
    options = FetchOptions(
        max_bytes=50 * 1024 * 1024, timeout=30, max_redirects=10, allow_private=True
    )
    session = BrowserSession(executable)
    results: dict[str, dict[str, float]] = {}
    with LoopbackServer() as server, tempfile.TemporaryDirectory() as folder:
        store = FolderStore(Path(folder) / "store")
        pages = serve(server)
        capture_in_browser(pages["50 subresources"], store, options, BrowserOptions(), session)
        loop = session._loop
        assert loop is not None
        for name, url in pages.items():
            row = best(
                args.runs,
                {
                    "http": lambda url=url: capture(url, store, options),
                    "playwright": lambda url=url: asyncio.run_coroutine_threadsafe(
                        playwright_alone(session, url), loop
                    ).result(),
                    "browser": lambda url=url: capture_in_browser(
                        url, store, options, BrowserOptions(), session
                    ),
                },
            )
            row["browser/playwright"] = row["browser"] / row["playwright"]
            row["browser/http"] = row["browser"] / row["http"]
            results[name] = row
    session.close()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'page':<18}{'http':>9}{'playwright':>12}{'browser':>10}{'vs pw':>8}{'vs http':>9}")
    for name, row in results.items():
        print(
            f"{name:<18}{row['http']:>8.3f}s{row['playwright']:>11.3f}s{row['browser']:>9.3f}s"
            f"{row['browser/playwright']:>7.2f}x{row['browser/http']:>8.1f}x"
        )


if __name__ == "__main__":
    main()
