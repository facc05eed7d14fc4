"""The response head replayed with the stored (decoded) body: property tests of the renaming
rule, and the headers blob as capture writes it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from records.exports.http_head import ORIGINAL_PREFIX, Head, as_replayed, parse_exchanges
from snap.errors import IntegrityError
from snapshotter.capture import HEAD_FORMAT, capture
from snapshotter.fetch import FetchOptions
from snapshotter.store import FolderStore
from tests.http_fixtures import LoopbackServer

NAMES = st.sampled_from(
    [
        "Content-Length", "content-length", "Content-Encoding", "Transfer-Encoding",
        "transfer-encoding", "Content-Type", "Set-Cookie", "ETag", "X-Other",
    ]
)  # fmt: skip
VALUES = st.sampled_from(["gzip", "identity", "chunked", "0", "12", "162", "a=1", "text/html"])
HEADERS = st.lists(st.tuples(NAMES, VALUES), max_size=12)


@given(headers=HEADERS, size=st.sampled_from([0, 12, 162, 5000]))
def test_replayed_head_describes_the_stored_body(headers: list[tuple[str, str]], size: int) -> None:
    replayed = as_replayed(Head("HTTP/1.1 200 OK", tuple(headers)), size)
    live = [(n.lower(), v.strip().lower()) for n, v in replayed.headers]
    lengths = [v for n, v in live if n == "content-length"]
    assert lengths  # repeated identical values are kept as received (RFC 9110 allows them)
    assert set(lengths) == {str(size)}
    assert all(n != "transfer-encoding" for n, _ in live)
    assert all(v == "identity" for n, v in live if n == "content-encoding")
    # every original header is still there, in order: as it was, or renamed with its value
    restored = [
        (n.removeprefix(ORIGINAL_PREFIX), v)
        for n, v in replayed.headers
        if n.startswith(ORIGINAL_PREFIX) or (n, v) in headers
    ]
    assert restored == headers
    assert len(replayed.renamed) == sum(n.startswith(ORIGINAL_PREFIX) for n, _ in replayed.headers)


def test_unknown_headers_blob_is_refused() -> None:
    with pytest.raises(IntegrityError):
        parse_exchanges(b'{"format": "other"}', "sha256:" + "0" * 64, url="http://x.test/")
    with pytest.raises(IntegrityError):
        parse_exchanges(b"not a head", "sha256:" + "0" * 64, url="http://x.test/")


def test_capture_keeps_every_exchange(tmp_path: Path) -> None:
    store = FolderStore(tmp_path / "store")
    options = FetchOptions(max_bytes=10**6, timeout=5, max_redirects=3, allow_private=True)
    with LoopbackServer() as server:
        server.route(
            "/p",
            body=gzip.compress(b"<p>hello there</p>"),
            headers={"Content-Encoding": "gzip", "Set-Cookie": "a=1", "set-cookie": "b=2"},
            chunked=True,
        )
        server.redirect("/r", "/p", status=307)
        record = capture(server.url("/r"), store, options)
    named = record.provenance["headersBlob"]
    blob = store.get("headers", named["hash"])
    assert named["size"] == len(blob)
    document = json.loads(blob)
    assert document["format"] == HEAD_FORMAT
    hop, final = parse_exchanges(blob, named["hash"], url="unused")
    assert hop.status == 307
    assert hop.ip == final.ip == "127.0.0.1"
    assert hop.url == server.url("/r")
    assert ("Location", "/p") in hop.response.headers
    assert final.request is not None
    assert final.request.first_line == "GET /p HTTP/1.1"
    assert ("Host", f"127.0.0.1:{server.port}") in final.request.headers
    assert final.response.first_line == "HTTP/1.1 200 OK"
    names = [name for name, _ in final.response.headers]
    order = ["Content-Encoding", "Set-Cookie", "set-cookie", "Transfer-Encoding"]
    assert [name for name in names if name in order] == order  # as sent, duplicates kept
    assert [v for n, v in final.response.headers if n.lower() == "set-cookie"] == ["a=1", "b=2"]
    assert store.get("raw", record.snapshot_id) == b"<p>hello there</p>"  # decoded body


def test_an_imported_head_is_the_archived_response() -> None:
    blob = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n"
    [exchange] = parse_exchanges(blob, "sha256:" + "0" * 64, url="http://x.test/a")
    assert exchange.request is None
    assert exchange.status == 200
    assert exchange.url == "http://x.test/a"
    assert exchange.response.headers == (
        ("Content-Type", "text/html"),
        ("Content-Encoding", "gzip"),
    )


def test_local_file_has_no_head(tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    page.write_text("some words in a file", encoding="utf-8")
    store = FolderStore(tmp_path / "store")
    options = FetchOptions(max_bytes=10**6, timeout=5, max_redirects=3)
    record = capture(str(page), store, options)
    assert "headersBlob" not in record.provenance
    assert [kind for kind, _ in store.iterate()] == ["raw", "text"]


def test_metadata_fields_carry_the_provenance() -> None:
    from datetime import UTC, datetime

    from records.evidence import Evidence
    from records.exports.selection import CaptureItem
    from records.exports.warc import provenance_fields, warc_fields

    digest = "sha256:" + "ab" * 32
    evidence = Evidence(
        snapshot_id=digest,
        raw_hash=digest,
        raw_version_id="v1",
        store_location="s3://bucket/prefix",
        extraction_id=3,
        extractor="snap-html@1",
        normalizer="snap-exact@2",
        text_hash=None,
        norm_hash=None,
        text_version_id=None,
        pages=(),
        flags=(),
    )
    capture = CaptureItem(
        capture_id=7,
        url="https://example.test/a",
        final_url="https://example.test/b",
        fetched_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        status=200,
        provenance={
            "userAgent": "snap/0.1.0",
            "ip": "127.0.0.1",
            "tlsCertSha256": "cd" * 32,
            "redirects": [{"url": "https://example.test/a", "status": 302, "location": "b"}],
        },
        content_type="text/html",
        raw_size=10,
        evidence=evidence,
    )
    fields = dict(provenance_fields(capture))
    assert fields["tls-cert-sha256"] == "cd" * 32
    assert fields["snap-raw-version-id"] == "v1"
    assert fields["fetched-at"] == "2026-01-02T03:04:05.000000Z"
    assert fields["redirect"] == "302 https://example.test/a -> b"
    assert "snap-text-sha256" not in fields  # no value, no field
    text = warc_fields([("note", "two\r\nlines")]).decode()
    assert text == "note: two lines\r\n"  # a named field stays on one line
