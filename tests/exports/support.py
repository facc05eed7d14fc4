"""Captures to export: a page served gzip-encoded and chunked behind a redirect, the way real
servers send it, fetched and cited through the real ``snap`` command."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator

from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend

PAGE = b"""<!DOCTYPE html><html><head><title>Caching at the edge</title></head><body>
<nav><a href="/">Home</a></nav>
<main><h1>Caching at the edge</h1>
<p>A cache hit ratio of 90 percent means the origin serves only 1 request in 10.
Raising it to 99 percent means the origin serves only 1 request in 100, a tenfold cut.</p>
<p>Short lifetimes, cookies on static files and query strings that vary per reader all split
the cache into many small entries. Normalizing cache keys often lifts the ratio noticeably.</p>
</main></body></html>"""
QUOTE = "the origin serves only 1 request in 10"
CLAIM = "At 90% the origin sees a tenth of the requests."
TOOLS = Path(sys.executable).parent


def run_json(backend: Backend, *args: str) -> tuple[int, Any]:
    done = backend.snap(*args, "--json")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def serve_page(server: LoopbackServer) -> None:
    """``/old`` redirects to ``/page``, served gzip-encoded, chunked, with two Set-Cookie."""
    server.route(
        "/page",
        body=gzip.compress(PAGE),
        headers={
            "Content-Encoding": "gzip",
            "Set-Cookie": "a=1",
            "X-Served-By": "loopback",
            "set-cookie": "b=2",
        },
        chunked=True,
    )
    server.redirect("/old", "/page", status=301)


def capture_and_cite(backend: Backend, server: LoopbackServer, tmp_path: Path) -> dict[str, Any]:
    """Fetch ``/old`` and verify an answer citing it (one claim, citation ``c-edge``); the fetch
    record."""
    serve_page(server)
    code, record = run_json(backend, "fetch", server.url("/old"))
    assert code == 0, record
    citation = tmp_path / "citation.json"
    citation.write_text(
        json.dumps(
            {
                "answerId": "a-edge",
                "claims": [
                    {
                        "citationId": "c-edge",
                        "text": CLAIM,
                        "url": server.url("/old"),
                        "quote": QUOTE,
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    code, report = run_json(backend, "verify", str(citation))
    assert code == 0, report
    return record  # type: ignore[no-any-return]


def records_of(path: Path) -> list[tuple[dict[str, str], bytes, Any]]:
    """Every record: (WARC headers, content stream read whole, HTTP headers or None)."""
    found = []
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream):
            headers = dict(record.rec_headers.headers)
            body = record.content_stream().read()
            found.append((headers, body, record.http_headers))
    return found


def tool(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TOOLS / name), *args], capture_output=True, text=True, timeout=120, check=False
    )
