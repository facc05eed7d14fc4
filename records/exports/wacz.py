"""WACZ 1.1.1: the WARC, its CDXJ index, the page list and the annotations, in one zip.

Written here rather than by ``wacz create`` because snap writes its own page list (one page
per snapshot, with its title and capture time) and its own annotations; the layout follows the
WACZ 1.1.1 specification: ``archive/data.warc.gz`` (stored, not deflated, so replay tools can
read records by offset), ``indexes/index.cdx`` (sorted CDXJ, made by ``cdxj-indexer``),
``pages/pages.jsonl``, ``annotations/annotations.jsonl``, ``datapackage.json`` listing the
SHA-256 and size of every other file, and ``datapackage-digest.json`` with the SHA-256 of
``datapackage.json``.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cdxj_indexer.main import CDXJIndexer

from records.exports.annotations import web_annotations
from records.exports.selection import Selection
from records.exports.warc import WarcSummary, warc_date
from snapshotter.store.hashing import sha256_of
from snapshotter.times import now, wire_time
from snapshotter.version import __version__

WACZ_VERSION = "1.1.1"
WARC_NAME = "data.warc.gz"
PAGES_FORMAT = "json-pages-1.0"


@dataclass(frozen=True)
class WaczContents:
    """What a WACZ holds beside its WARC: its pages, its annotations, and whether its
    datapackage digest is signed."""

    pages: int
    annotations: int
    signed: bool


def write_wacz(
    out: Path,
    warc: Path,
    selection: Selection,
    summary: WarcSummary,
    sign: Callable[[str, str], dict[str, Any]] | None = None,
    *,
    attestations: list[dict[str, Any]] | None = None,
) -> WaczContents:
    """Package ``warc`` (written for ``selection``) as a WACZ at ``out``; returns counts.
    ``sign(hash, created)`` gives the ``signedData`` of ``datapackage-digest.json``
    (records.attest.wacz_signing)."""
    pages = list(_pages(selection, summary))
    notes = list(web_annotations(selection, summary))
    files: list[tuple[str, bytes | Path, int]] = [
        (f"archive/{WARC_NAME}", warc, zipfile.ZIP_STORED),
        ("indexes/index.cdx", _cdxj(warc), zipfile.ZIP_DEFLATED),
        ("pages/pages.jsonl", _jsonl([_pages_header(), *pages]), zipfile.ZIP_DEFLATED),
        ("annotations/annotations.jsonl", _jsonl(notes), zipfile.ZIP_DEFLATED),
    ]
    if attestations:  # manifests, tokens and inclusion proofs (records.attest), one a line
        files.append(
            ("attestations/attestations.jsonl", _jsonl(attestations), zipfile.ZIP_DEFLATED)
        )
    created = wire_time(now())
    with zipfile.ZipFile(out, "w") as archive:
        resources = [_add(archive, name, data, method) for name, data, method in files]
        package = _datapackage(selection, pages, resources, created)
        archive.writestr(_info("datapackage.json", zipfile.ZIP_DEFLATED), package)
        digest: dict[str, Any] = {"path": "datapackage.json", "hash": sha256_of(package)}
        if sign is not None:
            digest["signedData"] = sign(digest["hash"], created)
        archive.writestr(
            _info("datapackage-digest.json", zipfile.ZIP_DEFLATED),
            json.dumps(digest, indent=2).encode("utf-8"),
        )
    return WaczContents(len(pages), len(notes), signed=sign is not None)


def _pages_header() -> dict[str, Any]:
    return {"format": PAGES_FORMAT, "id": "pages", "title": "Snapshots"}


def _pages(selection: Selection, summary: WarcSummary) -> Iterable[dict[str, Any]]:
    seen: set[str] = set()
    for capture in selection.captures:
        if capture.snapshot_id in seen or capture.capture_id not in summary.response_ids:
            continue
        seen.add(capture.snapshot_id)
        page: dict[str, Any] = {
            "id": capture.snapshot_id.removeprefix("sha256:")[:32],
            "url": capture.final_url,
            "ts": warc_date(capture),
            "title": summary.titles.get(capture.capture_id) or capture.final_url,
        }
        yield page


def _cdxj(warc: Path) -> bytes:
    """The sorted CDXJ index of the WARC, as replay tools compute it."""
    output = io.StringIO()
    with warc.open("rb") as stream:
        CDXJIndexer(output, [stream], sort=True, filename=WARC_NAME).process_all()
    return output.getvalue().encode("utf-8")


def _jsonl(documents: Iterable[dict[str, Any]]) -> bytes:
    lines = (json.dumps(document, ensure_ascii=False) + "\n" for document in documents)
    return "".join(lines).encode("utf-8")


def _info(name: str, method: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, datetime.now(UTC).timetuple()[:6])
    info.compress_type = method
    return info


def _add(archive: zipfile.ZipFile, name: str, data: bytes | Path, method: int) -> dict[str, Any]:
    """Add one file; its datapackage resource entry (hash and size of the stored bytes)."""
    hasher = hashlib.sha256()
    size = 0
    with archive.open(_info(name, method), "w", force_zip64=True) as sink:
        source = io.BytesIO(data) if isinstance(data, bytes) else data.open("rb")
        with source:
            while chunk := source.read(1024 * 1024):
                sink.write(chunk)
                hasher.update(chunk)
                size += len(chunk)
    return {
        "name": name.rsplit("/", 1)[-1].lower(),
        "path": name,
        "hash": "sha256:" + hasher.hexdigest(),
        "bytes": size,
    }


def _datapackage(
    selection: Selection, pages: list[dict[str, Any]], resources: list[dict[str, Any]], created: str
) -> bytes:
    package: dict[str, Any] = {
        "profile": "data-package",
        "resources": resources,
        "title": f"snap evidence: {selection.described}",
        "description": (
            "Captures stored by snap with their provenance (metadata records), extracted texts"
            " (conversion records) and the citations checked against them"
            " (annotations/annotations.jsonl, W3C Web Annotations)."
        ),
        "created": created,
        "wacz_version": WACZ_VERSION,
        "software": f"snap {__version__}",
    }
    if pages:
        package["mainPageURL"] = pages[0]["url"]
        package["mainPageDate"] = pages[0]["ts"]
    return json.dumps(package, indent=2, ensure_ascii=False).encode("utf-8")
