"""Every blob a manifest names can be checked from a WARC or WACZ export alone: the auditor's
check, run as the other side runs it (the manifests from the export's attestations, every record
of the WARC hashed). The ``headers`` blob is its own ``resource`` record, byte for byte, because
the response record's head is rewritten for replay (``X-Archive-Orig-*``)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from records.evidence import Evidence, StoreResolver
from records.exports.http_head import ARCHIVED_HEAD_MEDIA_TYPE, EXCHANGES_MEDIA_TYPE
from records.exports.selection import CaptureItem, Selection
from records.exports.warc import write_warc
from snapshotter.fetch import head_document
from snapshotter.store import FolderStore
from tests.exports.support import capture_and_cite, run_json, tool
from tests.http_fixtures import LoopbackServer
from tests.imports.warcs import PAGE, CrawlerWarc
from tests.records.conftest import Backend

HEADERS_URI = "urn:snap:headers:"


@dataclass(frozen=True)
class Written:
    """One record of an export as the other side reads it: its WARC headers and its payload
    (the bytes after the HTTP head, for request, response and revisit records)."""

    headers: dict[str, str]
    payload: bytes

    @property
    def uri(self) -> str:
        return self.headers.get("WARC-Target-URI", "")

    @property
    def sha256(self) -> str:
        return "sha256:" + hashlib.sha256(self.payload).hexdigest()


def written(warc: bytes) -> list[Written]:
    found = []
    for record in ArchiveIterator(io.BytesIO(warc)):
        found.append(Written(dict(record.rec_headers.headers), record.raw_stream.read()))
    return found


def exported(fmt: str, path: Path) -> tuple[bytes, list[dict[str, Any]]]:
    """The WARC and the attestation lines, where each format keeps them."""
    if fmt == "wacz":
        with zipfile.ZipFile(path) as package:
            warc = package.read("archive/data.warc.gz")
            lines = package.read("attestations/attestations.jsonl")
    else:
        warc = path.read_bytes()
        [lines] = [r.payload for r in written(warc) if r.uri.startswith("urn:snap:attestations:")]
    return warc, [json.loads(line) for line in lines.decode("utf-8").splitlines()]


def unchecked_blobs(warc: bytes, attestations: list[dict[str, Any]]) -> list[str]:
    """The auditor's check: each blob any manifest names (kind and digest) that is the payload
    of no record in the WARC; a ``headers`` blob must be its own record under its digest."""
    records = written(warc)
    payloads = {record.sha256 for record in records}
    heads = {r.uri: r.sha256 for r in records if r.uri.startswith(HEADERS_URI)}
    missing = []
    for blob in manifest_blobs(attestations):
        digest = blob["sha256"]
        found = heads.get(HEADERS_URI + digest) if blob["kind"] == "headers" else digest
        if found != digest or digest not in payloads:
            missing.append(f"{blob['kind']} {digest}")
    return missing


def manifest_blobs(attestations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``blobs`` of every capture's manifest (a verification's line has none)."""
    documents = [
        json.loads(line["manifest"]["document"]) for line in attestations if line.get("manifest")
    ]
    return [blob for document in documents for blob in document["blobs"]]


@pytest.mark.parametrize("fmt", ["warc", "wacz"])
def test_every_blob_a_manifest_names_is_checked_from_the_export(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path, fmt: str
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    out = tmp_path / ("evidence.wacz" if fmt == "wacz" else "evidence.warc.gz")
    code, summary = run_json(
        backend, "export", "--format", fmt, "-o", str(out), "--citation", "c-edge"
    )
    assert code == 0, summary
    warc, attestations = exported(fmt, out)
    kinds = sorted(blob["kind"] for blob in manifest_blobs(attestations))
    assert kinds == ["headers", "raw", "text"]  # the check below is not vacuous
    assert unchecked_blobs(warc, attestations) == []

    digest = record["provenance"]["headersBlob"]["hash"]
    records = written(warc)
    [head] = [r for r in records if r.uri == HEADERS_URI + digest]
    assert head.headers["WARC-Type"] == "resource"
    assert head.headers["Content-Type"] == EXCHANGES_MEDIA_TYPE
    assert head.headers["WARC-Payload-Digest"] == head.headers["WARC-Block-Digest"] == digest
    assert json.loads(head.payload)["format"] == "snap-http-exchanges/1"
    final = [r for r in records if r.headers["WARC-Type"] == "response"][-1]
    assert final.headers["WARC-Payload-Digest"] == record["snapshotId"]
    assert head.headers["WARC-Refers-To"] == final.headers["WARC-Record-ID"]

    plain = tmp_path / "plain.warc.gz"
    plain.write_bytes(warc)
    checked = tool("warcio", "check", "-v", str(plain))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "fail" not in checked.stdout
    indexed = tool("warcio", "index", "-f", "warc-type,warc-target-uri", str(plain))
    assert indexed.returncode == 0, indexed.stderr
    assert {"warc-type": "resource", "warc-target-uri": HEADERS_URI + digest} in [
        json.loads(line) for line in indexed.stdout.splitlines()
    ]
    if fmt == "wacz":
        validated = tool("wacz", "validate", "-f", str(out))
        assert validated.returncode == 0, validated.stdout + validated.stderr

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SNAP_", "AWS_"))}
    other = Backend("embedded", env | {"SNAP_HOME": str(tmp_path / "other")})
    code, imported = run_json(other, "import", str(out))
    assert code == 0, imported
    [skipped] = [r for r in imported["records"] if r["uri"] == HEADERS_URI + digest]
    assert skipped["outcome"] == "skipped"
    assert record["snapshotId"] in {r["snapshotId"] for r in imported["records"]}


def test_an_imported_head_is_exported_as_the_archive_recorded_it_once_for_two_captures(
    backend: Backend, tmp_path: Path
) -> None:
    """``snap import`` keeps the archived response head as text: the record says
    ``application/http``. Two pages answered with the same head share one blob: one record,
    referring to the first capture's response."""
    crawl = CrawlerWarc(tmp_path / "crawl.warc.gz")
    crawl.response("http://example.test/a", PAGE)
    crawl.response("http://example.test/b", PAGE)
    crawl.write()
    code, imported = run_json(backend, "import", str(crawl.path))
    assert code == 0, imported
    snapshot = imported["records"][0]["snapshotId"]
    out = tmp_path / "again.warc.gz"
    code, summary = run_json(
        backend, "export", "--format", "warc", "-o", str(out), "--snapshot", snapshot
    )
    assert code == 0, summary
    assert summary["counts"]["captures"] == 2
    warc, attestations = exported("warc", out)
    heads = {blob["sha256"] for blob in manifest_blobs(attestations) if blob["kind"] == "headers"}
    assert len(heads) == 1
    assert unchecked_blobs(warc, attestations) == []
    records = written(warc)
    [head] = [r for r in records if r.uri.startswith(HEADERS_URI)]
    assert head.headers["Content-Type"] == ARCHIVED_HEAD_MEDIA_TYPE
    assert head.payload.startswith(b"HTTP/1.1 200 OK\r\n")
    [response] = [r for r in records if r.headers["WARC-Type"] == "response"]
    assert head.headers["WARC-Refers-To"] == response.headers["WARC-Record-ID"]
    assert tool("warcio", "check", str(out)).returncode == 0


# --- the writer itself, on captures made up here ------------------------------------------

HEADS = [
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Head: a\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Head: b\r\n",
    head_document(
        [
            {
                "url": "http://example.test/json",
                "ip": "127.0.0.1",
                "request": {
                    "method": "GET",
                    "target": "/json",
                    "httpVersion": "HTTP/1.1",
                    "headers": [],
                },
                "response": {
                    "httpVersion": "HTTP/1.1",
                    "status": 200,
                    "reason": "OK",
                    "headers": [["Content-Type", "text/html"]],
                },
            }
        ]
    ),
]
BODIES = [b"<p>one</p>", b"<p>two</p>"]


def sha256_id(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def made_up_capture(store: FolderStore, number: int, head: int | None, body: int) -> CaptureItem:
    """A capture of ``BODIES[body]`` whose headers blob is ``HEADS[head]`` (None: none)."""
    raw = BODIES[body]
    store.put("raw", sha256_id(raw), raw, tags={})
    provenance: dict[str, Any] = {}
    if head is not None:
        data = HEADS[head]
        store.put("headers", sha256_id(data), data, tags={})
        provenance["headersBlob"] = {"hash": sha256_id(data), "size": len(data), "versionId": None}
    evidence = Evidence(
        snapshot_id=sha256_id(raw),
        raw_hash=sha256_id(raw),
        raw_version_id=None,
        store_location=store.location,
        extraction_id=None,
        extractor="test",
        normalizer="test",
        text_hash=None,
        norm_hash=None,
        text_version_id=None,
        pages=(),
        flags=(),
    )
    url = f"http://example.test/{number}"
    when = datetime(2024, 5, 1, 12, number, tzinfo=UTC)
    return CaptureItem(number, url, url, when, 200, provenance, "text/html", len(raw), evidence)


@settings(max_examples=40, deadline=None)
@given(
    chosen=st.lists(
        st.tuples(st.none() | st.integers(0, len(HEADS) - 1), st.integers(0, len(BODIES) - 1)),
        min_size=1,
        max_size=6,
    )
)
def test_one_headers_record_per_distinct_blob_referring_to_its_first_capture(
    chosen: list[tuple[int | None, int]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = FolderStore(Path(folder) / "store")
        captures = [made_up_capture(store, n, head, body) for n, (head, body) in enumerate(chosen)]
        stores = StoreResolver(store, lock_mode="GOVERNANCE", lock_days=1)
        out = io.BytesIO()
        summary = write_warc(
            out, Selection("made up", tuple(captures)), stores, filename="t.warc.gz"
        )
    first: dict[int, int] = {}  # head → the first capture with it
    for capture, (head, _) in zip(captures, chosen, strict=True):
        if head is not None:
            first.setdefault(head, capture.capture_id)
    records = [r for r in written(out.getvalue()) if r.uri.startswith(HEADERS_URI)]
    assert len(records) == len(first)
    for record, (head, capture_id) in zip(records, first.items(), strict=True):
        assert record.payload == HEADS[head]
        assert record.headers["WARC-Target-URI"] == HEADERS_URI + sha256_id(HEADS[head])
        assert record.headers["WARC-Refers-To"] == summary.response_ids[capture_id]
        media = EXCHANGES_MEDIA_TYPE if HEADS[head].startswith(b"{") else ARCHIVED_HEAD_MEDIA_TYPE
        assert record.headers["Content-Type"] == media
