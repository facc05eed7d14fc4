"""Capture what the reader saw: the page rendered in Chromium, every request through snap.

The main document is fetched by snap's own fetcher exactly as on the HTTP path (same guard,
redirects, caps and deadline, same ``raw`` and ``headers`` blobs, same snapshot id: the
SHA-256 of its bytes) and extracted from its raw bytes as always. Then Chromium renders it
from those bytes, and every further request of the page is fulfilled by snap's fetcher
(``snapshotter.browser.resources``); Chromium itself is started with its resolver mapped to
nothing and an HTTP proxy on a closed loopback port (``snapshotter.browser.chromium``), so it
never resolves a name or opens a connection of its own.

What a browser capture stores, each blob content-addressed and write-once:

- ``resource``: the body of every subresource fetched;
- ``screenshot``: a full-page PNG; ``dom``: the DOM serialised once the text was read;
- ``text``: the rendered text (what a reader sees: ``innerText`` less the text nodes no reader
  can see, plus CSS-generated strings and same-origin frames' text; read once the page has gone
  quiet, or its settle budget ran out, and after a scroll pass when the page loads on
  scrolling: ``snapshotter.browser.reading``), recorded as a second extraction of the snapshot
  (``source`` 'rendered');
- ``browser``: the capture's browser document (format ``snap-browser-capture/1``): the browser
  and its version, every subresource request with its outcome, its HTTP exchanges and its
  body's digest, what was refused (WebSockets, service workers, downloads, pop-ups), how the
  text was read (``textReading``: the waits, the scroll pass, the characters left out by each
  rule with excerpts, the generated text added, frames read and not read, text under a
  full-viewport overlay), and the digests of the screenshot, DOM and text. Its digest is the
  rendered extraction's key.

The capture's provenance names every one of these blobs with its version (``browser.blobs``),
so fsck, audit and exports enumerate them without reading the document.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from snapshotter.browser.chromium import NETWORK_FLAGS, find_executable
from snapshotter.browser.errors import BrowserFailed, BrowserUnavailable
from snapshotter.browser.text_record import text_summary
from snapshotter.capture import BROWSER_PROVENANCE, RenderedText, SnapshotRecord
from snapshotter.errors import FetchError, InputError
from snapshotter.store import BlobStore, StoredBlob
from snapshotter.store.hashing import source_digest
from verifier import normalized_digest

if TYPE_CHECKING:
    from snapshotter.browser.render import Rendered
    from snapshotter.browser.session import BrowserSession
    from snapshotter.fetch import Fetched, FetchOptions

__all__ = [
    "BROWSER_FORMAT",
    "BrowserFailed",
    "BrowserOptions",
    "BrowserUnavailable",
    "capture_in_browser",
]

BROWSER_FORMAT = "snap-browser-capture/1"
RENDERED_TYPES = ("text/html", "application/xhtml+xml")
# 2: the visible text (text no reader sees left out; ::before/::after strings and same-origin
# frames added; read after a quiet page and a scroll pass); 1 was innerText after network idle.
EXTRACTOR_VERSION = 2


@dataclass(frozen=True)
class BrowserOptions:
    """How a browser capture behaves beside the fetch options; plain values from settings."""

    executable: str | None = None
    max_resources: int = 500
    max_total_bytes: int = 200 * 1024 * 1024
    idle_wait: float = 2.0  # settle budget: seconds waited for a quiet page, after load and scroll
    viewport: tuple[int, int] = (1280, 800)

    def find(self) -> str | None:
        """The Chromium executable, or None when none is installed."""
        return find_executable(self.executable)


def browser_installed(options: BrowserOptions) -> bool:
    """Whether a browser capture can be made here (``SNAP_CAPTURE=auto`` asks this)."""
    if options.find() is None:
        return False
    try:
        import playwright  # noqa: F401
    except ImportError:
        return False
    return True


def extractor_id(version: str, options: BrowserOptions) -> str:
    from snapshotter.browser.reading import QUIET

    width, height = options.viewport
    return (
        f"snap-browser@{EXTRACTOR_VERSION}+chromium@{version}+visible-text"
        f"+viewport={width}x{height}+quiet={QUIET:g}s+idle={options.idle_wait:g}s"
    )


def capture_in_browser(
    target: str,
    store: BlobStore,
    options: FetchOptions,
    browser: BrowserOptions,
    session: BrowserSession,
) -> SnapshotRecord:
    """Capture ``target`` (an http(s) URL) in the browser: the HTTP path's record of the main
    document, with the rendered text as a second extraction and the browser's blobs named in
    its provenance. A main document that is not HTML is captured by the HTTP path alone, and
    the record says so. Raises FetchError (BrowserFailed) for a failed capture."""
    from snapshotter.capture import extract_and_store
    from snapshotter.fetch import fetch_http

    if not target.strip() or target.split(":", 1)[0].lower() not in ("http", "https"):
        raise InputError(
            "a browser capture takes an http(s) URL; capture a local file without --browser"
        )
    started = time.monotonic()
    deadline = started + options.deadline_seconds
    try:
        fetched = fetch_http(target, options)
    except FetchError as error:  # the main document failed: a failed browser capture
        raise type(error)(
            error.message,
            url=error.url,
            final_url=error.final_url,
            status=error.status,
            provenance={**error.provenance, "captureMethod": "browser"},
        ) from None
    try:
        record = extract_and_store(fetched, store)
        if record.content_type not in RENDERED_TYPES:
            skipped = {"skipped": f"not rendered: the page is {record.content_type}, not HTML"}
            return replace(
                record,
                method="http",
                provenance={**record.provenance, BROWSER_PROVENANCE: skipped},
            )
        body = fetched.read_bytes()
    finally:
        fetched.cleanup()
    try:
        window = (started, deadline)
        return _render_and_store(record, fetched, body, store, options, browser, session, window)
    except BrowserFailed as error:
        raise BrowserFailed(
            error.message,
            url=record.url,
            final_url=record.final_url,
            status=record.status,
            provenance={**record.provenance, "captureMethod": "browser"},
        ) from None


def _render_and_store(
    record: SnapshotRecord,
    fetched: Fetched,
    body: bytes,
    store: BlobStore,
    options: FetchOptions,
    browser: BrowserOptions,
    session: BrowserSession,
    window: tuple[float, float],
) -> SnapshotRecord:
    from snapshotter.browser.render import PageJob
    from snapshotter.browser.resources import (
        BrowserLimits,
        ResourceFetcher,
        browser_headers,
        last_response_headers,
    )

    started, deadline = window
    job = PageJob(
        url=record.final_url,
        body=body,
        headers=browser_headers(last_response_headers(fetched.head), fetched.declared_content_type),
        deadline=deadline,
        started=started,
        idle_wait=browser.idle_wait,
        viewport=browser.viewport,
    )
    limits = BrowserLimits(browser.max_resources, browser.max_total_bytes)
    fetcher = ResourceFetcher(store, options, limits, job.render_by)
    began = _now()
    try:
        rendered = session.render(job, fetcher)
    finally:
        resources = fetcher.close()
    return _stored(record, rendered, resources, store, session.version(), browser, began)


def _stored(
    record: SnapshotRecord,
    rendered: Rendered,
    resources: list[dict[str, Any]],
    store: BlobStore,
    version: str,
    browser: BrowserOptions,
    began: str,
) -> SnapshotRecord:
    """Write the screenshot, DOM, rendered text and browser document; the record with the
    rendered extraction and the blobs in its provenance."""
    extractor = extractor_id(version, browser)
    tags = {"extractor": extractor}
    text_bytes = rendered.text.encode("utf-8")
    text_hash, text_size = source_digest(text_bytes)
    text_blob = store.put("text", text_hash, text_bytes, tags={"kind": "text", **tags})
    screenshot = _put(store, "screenshot", rendered.screenshot, tags)
    dom = _put(store, "dom", well_formed(rendered.dom).encode("utf-8"), tags)
    document = {
        "format": BROWSER_FORMAT,
        "url": record.url,
        "finalUrl": record.final_url,
        "mainDocument": {"hash": record.snapshot_id, "size": record.raw_size},
        "browser": {"name": "chromium", "version": version, "networkFlags": list(NETWORK_FLAGS)},
        "viewport": {"width": browser.viewport[0], "height": browser.viewport[1]},
        "renderedAt": began,
        "extractor": extractor,
        "renderedText": {"hash": text_hash, "size": text_size, "versionId": text_blob.version_id},
        "screenshot": {**_ref(screenshot), "height": rendered.screenshot_height},
        "dom": _ref(dom),
        "resources": resources,
        "refused": rendered.refused,
        "flags": rendered.flags,
        "textReading": rendered.reading,
        "limits": {
            "maxResources": browser.max_resources,
            "maxTotalBytes": browser.max_total_bytes,
        },
    }
    data = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    document_blob = _put(store, "browser", data.encode("utf-8"), tags)
    blobs = [
        {"kind": "browser", **_ref(document_blob)},
        {"kind": "screenshot", **_ref(screenshot)},
        {"kind": "dom", **_ref(dom)},
        {"kind": "text", **_ref(text_blob)},
    ]
    bodies = [item["body"] for item in resources if isinstance(item.get("body"), dict)]
    blobs += [{"kind": "resource", **body} for body in bodies]
    summary = {
        "document": _ref(document_blob),
        "extractor": extractor,
        "resources": sum(1 for item in resources if item.get("outcome") == "stored"),
        "refused": sum(1 for item in resources if item.get("outcome") != "stored")
        + len(rendered.refused),
        "flags": rendered.flags,
        "text": text_summary(rendered.reading),
        "blobs": blobs,
    }
    rendered_text = RenderedText(
        extractor=extractor,
        decoding=f"browser-capture={document_blob.digest}",
        content_type=record.content_type,
        text_hash=text_hash,
        norm_hash=normalized_digest(rendered.text),
        text_size=text_size,
        text_blob=text_blob,
    )
    provenance = {**record.provenance, BROWSER_PROVENANCE: summary}
    return replace(record, method="browser", rendered=rendered_text, provenance=provenance)


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate (a script can put one in the DOM) as U+FFFD, as the
    page script does for the rendered text: UTF-8 has no encoding for them."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _put(store: BlobStore, kind: str, data: bytes, tags: dict[str, str]) -> StoredBlob:
    digest, _ = source_digest(data)
    return store.put(kind, digest, data, tags={"kind": kind, **tags})


def _ref(blob: StoredBlob) -> dict[str, Any]:
    return {"hash": blob.digest, "size": blob.size, "versionId": blob.version_id}


def _now() -> str:
    from snapshotter.times import now, precise_time

    return precise_time(now())
