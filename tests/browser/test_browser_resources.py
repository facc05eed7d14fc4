"""The browser path's request answering, without a browser: what ``ResourceFetcher`` fetches,
refuses and records, and the response headers Chromium is given."""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from snapshotter.browser.resources import (
    DROPPED_HEADERS,
    BrowserLimits,
    Refused,
    ResourceFetcher,
    Served,
    browser_headers,
)
from snapshotter.fetch import FetchOptions
from snapshotter.store import FolderStore
from tests.http_fixtures import LoopbackServer

OPTIONS = FetchOptions(max_bytes=1024 * 1024, timeout=5.0, max_redirects=5, allow_private=True)


def fetcher(tmp_path: Path, **limits: int) -> ResourceFetcher:
    caps = {"max_resources": 10, "max_total_bytes": 1024 * 1024, **limits}
    store = FolderStore(tmp_path / "store")
    return ResourceFetcher(store, OPTIONS, BrowserLimits(**caps), time.monotonic() + 30)


def test_each_url_is_fetched_once_and_recorded_with_its_exchanges(
    http_server: LoopbackServer, tmp_path: Path
) -> None:
    http_server.route("/a.css", body=b"p { color: red }", content_type="text/css")
    http_server.redirect("/moved.css", "/a.css")
    answers = fetcher(tmp_path)
    first = answers.get(http_server.url("/a.css"), "GET", "stylesheet")
    again = answers.get(http_server.url("/a.css"), "GET", "stylesheet")
    moved = answers.get(http_server.url("/moved.css"), "GET", "stylesheet")
    assert isinstance(first, Served)
    assert first == again
    assert isinstance(moved, Served)
    assert moved.body == b"p { color: red }"
    assert http_server.paths() == ["/a.css", "/moved.css", "/a.css"]
    records = answers.close()
    assert [r["outcome"] for r in records] == ["stored", "stored"]
    assert records[0]["repeats"] == 1
    assert [e["response"]["status"] for e in records[1]["exchanges"]] == [302, 200]


def test_what_is_refused_is_refused_before_any_connection(
    http_server: LoopbackServer, tmp_path: Path
) -> None:
    http_server.route("/one", body=b"1", content_type="text/plain")
    http_server.route("/two", body=b"2", content_type="text/plain")
    answers = fetcher(tmp_path, max_resources=1)
    assert isinstance(answers.get(http_server.url("/one"), "GET", "image"), Served)
    over = answers.get(http_server.url("/two"), "GET", "image")
    post = answers.get(http_server.url("/one"), "POST", "fetch")
    local = answers.get("file:///etc/passwd", "GET", "image")
    assert isinstance(over, Refused)
    assert "cap of 1 subresources" in over.reason
    assert isinstance(post, Refused)
    assert "POST" in post.reason
    assert isinstance(local, Refused)
    assert "only http and https" in local.reason
    assert http_server.paths() == ["/one"]
    assert [r["outcome"] for r in answers.close()] == ["stored", "refused", "refused", "refused"]


def test_the_total_bytes_cap_refuses_what_would_pass_it(
    http_server: LoopbackServer, tmp_path: Path
) -> None:
    http_server.route("/big", body=b"x" * 600, content_type="text/plain")
    http_server.route("/more", body=b"y" * 600, content_type="text/plain")
    answers = fetcher(tmp_path, max_total_bytes=1000)
    assert isinstance(answers.get(http_server.url("/big"), "GET", "image"), Served)
    refused = answers.get(http_server.url("/more"), "GET", "image")
    assert isinstance(refused, Refused)
    assert "the 400-byte cap: what is left of the 1000-byte cap" in refused.reason
    assert [r["outcome"] for r in answers.close()] == ["stored", "refused"]


def test_an_http_error_is_answered_with_its_status_and_recorded_failed(
    http_server: LoopbackServer, tmp_path: Path
) -> None:
    answers = fetcher(tmp_path)
    missing = answers.get(http_server.url("/missing.png"), "GET", "image")
    assert isinstance(missing, Served)
    assert missing.status == 404
    assert answers.close()[0]["outcome"] == "failed"


header_names = st.sampled_from(
    [*DROPPED_HEADERS, "Content-Type", "Cache-Control", "X-Thing", "Content-Security-Policy"]
)


@given(st.lists(st.tuples(header_names, st.text(max_size=20)), max_size=12))
def test_browser_headers_drop_exactly_the_listed_headers(pairs: list[tuple[str, str]]) -> None:
    given_pairs = [[name, value] for name, value in pairs]
    headers = browser_headers(given_pairs, "text/html")
    assert not set(headers) & DROPPED_HEADERS
    kept = {name.lower() for name, _ in pairs if name.lower() not in DROPPED_HEADERS}
    assert set(headers) == kept | {"content-type"}
    for name in kept:
        values = [value for other, value in pairs if other.lower() == name]
        assert headers[name] == ", ".join(values)
