"""One Chromium and one Playwright connection to it, reused across captures.

The browser runs on an event loop in a thread of its own, so any thread (a CLI command, a
worker's task, a request handler) submits a render and waits for it with a timeout: when the
capture deadline passes, the waiting thread gives up, the browser is killed by its process id
and the next capture starts a new one. A browser that crashed is replaced the same way. The
capture that met the crash or the deadline fails (``BrowserFailed``); none hangs.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from snapshotter.browser.chromium import ChromiumProcess, start_chromium
from snapshotter.browser.errors import BrowserFailed, BrowserUnavailable

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

    from snapshotter.browser.render import PageJob, Rendered
    from snapshotter.browser.resources import ResourceFetcher

FETCH_THREADS = 8  # subresources fetched at once, per session (a browser opens about 6 a host)
GRACE = 1.0  # seconds past the deadline before the waiting thread kills the browser
CONNECT_TIMEOUT = 30.0


class BrowserSession:
    """A lazily started browser, shared by every capture of one process."""

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._process: ChromiumProcess | None = None
        self._executor = ThreadPoolExecutor(FETCH_THREADS, thread_name_prefix="snap-subresource")
        self.starts = 0  # how many browsers this session has started (tests count restarts)
        atexit.register(self.close)

    @property
    def pid(self) -> int | None:
        """The running browser's process id (None before the first capture)."""
        return self._process.pid if self._process is not None else None

    def version(self) -> str:
        browser = self._browser
        return browser.version if browser is not None else ""

    def render(self, job: PageJob, fetcher: ResourceFetcher) -> Rendered:
        """Render ``job``; BrowserFailed on a crash, a start failure or the deadline."""
        from snapshotter.browser.render import render_page

        with self._lock:
            browser = self._started(job.deadline)
            loop = self._loop
        assert loop is not None
        process = self._process
        coroutine = render_page(
            browser, job, fetcher, self._executor, self._forget, lambda: _kill_stuck(process)
        )
        future = asyncio.run_coroutine_threadsafe(coroutine, loop)
        try:
            return future.result(timeout=max(job.deadline - time.monotonic(), 0.0) + GRACE)
        except concurrent.futures.TimeoutError:
            # The render is cancelled and closes its own context (or kills a stuck browser,
            # see render_page): other captures sharing this browser go on.
            future.cancel()
            raise BrowserFailed(
                f"timed out: the capture of {job.url} in the browser ran past its deadline"
            ) from None
        except concurrent.futures.CancelledError:
            raise BrowserFailed(f"the browser capture of {job.url} was cancelled") from None
        finally:
            if self._process is not None and not self._process.alive():
                self._kill()  # it died under us: the next capture starts a new one

    def _started(self, deadline: float) -> Browser:
        """The connected browser, started (again) if there is none or it went away."""
        connected = self._browser is not None and self._browser.is_connected()
        if connected and self._process is not None and self._process.alive():
            assert self._browser is not None
            return self._browser
        self._kill()
        loop = self._event_loop()
        timeout = min(CONNECT_TIMEOUT, max(deadline - time.monotonic(), 0.1))
        self._process = start_chromium(self.executable, timeout=timeout)
        self.starts += 1
        connect = asyncio.run_coroutine_threadsafe(self._connect(self._process.endpoint), loop)
        try:
            self._browser = connect.result(timeout=timeout + GRACE)
        except BaseException as error:
            connect.cancel()
            self._kill()
            if isinstance(error, (BrowserFailed, BrowserUnavailable)):
                raise
            if isinstance(error, TimeoutError):
                raise BrowserFailed(
                    f"timed out: Chromium did not start within {timeout:g} s"
                    " (bounded by the capture deadline)"
                ) from None
            raise BrowserFailed(f"could not connect to Chromium: {error!r}"[:400]) from None
        return self._browser

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="snap-browser", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return self._loop

    async def _connect(self, endpoint: str) -> Browser:
        if self._playwright is None:
            try:
                from playwright.async_api import async_playwright
            except ImportError:
                raise BrowserUnavailable(
                    "browser capture needs Playwright for Python (pip install playwright)"
                ) from None
            self._playwright = await async_playwright().start()
        browser = await self._playwright.chromium.connect_over_cdp(
            endpoint, timeout=CONNECT_TIMEOUT * 1000
        )
        browser.on("disconnected", lambda _browser: self._forget())
        return browser

    def _forget(self) -> None:
        """The browser went away (crash, kill): the next capture starts a new one."""
        self._browser = None

    def _kill(self) -> None:
        self._browser = None
        process, self._process = self._process, None
        if process is not None:
            process.kill()

    def close(self) -> None:
        """Kill the browser, stop Playwright and the loop. Safe to call twice."""
        self._kill()
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is not None:
            playwright, self._playwright = self._playwright, None
            if playwright is not None:
                stop = asyncio.run_coroutine_threadsafe(_stop(playwright), loop)
                with contextlib.suppress(Exception):
                    stop.result(timeout=5)
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(timeout=5)
            if not loop.is_running():
                loop.close()
        self._executor.shutdown(wait=False, cancel_futures=True)
        atexit.unregister(self.close)


def _kill_stuck(process: ChromiumProcess | None) -> None:
    """Kill a browser that could not close a capture's context: the next capture sees it
    dead and starts a new one."""
    if process is not None:
        process.kill()


async def _stop(playwright: Any) -> None:
    await playwright.stop()
