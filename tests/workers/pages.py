"""A loopback HTTP server of many distinct small pages, for worker tests and the bench.

``/page/N`` is an HTML page of SENTENCES sentences, each naming N (so every page has its own
bytes and every quote is in exactly one page); ``/flaky/N/K`` answers 503 to its first K
requests and then the page; ``/gone/N`` is a 404. Every request's path and start and end
times are kept. ``hold()`` keeps every request waiting until ``release()``, so a test can
know that the workers' fetches are in flight when it kills them. It binds 127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import sqlalchemy as sa

from records.models import Capture, Citation, Extraction, Snapshot, utcnow
from records.urls import canonical_url

SENTENCES = 50


def sentence(page: int, k: int) -> str:
    return f"Sentence {k} of page {page} reports a measured value of {page * 1000 + k} units."


def page_html(page: int, sentences: int = SENTENCES) -> bytes:
    paragraphs = "".join(f"<p>{sentence(page, k)}</p>" for k in range(sentences))
    return (
        f"<!doctype html><html><head><title>Page {page}</title></head>"
        f"<body><article><h1>Report {page}</h1>{paragraphs}</article></body></html>"
    ).encode()


class PageServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *, delay: float = 0.0, sentences: int = SENTENCES) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay = delay
        self.sentences = sentences
        self.lock = threading.Lock()
        self.log: list[tuple[str, float, float]] = []  # path, start, end (monotonic)
        self.gate = threading.Event()  # cleared by hold(): requests wait until it is set again
        self.gate.set()
        self.held = 0  # requests waiting at the gate now
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def hits(self) -> Counter[str]:
        with self.lock:
            return Counter(path for path, _, _ in self.log)

    def hold(self) -> None:
        """Keep every request from now on waiting (at most two minutes) until ``release``."""
        self.gate.clear()

    def release(self) -> None:
        self.gate.set()

    def wait_held(self, count: int, timeout: float) -> int:
        """Until ``count`` requests are waiting at the gate, or ``timeout`` seconds; how many."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                held = self.held
            if held >= count or time.monotonic() > deadline:
                return held
            time.sleep(0.05)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client killed mid-request (the kill tests do it on purpose) is not an error of
        the server; anything else is printed as usual."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def close(self) -> None:
        self.release()
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: PageServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        start = time.monotonic()
        with self.server.lock:
            earlier = sum(1 for path, _, _ in self.server.log if path == self.path)
        if not self.server.gate.is_set():
            with self.server.lock:
                self.server.held += 1
            self.server.gate.wait(timeout=120)
            with self.server.lock:
                self.server.held -= 1
        if self.server.delay:
            time.sleep(self.server.delay)
        status, body = self.answer(earlier)
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with self.server.lock:
            self.server.log.append((self.path, start, time.monotonic()))

    def answer(self, earlier: int) -> tuple[int, bytes]:
        path = self.path.partition("?")[0]  # a query only makes the URL longer
        if match := re.fullmatch(r"/page/(\d+)", path):
            return 200, page_html(int(match[1]), self.server.sentences)
        if match := re.fullmatch(r"/flaky/(\d+)/(\d+)", path):
            if earlier < int(match[2]):
                return 503, b"try again later"
            return 200, page_html(int(match[1]), self.server.sentences)
        return 404, b"not here"


def cite_every_page(engine: sa.Engine, per_page: int) -> int:
    """``per_page`` citations of each captured page, pinned to its snapshot and extraction,
    written straight into the table (as a verify run would have recorded them)."""
    with engine.begin() as connection:
        pinned = connection.execute(
            sa.select(Capture.url, Snapshot.id, sa.func.min(Extraction.id))
            .join(Snapshot, Snapshot.id == Capture.snapshot_id)
            .join(Extraction, Extraction.snapshot_id == Snapshot.id)
            .group_by(Capture.url, Snapshot.id)
        ).all()
        rows, now = [], utcnow()
        for url, snapshot_id, extraction_id in pinned:
            page = int(url.rsplit("/", 1)[1])
            for k in range(per_page):
                exact = sentence(page, k)
                rows.append(
                    {
                        "id": f"c-{page}-{k}",
                        "fingerprint": "sha256:" + hashlib.sha256(exact.encode()).hexdigest(),
                        "url": url,
                        "url_key": canonical_url(url),
                        "snapshot_id": snapshot_id,
                        "extraction_id": extraction_id,
                        "exact": exact,
                        "prefix": "",
                        "suffix": "",
                        "created_at": now,
                    }
                )
        for start in range(0, len(rows), 5000):
            connection.execute(sa.insert(Citation), rows[start : start + 5000])
    return len(rows)
