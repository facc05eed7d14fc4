"""Every request a page makes, answered by snap's own fetcher and recorded.

The browser never fetches anything itself: each request Playwright intercepts is handed to
``ResourceFetcher.get``, which applies to it what applies to the page (the address guard, the
redirect limit, the size cap, the capture's deadline), plus the browser path's own caps on the
number of subresources and on their total bytes. Each body is stored write-once as a
``resource`` blob, and each outcome (stored, refused, failed) is recorded with every HTTP
exchange of it, for the capture's browser document.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from snapshotter.errors import AddressRefused, FetchError, TooLarge
from snapshotter.fetch import FetchOptions, fetch_http
from snapshotter.store import BlobStore
from snapshotter.weburl import InvalidURL

# Not handed to the browser: the body it gets is already decoded and whole, cookies are not
# kept between requests (snap's fetcher sends none), and connection headers are snap's own.
DROPPED_HEADERS = frozenset(
    {
        "content-encoding",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "set-cookie",
        "alt-svc",
    }
)


@dataclass(frozen=True)
class BrowserLimits:
    """The caps of one browser capture beside those of each fetch."""

    max_resources: int
    max_total_bytes: int


@dataclass(frozen=True)
class Served:
    """A response to fulfil the browser's request with."""

    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Refused:
    """A request not answered; ``error_code`` is the network error the browser sees."""

    reason: str
    error_code: str = "blockedbyclient"


Outcome = Served | Refused


@dataclass
class _Entry:
    record: dict[str, Any]
    outcome: Future[Outcome] = field(default_factory=Future)


def browser_headers(pairs: list[list[str]], content_type: str | None) -> dict[str, str]:
    """Response headers as the browser is given them: duplicates joined (Playwright takes one
    value per name), the ones of ``DROPPED_HEADERS`` left out."""
    headers: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        if key in DROPPED_HEADERS:
            continue
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    if content_type and "content-type" not in headers:
        headers["content-type"] = content_type
    return headers


def last_response_headers(head: bytes | None) -> list[list[str]]:
    """The final response's headers from a ``headers`` blob (snapshotter.fetch)."""
    exchanges = exchanges_of(head)
    if not exchanges:
        return []
    headers = exchanges[-1].get("response", {}).get("headers", [])
    return [list(pair) for pair in headers if isinstance(pair, list) and len(pair) == 2]


def exchanges_of(head: bytes | None) -> list[dict[str, Any]]:
    if head is None:
        return []
    document = json.loads(head)
    exchanges = document.get("exchanges", [])
    return [item for item in exchanges if isinstance(item, dict)]


class ResourceFetcher:
    """Answers one capture's subresource requests; thread-safe (Playwright's handlers run
    them on a thread pool). The same URL is fetched once per capture, however often the page
    asks for it."""

    def __init__(
        self, store: BlobStore, options: FetchOptions, limits: BrowserLimits, deadline: float
    ) -> None:
        self.store = store
        self.options = options
        self.limits = limits
        self.deadline = deadline  # time.monotonic() by which every fetch must be done
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._records: list[dict[str, Any]] = []
        self._fetched = 0
        self._total_bytes = 0
        self._closed = False

    def get(self, url: str, method: str, resource_type: str) -> Outcome:
        """Fetch ``url`` with snap's fetcher (or refuse it), store its body, record it."""
        with self._lock:
            if self._closed:
                return Refused("the capture had already ended", "aborted")
            entry = self._entries.get(url) if method == "GET" else None
            if entry is not None:
                entry.record["repeats"] = int(entry.record.get("repeats", 0)) + 1
                shared = entry.outcome
            else:
                shared = None
                record: dict[str, Any] = {"url": url, "method": method, "type": resource_type}
                self._records.append(record)
                reason = self._refusal(url, method)
                if reason is not None:
                    record |= {"outcome": "refused", "reason": reason}
                    return Refused(reason)
                entry = _Entry(record)
                self._entries[url] = entry
                self._fetched += 1
        if shared is not None:
            try:
                return shared.result(timeout=max(self.deadline - time.monotonic(), 0.0) + 1.0)
            except TimeoutError:
                return Refused("the capture deadline had passed", "timedout")
        try:
            outcome = self._fetch(url, entry.record)
        except Exception as error:  # a store that failed, a bug: this request fails, reported
            reason = f"could not fetch {url[:300]}: {type(error).__name__}: {error}"[:500]
            entry.record |= {"outcome": "failed", "reason": reason}
            outcome = Refused(reason, "failed")
        entry.outcome.set_result(outcome)
        return outcome

    def _refusal(self, url: str, method: str) -> str | None:
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            return f"only http and https subresources are fetched, not {scheme}:"
        if method != "GET":
            return f"a {method} request is not sent: a capture only reads"
        if self._fetched >= self.limits.max_resources:
            return f"over the cap of {self.limits.max_resources} subresources per capture"
        if self._total_bytes >= self.limits.max_total_bytes:
            return f"over the cap of {self.limits.max_total_bytes} subresource bytes per capture"
        if time.monotonic() >= self.deadline:
            return "the capture deadline had passed"
        return None

    def _fetch(self, url: str, record: dict[str, Any]) -> Outcome:
        room = max(self.limits.max_total_bytes - self._total_bytes, 1)
        options = replace(
            self.options,
            max_bytes=min(self.options.max_bytes, room),
            total_timeout=max(self.deadline - time.monotonic(), 0.001),
        )
        try:
            fetched = fetch_http(url, options)
        except TooLarge as error:
            if options.max_bytes < self.options.max_bytes:  # the room left, not the cap
                total = self.limits.max_total_bytes
                error = TooLarge(
                    f"{error.message}: what is left of the {total}-byte cap on a capture's"
                    " subresources",
                    status=error.status,
                    final_url=error.final_url,
                )
            return self._failed(record, error)
        except FetchError as error:
            return self._failed(record, error)
        except InvalidURL as error:  # a URL snap and browsers read apart: refused, not fetched
            return self._failed(record, FetchError(error.message, url=url))
        try:
            with self._lock:
                self._total_bytes += fetched.size
                over = self._total_bytes > self.limits.max_total_bytes
            record |= {
                "status": fetched.status,
                "finalUrl": fetched.final_url,
                "contentType": fetched.declared_content_type,
                "exchanges": exchanges_of(fetched.head),
            }
            if over:
                reason = f"over the cap of {self.limits.max_total_bytes} subresource bytes"
                record |= {"outcome": "refused", "reason": reason}
                return Refused(reason)
            blob = self.store.put(
                "resource", fetched.raw_digest, fetched.source, tags={"kind": "resource"}
            )
            body = fetched.read_bytes()
        finally:
            fetched.cleanup()
        record |= {
            "outcome": "stored",
            "body": {"hash": blob.digest, "size": blob.size, "versionId": blob.version_id},
        }
        headers = browser_headers(
            last_response_headers(fetched.head), fetched.declared_content_type
        )
        return Served(fetched.status or 200, headers, body)

    def _failed(self, record: dict[str, Any], error: FetchError) -> Outcome:
        refused = isinstance(error, (AddressRefused, TooLarge))
        record |= {
            "outcome": "refused" if refused else "failed",
            "reason": error.message,
            "status": error.status,
            "finalUrl": error.final_url,
        }
        if error.status is not None and not refused:  # an HTTP error answer: the page sees it
            return Served(error.status, {"content-type": "text/plain"}, b"")
        code = "addressunreachable" if isinstance(error, AddressRefused) else "failed"
        return Refused(error.message, code)

    def close(self) -> list[dict[str, Any]]:
        """End the capture's fetching: later requests are refused; the records so far."""
        with self._lock:
            self._closed = True
            unfinished = {"outcome": "failed", "reason": "not answered before the capture ended"}
            return [
                dict(record) if "outcome" in record else {**record, **unfinished}
                for record in self._records
            ]
