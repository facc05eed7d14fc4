"""Reading a rendered page as its reader would: wait until it is quiet, scroll through it when
it loads on scrolling, then read only the text a reader can see.

The scripts that run in the page are files beside this module: ``page_watch.js`` (installed
in every frame before the page's own scripts: when the DOM last changed, the timers the page
set, whether it watches scrolling), ``page_quiet.js`` (what keeps the page busy now),
``page_scroll.js`` (the scroll pass) and ``page_text.js`` (the visible text, and what was left
out and why). Each wait is bounded: by the settle budget (``idle_wait``) and by the capture's
``render_by``, so a page that never settles is read when the budget runs out, and says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import Page

QUIET = 0.5  # seconds with no request in flight, no DOM change, no timer or animation due
POLL = 0.05  # seconds between looks at a page that is not yet quiet
SCROLL_STEPS = 50  # viewports scrolled at most (40,000 CSS px at the default 800 px height)
MIN_SIDE = 2  # CSS px: a box narrower or lower than this shows no readable text
MAX_FRAME_DEPTH = 3  # frames within frames read at most this deep
EXCERPTS = 5  # excerpts of the text left out, per rule, kept in the browser document
EXCERPT_LENGTH = 80  # characters each


@cache
def page_script(name: str) -> str:
    """The text of one of the in-page scripts shipped beside this module."""
    return files("snapshotter.browser").joinpath(name).read_text(encoding="utf-8")


@dataclass
class Network:
    """Requests of the page in flight, from the page's request events: the network is quiet
    when none is, and none started or ended for ``QUIET`` seconds."""

    in_flight: int = 0
    last_change: float = field(default_factory=time.monotonic)

    def started(self) -> None:
        self.in_flight += 1
        self.last_change = time.monotonic()

    def ended(self) -> None:
        self.in_flight = max(self.in_flight - 1, 0)
        self.last_change = time.monotonic()

    def quiet(self) -> bool:
        return self.in_flight == 0 and time.monotonic() - self.last_change >= QUIET


@dataclass(frozen=True)
class Wait:
    """One wait for the page to be quiet: after what, how long, and what was still busy when
    the budget ran out (nothing when the page went quiet)."""

    after: str  # "load" or "scroll"
    seconds: float
    busy: tuple[str, ...]
    watches_scroll: bool
    later_timers: int  # timers the page set that are due after the budget: not waited for

    def to_json(self) -> dict[str, Any]:
        return {
            "after": self.after,
            "seconds": round(self.seconds, 3),
            "quiet": not self.busy,
            "busy": list(self.busy),
            "timersDueLater": self.later_timers,
        }


async def wait_until_quiet(page: Page, network: Network, after: str, until: float) -> Wait:
    """Wait until the page is quiet for ``QUIET`` seconds (no request in flight, no DOM change,
    no timer the page set due before ``until``, no CSS animation or transition ending before
    it) or until ``until``; say what was still busy then."""
    began = time.monotonic()
    while True:
        left = until - time.monotonic()
        state = await _quiet_state(page, left)
        busy = []
        if not network.quiet():
            busy.append("network")
        if float(state["sinceMutation"]) < QUIET * 1000.0:
            busy.append("dom")
        if int(state["timers"]):
            busy.append("timers")
        if int(state["animations"]):
            busy.append("animations")
        if not busy or left <= 0:
            seconds = time.monotonic() - began
            scrolls, later = bool(state["watchesScroll"]), int(state["laterTimers"])
            return Wait(after, seconds, tuple(busy), scrolls, later)
        await asyncio.sleep(min(_quiet_in(busy, network, state), left))


# What a page that is navigating (a script sent it to another URL) is taken to be: busy, its
# new document not yet watched.
NAVIGATING = {"sinceMutation": 0, "timers": 0, "laterTimers": 0, "animations": 0}


async def _quiet_state(page: Page, left: float) -> dict[str, Any]:
    """page_quiet.js's answer; a page whose document is being replaced (the script's context
    is destroyed under it) is busy, and is asked again once its next document is parsed."""
    from playwright.async_api import Error as PlaywrightError

    try:
        return dict(await page.evaluate(page_script("page_quiet.js"), max(left, 0.0) * 1000.0))
    except PlaywrightError as error:
        if page.is_closed() or not _navigating(error):
            raise
    with contextlib.suppress(PlaywrightError):
        await page.wait_for_load_state("domcontentloaded", timeout=max(left, 0.001) * 1000.0)
    return {**NAVIGATING, "watchesScroll": False}


def _navigating(error: Exception) -> bool:
    """Whether Playwright's error says the page's document went away under the script."""
    message = str(error)
    return any(
        words in message
        for words in ("context was destroyed", "navigat", "Cannot find context with specified id")
    )


def _quiet_in(busy: list[str], network: Network, state: dict[str, Any]) -> float:
    """Seconds to sleep before looking again: when only the quiet period is running (nothing
    in flight, nothing due), the rest of it; else one poll."""
    if "timers" in busy or "animations" in busy or network.in_flight:
        return POLL
    since_network = time.monotonic() - network.last_change
    since_mutation = float(state["sinceMutation"]) / 1000.0
    return max(QUIET - min(since_network, since_mutation), POLL / 5)


@dataclass(frozen=True)
class Scrolled:
    steps: int
    reached_end: bool
    height: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "reachedEnd": self.reached_end,
            "height": self.height,
            "seconds": round(self.seconds, 3),
        }


async def needs_scrolling(page: Page) -> bool:
    """Whether the page is taller than its viewport (there is somewhere to scroll to); not
    while it is navigating to another document."""
    from playwright.async_api import Error as PlaywrightError

    try:
        return bool(
            await page.evaluate(
                "() => { const root = document.scrollingElement || document.documentElement;"
                " return root.scrollHeight > window.innerHeight + 1; }"
            )
        )
    except PlaywrightError as error:
        if page.is_closed() or not _navigating(error):
            raise
        return False


async def scroll_through(page: Page, budget: float) -> Scrolled:
    """Scroll to the page's end, a viewport a step (``SCROLL_STEPS`` at most, ``budget``
    seconds at most); the page stays where it stopped."""
    from playwright.async_api import Error as PlaywrightError

    arguments = {"maxSteps": SCROLL_STEPS, "budget": budget * 1000.0}
    began = time.monotonic()
    try:
        done = await asyncio.wait_for(
            page.evaluate(page_script("page_scroll.js"), arguments), timeout=budget + 1.0
        )
    except TimeoutError:  # no frame was drawn: the page is stuck or hidden
        return Scrolled(0, False, 0, time.monotonic() - began)
    except PlaywrightError as error:  # it went to another document while scrolling
        if page.is_closed() or not _navigating(error):
            raise
        return Scrolled(0, False, 0, time.monotonic() - began)
    return Scrolled(
        int(done["steps"]),
        bool(done["reachedEnd"]),
        int(done["height"]),
        time.monotonic() - began,
    )


async def scroll_back(page: Page) -> None:
    """Back to the top, where the screenshot and the DOM are taken from, as before."""
    await page.evaluate("() => window.scrollTo({top: 0, left: 0, behavior: 'instant'})")


@dataclass(frozen=True)
class VisibleText:
    """The text a reader sees, and the page script's account of what it left out, added and
    could not read (the browser document's ``textReading``)."""

    text: str
    report: dict[str, Any]


async def read_visible_text(page: Page) -> VisibleText:
    options = {
        "minSide": MIN_SIDE,
        "maxFrameDepth": MAX_FRAME_DEPTH,
        "maxExcerpts": EXCERPTS,
        "excerptLength": EXCERPT_LENGTH,
    }
    found = await page.evaluate(page_script("page_text.js"), options)
    return VisibleText(str(found.get("text") or ""), dict(found.get("report") or {}))
