"""One page in the browser: routed, loaded, waited for, read and photographed.

Everything the page asks for goes through Playwright routing to snap's fetcher
(``ResourceFetcher``), on a thread pool so the page's requests are fetched side by side as a
browser would. WebSockets are closed unopened, service workers are blocked, downloads and
pop-ups are refused; each is reported. Time is split so the capture ends by its deadline: the
page must have loaded (or at least parsed) by ``render_by``, which keeps a slice at the end
for reading the text, the DOM and the screenshot. Between load and reading, the page is given
up to ``idle_wait`` seconds to go quiet, is scrolled through if it watches scrolling, and up to
``idle_wait`` more to go quiet again (``snapshotter.browser.reading``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser, Page, Route, WebSocketRoute
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from snapshotter.browser.errors import BrowserFailed
from snapshotter.browser.reading import (
    QUIET,
    Network,
    Scrolled,
    Wait,
    needs_scrolling,
    page_script,
    read_visible_text,
    scroll_back,
    scroll_through,
    wait_until_quiet,
)
from snapshotter.browser.resources import Refused, ResourceFetcher

PAGE_HEIGHT = "() => Math.ceil(document.documentElement.scrollHeight)"
SERVICE_WORKER_BLOCKED = "Service Worker registration blocked by Playwright"
MAX_SCREENSHOT_HEIGHT = 16384  # CSS pixels; a taller page is cut there (and says so)
TAIL = 0.2  # share of the capture time (at most TAIL_MAX s) kept for text, DOM and screenshot
TAIL_MAX = 5.0


@dataclass(frozen=True)
class PageJob:
    """What to render: the main document, already fetched by snap, served at its final URL."""

    url: str
    body: bytes
    headers: dict[str, str]
    deadline: float  # time.monotonic()
    started: float
    idle_wait: float
    viewport: tuple[int, int]

    @property
    def render_by(self) -> float:
        tail = min((self.deadline - self.started) * TAIL, TAIL_MAX)
        return self.deadline - tail


@dataclass
class Rendered:
    text: str
    dom: str
    screenshot: bytes
    screenshot_height: int
    refused: list[dict[str, Any]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    reading: dict[str, Any] = field(default_factory=dict)  # how the text was waited for, read


def _ms(until: float) -> float:
    """Milliseconds left until ``until`` (at least 1: Playwright reads 0 as no timeout)."""
    return max((until - time.monotonic()) * 1000.0, 1.0)


class _PageRun:
    def __init__(self, job: PageJob, fetcher: ResourceFetcher, executor: Executor) -> None:
        self.job = job
        self.fetcher = fetcher
        self.executor = executor
        self.main_served = False
        self.refused: list[dict[str, Any]] = []
        self.flags: list[str] = []
        self.crashed = False
        self.network = Network()
        self.waits: list[Wait] = []
        self.scrolled: Scrolled | None = None

    async def route(self, route: Route) -> None:
        request = route.request
        try:
            if not self.main_served and request.is_navigation_request():
                self.main_served = True
                await route.fulfill(status=200, headers=self.job.headers, body=self.job.body)
                return
            loop = asyncio.get_running_loop()
            outcome = await loop.run_in_executor(
                self.executor,
                self.fetcher.get,
                request.url,
                request.method,
                request.resource_type,
            )
            if isinstance(outcome, Refused):
                await route.abort(outcome.error_code)
            else:
                await route.fulfill(
                    status=outcome.status, headers=outcome.headers, body=outcome.body
                )
        except PlaywrightError:
            pass  # the page or capture was closed meanwhile: nothing is waiting for it

    async def websocket(self, socket: WebSocketRoute) -> None:
        self.refused.append(
            {"kind": "websocket", "url": socket.url, "reason": "WebSockets are not opened"}
        )
        await socket.close(code=1008, reason="refused by snap")

    def console(self, text: str, url: str) -> None:
        if text.startswith(SERVICE_WORKER_BLOCKED):
            reason = "service workers are not registered"
            self.refused.append({"kind": "service-worker", "url": url, "reason": reason})

    def download(self, url: str) -> None:
        self.refused.append({"kind": "download", "url": url, "reason": "downloads are refused"})

    async def popup(self, page: Page) -> None:
        reason = "pop-up windows are closed"
        self.refused.append({"kind": "popup", "url": page.url, "reason": reason})
        await page.close()

    async def load(self, page: Page) -> None:
        job = self.job
        try:
            await page.goto(job.url, wait_until="domcontentloaded", timeout=_ms(job.render_by))
        except PlaywrightTimeout:
            raise BrowserFailed(
                f"the page at {job.url} was not parsed before the capture deadline"
            ) from None
        try:
            await page.wait_for_load_state("load", timeout=_ms(job.render_by))
        except PlaywrightTimeout:
            self.flags.append("load-unfinished")
        await self.settle(page, "load")
        if self.waits[-1].watches_scroll and await needs_scrolling(page):
            budget = min(job.idle_wait, max(job.render_by - time.monotonic(), 0.0))
            self.scrolled = await scroll_through(page, budget)
            if not self.scrolled.reached_end:
                self.flags.append("scroll-cut")
            await self.settle(page, "scroll")

    async def settle(self, page: Page, after: str) -> None:
        """Wait for the page to go quiet, within the settle budget; flag what stayed busy."""
        until = min(self.job.render_by, time.monotonic() + self.job.idle_wait)
        wait = await wait_until_quiet(page, self.network, after, until)
        self.waits.append(wait)
        if "network" in wait.busy and "network-not-idle" not in self.flags:
            self.flags.append("network-not-idle")
        if set(wait.busy) - {"network"} and "page-not-quiet" not in self.flags:
            self.flags.append("page-not-quiet")

    async def read(self, page: Page) -> Rendered:
        deadline = self.job.deadline
        visible = await read_visible_text(page)
        if self.scrolled is not None:
            await scroll_back(page)
        dom = await page.content()
        height = int(await page.evaluate(PAGE_HEIGHT))
        clip = None
        if height > MAX_SCREENSHOT_HEIGHT:
            self.flags.append("screenshot-cut")
            width = self.job.viewport[0]
            clip = {"x": 0, "y": 0, "width": width, "height": MAX_SCREENSHOT_HEIGHT}
        png = await page.screenshot(
            full_page=True,
            type="png",
            timeout=_ms(deadline),
            clip=clip,  # type: ignore[arg-type]
        )
        reading = {
            "quietSeconds": QUIET,
            "settleBudgetSeconds": self.job.idle_wait,
            "waits": [wait.to_json() for wait in self.waits],
            "scroll": None if self.scrolled is None else self.scrolled.to_json(),
            **visible.report,
        }
        return Rendered(
            text=visible.text,
            dom=dom,
            screenshot=png,
            screenshot_height=min(height, MAX_SCREENSHOT_HEIGHT),
            refused=self.refused,
            flags=self.flags,
            reading=reading,
        )


async def render_page(
    browser: Browser,
    job: PageJob,
    fetcher: ResourceFetcher,
    executor: Executor,
    on_crash: Callable[[], None],
    on_stuck: Callable[[], None],
) -> Rendered:
    """Render ``job`` in a fresh context of ``browser``; raise BrowserFailed if the page
    crashes, the browser goes away, or the deadline passes. The context is closed whatever
    happens, a cancelled render included (the session cancels one that runs past its
    deadline); a context that cannot be closed within 5 s means a stuck browser, and
    ``on_stuck`` kills it, so a page spinning in a script never keeps a renderer alive."""
    run = _PageRun(job, fetcher, executor)
    width, height = job.viewport
    context = await browser.new_context(
        service_workers="block",
        accept_downloads=False,
        viewport={"width": width, "height": height},
    )
    try:
        await context.add_init_script(script=page_script("page_watch.js"))
        await context.route("**/*", run.route)
        await context.route_web_socket("**", run.websocket)
        page = await context.new_page()
        page.on("request", lambda _request: run.network.started())
        page.on("requestfinished", lambda _request: run.network.ended())
        page.on("requestfailed", lambda _request: run.network.ended())
        page.on("console", lambda message: run.console(message.text, page.url))
        page.on("download", lambda download: run.download(download.url))
        page.on("crash", lambda _page: setattr(run, "crashed", True))
        context.on("page", run.popup)
        try:
            await run.load(page)
            return await run.read(page)
        except PlaywrightTimeout:
            raise BrowserFailed(
                f"timed out: the capture of {job.url} in the browser ran past its deadline"
            ) from None
        except PlaywrightError as error:
            if run.crashed or not browser.is_connected():
                on_crash()
                raise BrowserFailed(
                    f"the browser crashed while capturing {job.url}: {error.message[:200]}"
                ) from None
            raise BrowserFailed(
                f"the browser could not capture {job.url}: {error.message[:300]}"
            ) from None
    finally:
        try:
            await asyncio.wait_for(context.close(), timeout=5)
        except (PlaywrightError, TimeoutError):
            if browser.is_connected():
                on_stuck()
