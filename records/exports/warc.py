"""WARC 1.1 of a selection, written with warcio, one gzip member per record.

Per capture, in this order (the order crawlers write):

* each redirect hop: a ``request`` and a ``response`` (status line and headers as captured; the
  hop's body was never kept, so its payload is empty and the headers say so);
* ``request`` (the head snap sent) and ``response`` (the final status line and headers, see
  ``http_head.as_replayed``, and the body as stored), linked by ``WARC-Concurrent-To``; the
  response's ``WARC-Payload-Digest`` is the snapshot id. A second capture of the same bytes in
  one archive is a ``revisit`` (identical payload digest) instead of a second copy;
* a local file has no HTTP: one ``resource`` record with its bytes;
* ``metadata`` (``application/warc-fields``): provenance (redirect chain, peer address, TLS
  certificate fingerprint, user agent, snap's ids and hashes). Never JSON under the page's URL:
  a replay tool would serve it instead of the page;
* ``conversion``: each text exported with the capture under ``urn:snap:text:sha256:<hex>``,
  ``WARC-Refers-To`` the response: the texts the selected checks read through it (the latest
  check's first), then every other text its manifest names (the text extracted from the
  bytes at capture time, a browser capture's rendered text), each once per archive; the
  ``metadata`` record lists each (``snap-extraction: ID SOURCE DIGEST EXTRACTOR``).
* ``resource``: the capture's ``headers`` blob byte for byte, under
  ``urn:snap:headers:sha256:<hex>``, ``WARC-Refers-To`` the response, its Content-Type what
  the bytes are (``http_head.head_media_type``). The response's head is rewritten for replay
  (``X-Archive-Orig-*``), so without this record the manifest's ``headers`` digest could not be
  checked from the export. Each blob is written once per archive: a later capture with the
  same blob adds none, and the record's ``WARC-Refers-To`` names the first capture's response
  (as a revisit names the first copy); each capture's ``metadata`` record names its blob
  (``snap-headers-sha256``).
* a browser capture (``snapshotter.browser``) adds, after its page: a request/response pair for
  every subresource the page loaded (its exchanges as snap's fetcher made them, the body as
  stored; a body already in the archive is a ``revisit``), so a replay tool shows the page
  with its images and styles from the archive alone; then ``resource`` records for the
  full-page screenshot (``urn:snap:screenshot:sha256:<hex>``), the rendered DOM
  (``urn:snap:dom:…``) and the capture's browser document (``urn:snap:browser:…``), each
  ``WARC-Refers-To`` the page's response (its rendered text is a ``conversion``, above).
* last, every other blob the capture's manifest names that no record written so far carries as
  its payload, as a ``resource`` ``urn:snap:<kind>:sha256:<hex>``: the writer reads the
  manifest itself, so every blob of every exported manifest can be hashed from the archive.

After the captures, one ``resource`` record of attestations (``urn:snap:attestations:…``, JSON
lines): each capture's manifest, signature and timestamp token and each record's inclusion
proof with its checkpoint, so the WARC alone can be checked offline (a WACZ carries the same as
``attestations/attestations.jsonl``).

Every blob is read through the store's digest-checked path into a temporary file first: a
damaged or missing blob stops the export (exit 1) before anything is written in its place.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from warcio.recordbuilder import RecordBuilder
from warcio.statusandheaders import StatusAndHeaders, StatusAndHeadersParser
from warcio.warcwriter import WARCWriter

from records.attest.manifest import origin_line
from records.evidence import (
    Evidence,
    StoreResolver,
    browser_blobs,
    capture_blobs,
    recorded_head,
)
from records.exports.http_head import (
    Exchange,
    Head,
    as_replayed,
    head_media_type,
    parse_exchanges,
)
from records.exports.selection import CaptureItem, Selection
from records.vocabulary import CaptureOutcome
from snapshotter.capture import BROWSER_PROVENANCE, HEAD_FORMAT, HEADERS_BLOB
from snapshotter.errors import IntegrityError
from snapshotter.times import precise_time
from snapshotter.version import __version__

WARC_VERSION = "1.1"
CONFORMS_TO = "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
TEXT_URI_PREFIX = "urn:snap:text:"
HEADERS_URI_PREFIX = "urn:snap:headers:"  # + the blob's digest, sha256:<hex>
ATTESTATIONS_URI_PREFIX = "urn:snap:attestations:sha256:"
EMPTY_SHA256 = "sha256:" + hashlib.sha256(b"").hexdigest()


@dataclass
class WarcSummary:
    """What was written, by record type, and where each capture's response record is (for the
    WACZ pages and annotations)."""

    records: dict[str, int] = field(default_factory=dict)
    response_ids: dict[int, str] = field(default_factory=dict)  # capture id → WARC-Record-ID
    titles: dict[int, str] = field(default_factory=dict)

    def count(self, record_type: str) -> None:
        self.records[record_type] = self.records.get(record_type, 0) + 1


def write_warc(
    out: IO[bytes],
    selection: Selection,
    stores: StoreResolver,
    *,
    filename: str,
    progress: Callable[[int], None] | None = None,
    attestations: list[dict[str, Any]] | None = None,
) -> WarcSummary:
    """Write the selection as WARC records to ``out`` (gzip per record); ``progress`` is told
    of each capture written. ``attestations`` (records.attest.attest.export_attestations: each
    capture's manifest, signature, token and inclusion proof, each verification's proof, with
    the checkpoint they are proved against) end the file as one ``resource`` record, JSON
    lines under ``urn:snap:attestations:sha256:<hex>``, so a WARC alone can be checked."""
    writer = _Writer(WARCWriter(out, gzip=True, warc_version=WARC_VERSION), stores)
    writer.warcinfo(selection, filename)
    for capture in selection.captures:
        writer.capture(capture)
        if progress is not None:
            progress(1)
    if attestations:
        writer.attestations(attestations)
    return writer.summary


def warc_date(capture: CaptureItem) -> str:
    """The capture time as recorded at fetch (microseconds, UTC, ``Z``)."""
    recorded = capture.provenance.get("fetchedAt")
    if isinstance(recorded, str) and recorded.endswith("Z"):
        return recorded
    return precise_time(capture.fetched_at)


def sha256_hex(digest: str) -> str:
    return digest.removeprefix("sha256:")


def related_headers(capture: CaptureItem, response_id: str, digest: str) -> dict[str, str]:
    """The WARC headers of a record that carries a blob of the capture whose response is
    ``response_id``: its text, its code spans, its headers blob."""
    return {
        "WARC-Date": warc_date(capture),
        "WARC-Refers-To": response_id,
        "WARC-Payload-Digest": digest,
    }


BLOB_MEDIA_TYPES = {
    "screenshot": "image/png",
    "dom": "text/html; charset=utf-8",
    "browser": "application/json",
    "code": "application/json",
    "text": "text/plain; charset=utf-8",
}


def carried_texts(capture: CaptureItem, named: list[tuple[str, str]]) -> list[Evidence]:
    """The texts written with a capture, each a ``conversion``: those the selected checks read
    through it (the latest check's first), then each other text its manifest names (the text
    extracted from the bytes at capture time and, for a browser capture, the rendered text)."""
    texts = list(capture.checked_texts)
    have = {text.text_hash for text in texts}
    by_digest = {text.text_hash: text for text in capture.extractions if text.text_hash}
    for kind, digest in named:
        if kind == "text" and digest not in have and digest in by_digest:
            texts.append(by_digest[digest])
            have.add(digest)
    return texts


def blob_versions(capture: CaptureItem) -> dict[tuple[str, str], str | None]:
    """The recorded version of each blob the capture's records name, by (kind, digest)."""
    versions: dict[tuple[str, str], str | None] = {}
    for text in (*capture.extractions, *capture.checked_texts):
        versions[("raw", text.raw_hash)] = text.raw_version_id
        if text.text_hash is not None:
            versions[("text", text.text_hash)] = text.text_version_id
        if text.code_hash is not None:
            versions[("code", text.code_hash)] = text.code_version_id
    for kind, digest, version in capture_blobs(capture.provenance):
        versions[(kind, digest)] = version
    return versions


@dataclass(frozen=True)
class StoredHead:
    """A capture's ``headers`` blob, read once through the digest-checked path: the response
    records replay its exchanges, and its own record carries it byte for byte."""

    digest: str
    data: bytes


class _Writer:
    def __init__(self, writer: WARCWriter, stores: StoreResolver) -> None:
        self.writer = writer
        self.stores = stores
        self.summary = WarcSummary()
        self.first_response: dict[str, tuple[str, str, str]] = {}  # snapshot → (id, uri, date)
        self.texts: set[str] = set()
        self.resources: dict[str, tuple[str, str, str]] = {}  # body digest → (id, uri, date)
        self.heads: set[str] = set()  # headers blobs written
        self.payloads: set[str] = set()  # the digest of every record's payload written

    # --- records -----------------------------------------------------------------------

    def warcinfo(self, selection: Selection, filename: str) -> None:
        extractors = sorted({c.evidence.extractor for c in selection.captures})
        normalizers = sorted({c.evidence.normalizer for c in selection.captures})
        fields = [
            ("software", f"snap/{__version__}"),
            ("format", "WARC File Format 1.1"),
            ("conformsTo", CONFORMS_TO),
            ("description", f"snap evidence export: {selection.described}"),
            *(("snap-extractor", extractor) for extractor in extractors),
            *(("snap-normalizer", normalizer) for normalizer in normalizers),
        ]
        payload = warc_fields(fields)
        headers = {"WARC-Filename": filename}
        self._write(None, "warcinfo", payload, headers, content_type="application/warc-fields")

    def attestations(self, lines: list[dict[str, Any]]) -> None:
        payload = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        data = payload.encode("utf-8")
        uri = ATTESTATIONS_URI_PREFIX + hashlib.sha256(data).hexdigest()
        self._write(uri, "resource", data, {}, content_type="application/x-ndjson")

    def capture(self, capture: CaptureItem) -> None:
        named = self._manifest_blobs(capture)
        texts = carried_texts(capture, named)
        head = self._stored_head(capture)
        # a local file has no HTTP exchange to replay
        local = capture.status is None
        response_id = self._resource(capture) if local else self._http(capture, head)
        self.summary.response_ids[capture.capture_id] = response_id
        self._metadata(capture, response_id, texts)
        for text in texts:
            self._conversion(capture, text, response_id)
        if head is not None:
            self._headers(capture, head, response_id)
        if browser_blobs(capture.provenance):
            self._browser(capture, response_id)
        self._rest(capture, named, response_id)

    def _http(self, capture: CaptureItem, head: StoredHead | None) -> str:
        exchanges = (
            [] if head is None else parse_exchanges(head.data, head.digest, url=capture.final_url)
        )
        date = warc_date(capture)
        for hop in exchanges[:-1]:
            self._exchange(hop, None, date, capture)
        return self._exchange(exchanges[-1] if exchanges else None, capture, date, capture)

    def _exchange(
        self,
        exchange: Exchange | None,
        body_of: CaptureItem | None,
        date: str,
        capture: CaptureItem,
    ) -> str:
        """A request/response pair; ``body_of`` is the capture whose stored body goes with the
        response (None: a redirect hop, whose body was not kept)."""
        uri = exchange.url if exchange is not None else capture.final_url
        ip = exchange.ip if exchange is not None and exchange.ip else capture.provenance.get("ip")
        if origin_line(capture.provenance) is not None:  # an import: the address is a claim,
            ip = None  # kept in the metadata record as what its archive states
        common = {"WARC-Date": date, **({"WARC-IP-Address": str(ip)} if ip else {})}
        response_id = str(StatusAndHeadersParser.make_warc_id())
        if exchange is not None and exchange.request is not None:
            request = _http_headers(exchange.request, request=True)
            self._write(uri, "request", b"", {**common, "WARC-Concurrent-To": response_id}, request)
        head = exchange.response if exchange is not None else _minimal_head(capture)
        if body_of is None:
            replayed = as_replayed(head, 0)
            http = _http_headers(replayed)
            self._write(uri, "response", b"", {**common, "WARC-Record-ID": response_id}, http)
            return response_id
        seen = self.first_response.get(body_of.snapshot_id)
        replayed = as_replayed(head, body_of.raw_size)
        http = _http_headers(replayed)
        headers = {**common, "WARC-Record-ID": response_id}
        if seen is not None:
            headers |= {
                "WARC-Profile": RecordBuilder.REVISIT_PROFILE_1_1,
                "WARC-Refers-To": seen[0],
                "WARC-Refers-To-Target-URI": seen[1],
                "WARC-Refers-To-Date": seen[2],
                "WARC-Payload-Digest": body_of.snapshot_id,
            }
            self._write(uri, "revisit", b"", headers, http)
            return response_id
        with self._blob(
            capture, "raw", capture.evidence.raw_hash, capture.evidence.raw_version_id
        ) as raw:
            headers["WARC-Payload-Digest"] = body_of.snapshot_id
            self._write(uri, "response", raw, headers, http)
            raw.seek(0)
            self.summary.titles[capture.capture_id] = _title(raw.read(64 * 1024))
        self.first_response[body_of.snapshot_id] = (response_id, uri, date)
        return response_id

    def _resource(self, capture: CaptureItem) -> str:
        response_id = str(StatusAndHeadersParser.make_warc_id())
        evidence = capture.evidence
        headers = {
            "WARC-Date": warc_date(capture),
            "WARC-Record-ID": response_id,
            "WARC-Payload-Digest": capture.snapshot_id,
        }
        with self._blob(capture, "raw", evidence.raw_hash, evidence.raw_version_id) as raw:
            self._write(
                capture.final_url, "resource", raw, headers, content_type=capture.content_type
            )
            raw.seek(0)
            self.summary.titles[capture.capture_id] = _title(raw.read(64 * 1024))
        return response_id

    def _metadata(self, capture: CaptureItem, response_id: str, texts: list[Evidence]) -> None:
        headers = {
            "WARC-Date": warc_date(capture),
            "WARC-Concurrent-To": response_id,
            "WARC-Refers-To": response_id,
        }
        payload = warc_fields(provenance_fields(capture) + text_fields(texts))
        self._write(
            capture.final_url, "metadata", payload, headers, content_type="application/warc-fields"
        )

    def _conversion(self, capture: CaptureItem, evidence: Evidence, response_id: str) -> None:
        """A text, once per archive (a second capture of the same bytes refers to it)."""
        if evidence.text_hash is None or evidence.text_hash in self.texts:
            return
        self.texts.add(evidence.text_hash)
        headers = related_headers(capture, response_id, evidence.text_hash)
        uri = TEXT_URI_PREFIX + evidence.text_hash
        with self._blob(capture, "text", evidence.text_hash, evidence.text_version_id) as text:
            self._write(uri, "conversion", text, headers, content_type="text/plain; charset=utf-8")
        if evidence.code_hash is not None:  # where the text is code, beside it
            code = related_headers(capture, response_id, evidence.code_hash)
            code_uri = f"urn:snap:code:{evidence.code_hash}"
            with self._blob(capture, "code", evidence.code_hash, evidence.code_version_id) as blob:
                self._write(code_uri, "resource", blob, code, content_type="application/json")

    def _headers(self, capture: CaptureItem, head: StoredHead, response_id: str) -> None:
        """The headers blob as stored, once per archive (see the module docstring), so the
        other side can hash it against the manifest's ``headers`` digest."""
        if head.digest in self.heads:
            return
        self.heads.add(head.digest)
        self._write(
            HEADERS_URI_PREFIX + head.digest,
            "resource",
            head.data,
            related_headers(capture, response_id, head.digest),
            content_type=head_media_type(head.data),
        )

    # --- a browser capture ---------------------------------------------------------------

    def _browser(self, capture: CaptureItem, page_id: str) -> None:
        """Every subresource of a browser capture, then its screenshot, DOM, browser document
        and rendered text (see the module docstring)."""
        named = {
            kind: (digest, version) for kind, digest, version in browser_blobs(capture.provenance)
        }
        digest, version = named["browser"]
        with self._blob(capture, "browser", digest, version) as blob:
            document = json.loads(blob.read())
        date = warc_date(capture)
        for item in document.get("resources", []):
            if item.get("outcome") == CaptureOutcome.STORED and isinstance(item.get("body"), dict):
                self._subresource(capture, item, date)
        refers = {"WARC-Date": date, "WARC-Refers-To": page_id}
        for kind, media_type in (
            ("screenshot", "image/png"),
            ("dom", "text/html; charset=utf-8"),
            ("browser", "application/json"),
        ):
            digest, version = named[kind]
            with self._blob(capture, kind, digest, version) as blob:
                headers = {**refers, "WARC-Payload-Digest": digest}
                uri = f"urn:snap:{kind}:{digest}"
                self._write(uri, "resource", blob, headers, content_type=media_type)
        text = document.get("renderedText") or {}
        if isinstance(text.get("hash"), str) and text["hash"] not in self.texts:
            self.texts.add(text["hash"])
            headers = {**refers, "WARC-Payload-Digest": text["hash"]}
            uri = TEXT_URI_PREFIX + text["hash"]
            with self._blob(capture, "text", text["hash"], text.get("versionId")) as blob:
                self._write(
                    uri, "conversion", blob, headers, content_type="text/plain; charset=utf-8"
                )

    def _subresource(self, capture: CaptureItem, item: dict[str, Any], date: str) -> None:
        body = item["body"]
        document = {"format": HEAD_FORMAT, "exchanges": item.get("exchanges") or []}
        exchanges = parse_exchanges(json.dumps(document).encode(), body["hash"], url=item["url"])
        for hop in exchanges[:-1]:
            self._pair(hop, date, None)
        if exchanges:
            self._pair(exchanges[-1], date, (capture, body))

    def _pair(
        self,
        exchange: Exchange,
        date: str,
        body_of: tuple[CaptureItem, dict[str, Any]] | None,
    ) -> None:
        """A subresource's request and response; the body from its ``resource`` blob, or a
        revisit when the same bytes are already in the archive."""
        common = {"WARC-Date": date, **({"WARC-IP-Address": exchange.ip} if exchange.ip else {})}
        response_id = str(StatusAndHeadersParser.make_warc_id())
        if exchange.request is not None:
            request = _http_headers(exchange.request, request=True)
            headers = {**common, "WARC-Concurrent-To": response_id}
            self._write(exchange.url, "request", b"", headers, request)
        headers = {**common, "WARC-Record-ID": response_id}
        if body_of is None:
            http = _http_headers(as_replayed(exchange.response, 0))
            self._write(exchange.url, "response", b"", headers, http)
            return
        capture, body = body_of
        digest = str(body["hash"])
        http = _http_headers(as_replayed(exchange.response, int(body["size"])))
        seen = self.resources.get(digest)
        if seen is not None:
            headers |= {
                "WARC-Profile": RecordBuilder.REVISIT_PROFILE_1_1,
                "WARC-Refers-To": seen[0],
                "WARC-Refers-To-Target-URI": seen[1],
                "WARC-Refers-To-Date": seen[2],
                "WARC-Payload-Digest": digest,
            }
            self._write(exchange.url, "revisit", b"", headers, http)
            return
        version = body.get("versionId")
        with self._blob(
            capture, "resource", digest, version if isinstance(version, str) else None
        ) as blob:
            self._write(
                exchange.url, "response", blob, {**headers, "WARC-Payload-Digest": digest}, http
            )
        self.resources[digest] = (response_id, exchange.url, date)

    # --- what the manifest names -------------------------------------------------------

    def _manifest_blobs(self, capture: CaptureItem) -> list[tuple[str, str]]:
        """(kind, digest) of every blob the capture's manifest names, read from the manifest
        itself (digest-checked); none for a capture recorded before manifests were kept."""
        named = capture.provenance.get("manifest")
        if not isinstance(named, dict) or not isinstance(named.get("hash"), str):
            return []
        version = named.get("versionId")
        with self._blob(
            capture, "manifest", named["hash"], version if isinstance(version, str) else None
        ) as blob:
            document = json.loads(blob.read())
        return [
            (str(item["kind"]), str(item["sha256"]))
            for item in document.get("blobs") or []
            if isinstance(item, dict) and isinstance(item.get("sha256"), str)
        ]

    def _rest(self, capture: CaptureItem, named: list[tuple[str, str]], response_id: str) -> None:
        """Each blob the manifest names that no record written so far carries as its payload
        (a kind this writer has no place for): a ``resource`` record of its bytes, so every
        blob of every exported manifest can be hashed from the archive alone."""
        versions = blob_versions(capture)
        for kind, digest in named:
            if digest in self.payloads:
                continue
            with self._blob(capture, kind, digest, versions.get((kind, digest))) as blob:
                media_type = BLOB_MEDIA_TYPES.get(kind, "application/octet-stream")
                if kind == "headers":
                    media_type = head_media_type(blob.read())
                    blob.seek(0)
                self._write(
                    f"urn:snap:{kind}:{digest}",
                    "conversion" if kind == "text" else "resource",
                    blob,
                    related_headers(capture, response_id, digest),
                    content_type=media_type,
                )

    # --- plumbing ----------------------------------------------------------------------

    def _stored_head(self, capture: CaptureItem) -> StoredHead | None:
        """The capture's ``headers`` blob; None for one recorded before heads were kept, or a
        local file."""
        named = recorded_head(capture.provenance)
        if named is None:
            return None
        _, digest, version = named
        with self._blob(capture, "headers", digest, version) as blob:
            return StoredHead(digest, blob.read())

    @contextmanager
    def _blob(
        self, capture: CaptureItem, kind: str, digest: str, version: str | None
    ) -> Iterator[IO[bytes]]:
        """The blob in a temporary file, complete and digest-checked before it is used."""
        store = self.stores.store_for(capture.evidence)
        with tempfile.TemporaryFile() as sink:
            store.read_into(kind, digest, sink, version_id=version)
            sink.seek(0)
            yield sink

    def _write(
        self,
        uri: str | None,
        record_type: str,
        payload: bytes | IO[bytes],
        warc_headers: dict[str, str],
        http_headers: StatusAndHeaders | None = None,
        *,
        content_type: str = "",
    ) -> None:
        """One record, with a SHA-256 block digest computed here (warcio's default is SHA-1)
        and the payload digest given by the caller kept as is (the length is passed)."""
        with ExitStack() as stack:
            stream = (
                stack.enter_context(tempfile.TemporaryFile())
                if isinstance(payload, bytes)
                else payload
            )
            if isinstance(payload, bytes):
                stream.write(payload)
            length = stream.seek(0, 2)
            block = hashlib.sha256()
            if http_headers is not None:
                http_headers.compute_headers_buffer()
                block.update(http_headers.headers_buff)
            stream.seek(0)
            payload_hash = hashlib.sha256()
            while chunk := stream.read(1024 * 1024):
                block.update(chunk)
                payload_hash.update(chunk)
            stream.seek(0)
            headers = {**warc_headers, "WARC-Block-Digest": "sha256:" + block.hexdigest()}
            payload_digest = "sha256:" + payload_hash.hexdigest()
            self.payloads.add(payload_digest)
            if record_type not in ("warcinfo", "revisit"):
                given = headers.setdefault("WARC-Payload-Digest", payload_digest)
                if given != payload_digest:  # the store checked it; this guards the writer
                    raise IntegrityError(f"{record_type} of {uri}", given, payload_digest)
            record = self.writer.create_warc_record(
                uri or "",
                record_type,
                payload=stream,
                length=length,
                warc_content_type=content_type,
                warc_headers_dict=headers,
                http_headers=http_headers,
            )
            self.writer.write_record(record)
        self.summary.count(record_type)


def _http_headers(head: Head, *, request: bool = False) -> StatusAndHeaders:
    if request:
        return StatusAndHeaders(head.first_line, list(head.headers), protocol="")
    protocol, _, status_line = head.first_line.partition(" ")
    return StatusAndHeaders(status_line, list(head.headers), protocol=protocol)


def _minimal_head(capture: CaptureItem) -> Head:
    """A capture made before snap kept heads: its status and the few headers it recorded."""
    recorded = capture.provenance.get("headers")
    names = {
        "contentType": "Content-Type",
        "etag": "ETag",
        "lastModified": "Last-Modified",
        "date": "Date",
    }
    headers = tuple(
        (names[key], str(value)) for key, value in (recorded or {}).items() if key in names
    )
    return Head(f"HTTP/1.1 {capture.status}", headers)


def _title(head: bytes) -> str:
    """The page's <title> for pages.jsonl, from the first 64 KiB; empty when none."""
    match = re.search(rb"<title[^>]*>(.*?)</title", head, re.IGNORECASE | re.DOTALL)
    if match is None:
        return ""
    return " ".join(match.group(1).decode("utf-8", "replace").split())[:300]


def origin_fields(provenance: dict[str, Any]) -> list[tuple[str, Any]]:
    """How the capture came to snap, and its seal; for an import, the archive it came from
    and what that archive states (its address, date and software), named as claims."""
    manifest = provenance.get("manifest") or {}
    signature = manifest.get("signature") or {}
    stamp = provenance.get("timestamp") or {}
    fields: list[tuple[str, Any]] = [
        ("snap-manifest-sha256", manifest.get("hash")),
        ("snap-manifest-signature-key-id", signature.get("keyId")),
        ("snap-timestamp-sha256", stamp.get("hash")),
    ]
    if origin_line(provenance) is None:
        return [("ip-address", provenance.get("ip")), *fields]
    warc = provenance.get("warc") or {}
    return [
        ("capture-method", "import"),
        ("imported-from", origin_line(provenance)),
        ("imported-from-file", warc.get("file")),
        ("imported-from-sha256", warc.get("fileDigest")),
        ("imported-from-record-id", warc.get("recordId")),
        ("imported-from-package", (warc.get("package") or {}).get("file")),
        ("imported-from-package-sha256", (warc.get("package") or {}).get("sha256")),
        ("archive-claimed-software", warc.get("software")),
        ("archive-claimed-date", provenance.get("fetchedAt")),
        ("archive-claimed-ip-address", provenance.get("ip")),
        ("archive-signature", provenance.get("archiveSignature") or "none carried"),
        *fields,
    ]


def provenance_fields(capture: CaptureItem) -> list[tuple[str, str]]:
    """The capture's provenance as WARC named fields, one value per line."""
    evidence = capture.evidence
    provenance = capture.provenance
    fields: list[tuple[str, Any]] = [
        ("snap-capture-id", capture.capture_id),
        ("snap-snapshot-id", capture.snapshot_id),
        ("snap-raw-sha256", evidence.raw_hash),
        ("snap-text-sha256", evidence.text_hash),
        ("snap-norm-sha256", evidence.norm_hash),
        ("snap-extraction-id", evidence.extraction_id),
        ("snap-extractor", evidence.extractor),
        ("snap-normalizer", evidence.normalizer),
        ("snap-store", evidence.store_location),
        ("snap-raw-version-id", evidence.raw_version_id),
        ("snap-text-version-id", evidence.text_version_id),
        ("snap-version", provenance.get("snapVersion")),
        ("requested-url", capture.url),
        ("final-url", capture.final_url),
        ("fetched-at", warc_date(capture)),
        ("http-status", capture.status),
        ("content-type", capture.content_type),
        ("user-agent", provenance.get("userAgent")),
        *origin_fields(provenance),
        ("port", provenance.get("port")),
        ("tls-cert-sha256", provenance.get("tlsCertSha256")),
        ("local-path", provenance.get("path")),
        ("local-mtime", provenance.get("mtime")),
    ]
    for hop in provenance.get("redirects") or []:
        if isinstance(hop, dict):
            fields.append(
                ("redirect", f"{hop.get('status')} {hop.get('url')} -> {hop.get('location')}")
            )
    head = provenance.get(HEADERS_BLOB)
    if isinstance(head, dict):
        fields.append(("snap-headers-sha256", head.get("hash")))
        fields.append(("snap-headers-version-id", head.get("versionId")))
    browser = provenance.get(BROWSER_PROVENANCE)
    if isinstance(browser, dict):
        fields.append(("snap-capture-method", "browser" if "blobs" in browser else "http"))
        fields.append(("snap-browser-extractor", browser.get("extractor")))
        document = browser.get("document")
        if isinstance(document, dict):
            fields.append(("snap-browser-document-sha256", document.get("hash")))
    fields.append(
        (
            "payload",
            "as stored: transfer- and content-decoded; renamed headers are X-Archive-Orig-*",
        )
    )
    return [(name, str(value)) for name, value in fields if value not in (None, "")]


def text_fields(texts: list[Evidence]) -> list[tuple[str, str]]:
    """Each text written with the capture, one line each, so a reader can tell which
    ``conversion`` record holds the text a check was made against (the check's log leaf names
    its extraction): ``snap-extraction: ID SOURCE sha256:<hex> EXTRACTOR``."""
    return [
        (
            "snap-extraction",
            f"{text.extraction_id or '-'} {text.source or '-'} {text.text_hash} {text.extractor}",
        )
        for text in texts
        if text.text_hash is not None
    ]


def warc_fields(fields: list[tuple[str, str]]) -> bytes:
    """``application/warc-fields``: ``name: value`` lines; a line break in a value is folded
    out (WARC named fields are one line each)."""
    lines = [f"{name}: {' '.join(value.split())}\r\n" for name, value in fields]
    return "".join(lines).encode("utf-8")
