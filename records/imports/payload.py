"""The payload of one WARC ``response`` record: read, checked against its declared digest,
and decoded into a temporary file the way ``snap fetch`` would have stored it.

Three layers, kept apart:

- the bytes *as recorded* after the HTTP head (``record.raw_stream``), still chunk-framed when
  the stored head says ``Transfer-Encoding: chunked``;
- the *entity body*: those bytes with the chunk framing removed (what WARC 1.1 calls the
  payload), still content-encoded (gzip, deflate);
- the *representation* snap stores and hashes: the entity body with Content-Encoding undone,
  as ``snap fetch`` stores it (see ``snapshotter.fetch``), so an imported page and a fetched
  one of the same bytes get the same snapshot id.

``WARC-Payload-Digest`` is compared with the entity body, as the standard defines it, and also
with the bytes as recorded: warcio, and the crawlers built on it, digest the chunk-framed bytes
when the head says chunked. Either equal is a match; neither is a refusal.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from snapshotter.fetch import Fetched, spool_body

CHUNK_SIZE = 64 * 1024
DIGEST_ALGORITHMS = ("sha1", "sha256", "sha512", "md5")


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class PayloadRefused(Exception):
    """This record cannot be imported (the others still can): one line of why."""


@dataclass(frozen=True)
class DeclaredDigest:
    """A ``WARC-Payload-Digest`` as written (``sha1:BASE32``, ``sha256:hex``…), and its bytes."""

    text: str
    algorithm: str
    value: bytes

    @property
    def in_hex(self) -> bool:
        """Whether the value was written in hex (else base32): decoded as ``parse_digest``
        decodes it, hex first when the length fits."""
        written = self.text.partition(":")[2].strip()
        return len(written) == 2 * len(self.value) and _is_hex(written)

    def spelled(self, value: bytes) -> str:
        """``algorithm:value`` with ``value`` in the spelling this digest was written in, so
        two digests read side by side can be compared character by character."""
        shown = value.hex() if self.in_hex else _as_base32(value)
        return f"{self.algorithm}:{shown}"


def parse_digest(text: str) -> DeclaredDigest:
    """``algorithm:value`` with the value in base32 (most crawlers, for sha1) or hex.

    Raises PayloadRefused for an algorithm snap cannot compute or a value of the wrong length:
    a digest that cannot be checked is not silently trusted."""
    algorithm, _, value = text.strip().partition(":")
    algorithm = algorithm.lower().replace("-", "")
    if algorithm not in DIGEST_ALGORITHMS or not value:
        raise PayloadRefused(f"payload digest {text[:100]!r} names no algorithm snap can check")
    size = hashlib.new(algorithm).digest_size
    decoded = _decode_digest_value(value.strip(), size)
    if decoded is None:
        raise PayloadRefused(f"payload digest {text[:100]!r} is not a {algorithm} digest")
    return DeclaredDigest(text=text.strip(), algorithm=algorithm, value=decoded)


def _is_hex(value: str) -> bool:
    try:
        bytes.fromhex(value)
    except ValueError:
        return False
    return True


def _decode_digest_value(value: str, size: int) -> bytes | None:
    if len(value) == 2 * size and _is_hex(value):
        return bytes.fromhex(value)
    padded = value.upper() + "=" * (-len(value) % 8)
    try:
        decoded = base64.b32decode(padded)
    except (binascii.Error, ValueError):
        return None
    return decoded if len(decoded) == size else None


class _HashingReader:
    """Passes reads through while hashing them: the chunk-framed bytes as recorded."""

    def __init__(self, stream: Any, digest: Any) -> None:
        self.stream = stream
        self.digest = digest

    def read(self, size: int = -1) -> bytes:
        data: bytes = self.stream.read(size)
        self.digest.update(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        data: bytes = self.stream.readline(size)
        self.digest.update(data)
        return data


@dataclass
class Payload:
    """A decoded body on disk (owned by the caller: ``fetched.cleanup()``) and what was
    checked on the way."""

    fetched: Fetched
    entity_size: int
    digest_checked: bool


def read_payload(
    record: Any,
    *,
    url: str,
    status: int,
    declared: DeclaredDigest | None,
    max_bytes: int,
    provenance: dict[str, object],
) -> Payload:
    """Spool a response record's payload to a temporary file, decoded, and check its digest.

    Raises PayloadRefused for a digest mismatch; FetchError/TooLarge from the decoding (an
    encoding snap does not decode, a body that does not decode, past the size cap); EOFError
    when the file ends inside the record (the caller reports the file as damaged)."""
    from warcio.bufferedreaders import ChunkedDataReader

    head = record.http_headers
    algorithm = declared.algorithm if declared else "sha256"
    recorded_hash = hashlib.new(algorithm)
    entity_hash = hashlib.new(algorithm)
    recorded = _HashingReader(record.raw_stream, recorded_hash)
    chunked = (head.get_header("Transfer-Encoding") or "").strip().lower() == "chunked"
    entity: Readable = ChunkedDataReader(recorded) if chunked else recorded
    sizes = [0]

    def chunks() -> Iterator[bytes]:
        while data := entity.read(CHUNK_SIZE):
            entity_hash.update(data)
            sizes[0] += len(data)
            yield data

    fetched = spool_body(
        chunks(),
        content_encoding=head.get_header("Content-Encoding") or "identity",
        max_bytes=max_bytes,
        url=url,
        status=status,
        content_type=head.get_header("Content-Type"),
        provenance=provenance,
    )
    while recorded.read(CHUNK_SIZE):  # what follows the last chunk is recorded bytes too
        pass
    missing = getattr(record.raw_stream, "limit", 0)
    if isinstance(missing, int) and missing > 0:  # LimitReader: bytes the record promised
        fetched.cleanup()
        raise EOFError(f"the file ends {missing} bytes before this record's end")
    cut = truncation(head, sizes[0], chunked=chunked, status=status, declared=declared)
    if cut is not None:
        fetched.cleanup()
        raise PayloadRefused(cut)
    if declared is not None:
        found = {entity_hash.digest(), recorded_hash.digest()}
        if declared.value not in found:
            fetched.cleanup()
            raise PayloadRefused(mismatch(declared, entity_hash.digest()))
    return Payload(fetched=fetched, entity_size=sizes[0], digest_checked=declared is not None)


def mismatch(declared: DeclaredDigest, computed: bytes) -> str:
    """The line refusing a payload whose digest is not the declared one: both digests in the
    spelling the record used, and in hex as well when that was base32, which is what
    ``sha1sum`` and its kin print, so a reader can check either with their own tools."""
    line = (
        f"payload digest mismatch: the record declares {declared.spelled(declared.value)},"
        f" its payload hashes to {declared.spelled(computed)}"
    )
    if declared.in_hex:
        return line
    algorithm = declared.algorithm
    return (
        f"{line} (in hex: declared {algorithm}:{declared.value.hex()},"
        f" payload {algorithm}:{computed.hex()})"
    )


BODILESS_STATUSES = frozenset({204, 304})  # answers that never carry a body (and 1xx)


def truncation(
    head: Any, size: int, *, chunked: bool, status: int, declared: DeclaredDigest | None
) -> str | None:
    """Why a body cannot be the whole body its record promised, or None.

    A body shorter than the head's ``Content-Length`` was cut (a crawler that lost the
    connection, a record written before the body arrived); stored, it would be a snapshot of
    the wrong bytes (an empty body is ``sha256:e3b0…``), and a quote checked against it would
    be "not found" instead of the evidence being unusable. An empty body with no payload
    digest and no ``Content-Length: 0`` is refused too: nothing shows it was not cut. Only
    answers that never carry a body (1xx, 204, 304) may be empty without saying so."""
    length = (head.get_header("Content-Length") or "").strip()
    promised = int(length) if length.isdigit() and not chunked else None
    if promised is not None and size < promised:
        return (
            f"the body is {size} bytes, shorter than its Content-Length of {promised}:"
            " the record is truncated"
        )
    if size == 0 and declared is None and promised != 0:
        if status < 200 or status in BODILESS_STATUSES:
            return None
        return (
            "the body is empty and the record declares neither a payload digest nor"
            " Content-Length: 0: nothing shows the body was not cut off"
        )
    return None


def _as_base32(value: bytes) -> str:
    return base64.b32encode(value).decode("ascii").rstrip("=")


def normalized_digest(declared: DeclaredDigest) -> str:
    """One spelling of a digest (hex), so that a revisit's ``sha1:BASE32`` finds the response
    that wrote the same digest in hex."""
    return f"{declared.algorithm}:{declared.value.hex()}"
