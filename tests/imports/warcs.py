"""WARCs written with warcio the way crawlers write them: one gzip member per record, the HTTP
head as received (``Transfer-Encoding: chunked``, ``Content-Encoding: gzip``), ``sha1:BASE32``
payload digests over the bytes as recorded, request and metadata records beside each
response, and revisit records for payloads seen before."""

from __future__ import annotations

import gzip
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

QUOTE = "the origin serves only 1 request in 10"
PAGE = (
    b"<html><head><title>CDN caching</title></head><body><main><h1>Caching at the edge</h1>"
    b"<p>A cache hit ratio of 90 percent means the origin serves only 1 request in 10."
    b" Raise the ratio and the origin rests.</p></main></body></html>"
)
OTHER = (
    b"<html><head><title>Second</title></head><body><main><h1>Another page</h1>"
    b"<p>Quotes from a second page are checked against its own snapshot.</p></main></body></html>"
)
SOFTWARE = "Browsertrix-Crawler 1.2.0 (with warcio.js 2.2.1) (test fixture)"
WHEN = "2024-05-01T12:00:00Z"


def chunked(body: bytes, size: int = 40) -> bytes:
    """HTTP/1.1 chunk framing, as the bytes arrived on the wire."""
    out = b""
    for start in range(0, len(body), size):
        piece = body[start : start + size]
        out += f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    return out + b"0\r\n\r\n"


def sha256_id(body: bytes) -> str:
    return f"sha256:{hashlib.sha256(body).hexdigest()}"


@dataclass
class Written:
    path: Path
    response_ids: list[str]


class CrawlerWarc:
    """A WARC under construction; ``write`` closes it."""

    def __init__(
        self, path: Path, *, gzip_records: bool = True, software: str | None = SOFTWARE
    ) -> None:
        """``software``: what the warcinfo record names (None: no warcinfo record at all)."""
        self.path = path
        self.handle = path.open("wb")
        self.writer = WARCWriter(self.handle, gzip=gzip_records, warc_version="1.1")
        self.response_ids: list[str] = []
        if software is not None:
            info = self.writer.create_warcinfo_record(
                path.name, {"software": software, "format": "WARC File Format 1.1"}
            )
            self._write(info)

    def _write(self, record: Any) -> None:
        """Write, then close the buffer warcio spools a record without a stream into."""
        self.writer.write_record(record)
        if record.raw_stream is not None:
            record.raw_stream.close()

    def request(self, url: str) -> None:
        head = StatusAndHeaders(
            "GET / HTTP/1.1",
            [("Host", "example.test"), ("Accept-Encoding", "gzip, br")],
            is_http_request=True,
        )
        record = self.writer.create_warc_record(url, "request", http_headers=head)
        self._write(record)

    def response(
        self,
        url: str,
        body: bytes,
        *,
        date: str = WHEN,
        status: str = "200 OK",
        gzip_body: bool = True,
        chunk: bool = True,
        digest: str | None = None,
        content_type: str = "text/html; charset=utf-8",
        extra: list[tuple[str, str]] | None = None,
    ) -> str:
        """A response as a crawler records it; returns its record id."""
        payload = gzip.compress(body, mtime=0) if gzip_body else body
        headers = [("Content-Type", content_type), ("Date", "Wed, 01 May 2024 12:00:00 GMT")]
        headers += extra or []
        if gzip_body:
            headers.append(("Content-Encoding", "gzip"))
        if chunk:
            headers.append(("Transfer-Encoding", "chunked"))
            payload = chunked(payload)
        else:
            headers.append(("Content-Length", str(len(payload))))
        head = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
        warc_headers = {"WARC-Date": date, "WARC-IP-Address": "192.0.2.7"}
        if digest is not None:
            warc_headers["WARC-Payload-Digest"] = digest
        record = self.writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(payload),
            length=len(payload),
            http_headers=head,
            warc_headers_dict=warc_headers,
        )
        self._write(record)
        record_id = str(record.rec_headers.get_header("WARC-Record-ID"))
        self.response_ids.append(record_id)
        self.last_digest = str(record.rec_headers.get_header("WARC-Payload-Digest"))
        return record_id

    def metadata(self, url: str) -> None:
        record = self.writer.create_warc_record(
            url,
            "metadata",
            payload=io.BytesIO(b"outlink: http://example.test/next\r\n"),
            warc_content_type="application/warc-fields",
        )
        self._write(record)

    def revisit(self, url: str, digest: str, refers_uri: str, refers_date: str, date: str) -> None:
        head = StatusAndHeaders(
            "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
        )
        record = self.writer.create_revisit_record(
            url, digest, refers_uri, refers_date, http_headers=head
        )
        record.rec_headers.replace_header("WARC-Date", date)
        self._write(record)

    def write(self) -> Written:
        self.handle.close()
        return Written(self.path, self.response_ids)


def crawl(path: Path) -> Written:
    """Two pages, each with its request and metadata records; a revisit of the first page
    at a later time; a revisit of a page that is not in the archive."""
    warc = CrawlerWarc(path)
    warc.request("http://example.test/cdn")
    warc.response("http://example.test/cdn", PAGE)
    first_digest = warc.last_digest
    warc.metadata("http://example.test/cdn")
    warc.request("http://example.test/other")
    warc.response("http://example.test/other", OTHER, gzip_body=False, chunk=False)
    warc.metadata("http://example.test/other")
    warc.request("http://example.test/cdn")
    warc.revisit(
        "http://example.test/cdn",
        first_digest,
        "http://example.test/cdn",
        WHEN,
        date="2024-05-02T08:30:00Z",
    )
    warc.revisit(
        "http://example.test/gone",
        "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "http://example.test/gone",
        "2023-01-01T00:00:00Z",
        date="2024-05-02T08:31:00Z",
    )
    return warc.write()
