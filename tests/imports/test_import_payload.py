"""Properties of reading a response record's payload: whatever the framing and encoding the
crawler recorded, snap stores the body itself, and the declared digest is checked."""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from typing import Any

import brotli
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from records.imports.payload import PayloadRefused, parse_digest, read_payload
from tests.imports.warcs import chunked

ENCODERS = {
    "identity": lambda body: body,
    "gzip": lambda body: gzip.compress(body, mtime=0),
    "deflate": zlib.compress,
    "br": brotli.compress,
}


def one_record(body: bytes, encoding: str, chunk: int | None) -> bytes:
    payload = ENCODERS[encoding](body)
    headers = [("Content-Type", "text/plain; charset=utf-8")]
    if encoding != "identity":
        headers.append(("Content-Encoding", encoding))
    if chunk is not None:
        headers.append(("Transfer-Encoding", "chunked"))
        payload = chunked(payload, chunk)
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    record = writer.create_warc_record(
        "http://example.test/",
        "response",
        payload=io.BytesIO(payload),
        length=len(payload),
        http_headers=StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1"),
    )
    writer.write_record(record)
    return out.getvalue()


def read_back(data: bytes, *, tamper: bool = False) -> Any:
    for record in ArchiveIterator(io.BytesIO(data)):
        if record.rec_type != "response":
            continue
        text = record.rec_headers.get_header("WARC-Payload-Digest")
        declared = parse_digest(text)
        if tamper:
            flipped = bytes([declared.value[0] ^ 1]) + declared.value[1:]
            declared = type(declared)(text, declared.algorithm, flipped)
        payload = read_payload(
            record,
            url="http://example.test/",
            status=200,
            declared=declared,
            max_bytes=10_000_000,
            provenance={},
        )
        payload.fetched.cleanup()
        return payload
    raise AssertionError("no response record")


@settings(max_examples=60, deadline=None)
@given(
    body=st.binary(max_size=4000),
    encoding=st.sampled_from(sorted(ENCODERS)),
    chunk=st.one_of(st.none(), st.integers(min_value=1, max_value=700)),
)
def test_the_stored_body_is_the_body_whatever_the_framing(
    body: bytes, encoding: str, chunk: int | None
) -> None:
    payload = read_back(one_record(body, encoding, chunk))
    assert payload.fetched.raw_digest == "sha256:" + hashlib.sha256(body).hexdigest()
    assert payload.fetched.size == len(body)
    assert payload.digest_checked


@settings(max_examples=20, deadline=None)
@given(body=st.binary(max_size=2000), chunk=st.one_of(st.none(), st.integers(1, 300)))
def test_a_different_digest_is_always_refused(body: bytes, chunk: int | None) -> None:
    with pytest.raises(PayloadRefused, match="payload digest mismatch"):
        read_back(one_record(body, "gzip", chunk), tamper=True)
