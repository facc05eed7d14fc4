"""Properties of reading a response record's payload: whatever the framing and encoding the
crawler recorded, snap stores the body itself, and the declared digest is checked."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import re
import zlib
from typing import Any

import brotli
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from records.imports.payload import (
    DIGEST_ALGORITHMS,
    DeclaredDigest,
    PayloadRefused,
    parse_digest,
    read_payload,
)
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


def read_back(data: bytes, *, tamper: bool = False, declared: DeclaredDigest | None = None) -> Any:
    """Read the response record's payload, checked against its own digest or ``declared``."""
    for record in ArchiveIterator(io.BytesIO(data)):
        if record.rec_type != "response":
            continue
        if declared is None:
            declared = parse_digest(record.rec_headers.get_header("WARC-Payload-Digest"))
        if tamper:
            flipped = bytes([declared.value[0] ^ 1]) + declared.value[1:]
            declared = DeclaredDigest(declared.text, declared.algorithm, flipped)
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


def spell(value: bytes, spelling: str) -> str:
    """A digest value as crawlers write it: hex, or unpadded upper-case base32."""
    return value.hex() if spelling == "hex" else base64.b32encode(value).decode().rstrip("=")


MISMATCH = re.compile(
    r"payload digest mismatch: the record declares (?P<declared>\S+),"
    r" its payload hashes to (?P<computed>[^\s(]+)"
    r"(?: \(in hex: declared (?P<declared_hex>\S+), payload (?P<computed_hex>\S+)\))?$"
)


@settings(max_examples=60, deadline=None)
@given(
    body=st.binary(max_size=3000),
    other=st.binary(max_size=300),
    algorithm=st.sampled_from(DIGEST_ALGORITHMS),
    spelling=st.sampled_from(["hex", "base32"]),
    chunk=st.one_of(st.none(), st.integers(min_value=1, max_value=500)),
)
def test_a_mismatch_shows_both_digests_in_the_declared_spelling(
    body: bytes, other: bytes, algorithm: str, spelling: str, chunk: int | None
) -> None:
    """A reader compares the two digests character by character, and can recompute the
    payload's with their own tools: the computed one is that of the body itself, without its
    chunk framing; base32 ones are also shown in hex, as ``sha1sum`` prints them."""
    assume(other != body)
    declared = parse_digest(
        f"{algorithm}:{spell(hashlib.new(algorithm, other).digest(), spelling)}"
    )
    with pytest.raises(PayloadRefused) as refused:
        read_back(one_record(body, "identity", chunk), declared=declared)
    shown = MISMATCH.match(str(refused.value))
    assert shown is not None, str(refused.value)
    payload_digest = hashlib.new(algorithm, body).digest()
    assert (
        shown["declared"]
        == f"{algorithm}:{spell(hashlib.new(algorithm, other).digest(), spelling)}"
    )
    assert shown["computed"] == f"{algorithm}:{spell(payload_digest, spelling)}"
    if spelling == "hex":
        assert shown["declared_hex"] is None
    else:
        assert shown["declared_hex"] == f"{algorithm}:{hashlib.new(algorithm, other).hexdigest()}"
        assert shown["computed_hex"] == f"{algorithm}:{payload_digest.hex()}"
