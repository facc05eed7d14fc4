"""The capture manifest: one canonical JSON document per capture naming what was captured, how,
when, by which software, and the SHA-256 of every blob of the capture.

Canonical form is RFC 8785 (JSON Canonicalization Scheme), written by
``snapshotter.canonical_json`` (the standard library's C encoder where it writes what JCS asks,
the ``rfc8785`` package elsewhere): our manifests hold only strings, integers, booleans, null,
arrays and objects, for which JCS is sorted keys, no whitespace and minimal string escapes;
anything else (a float, an integer beyond 2**53) is refused, so no value can be written two
ways. The
manifest's SHA-256 is what is signed and what a time-stamping authority stamps.

Blobs are an enumerable list: the ``raw`` bytes, the ``text`` of the extraction, and every
provenance entry named ``<kind>Blob`` holding ``{"hash", "size"}`` (today ``headersBlob``; a
browser capture's ``screenshotBlob``, ``domBlob`` … join without a change here).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from records.vocabulary import ArchiveAttestation
from snapshotter.canonical_json import canonical_json
from snapshotter.head_format import BROWSER_PROVENANCE

if TYPE_CHECKING:  # loaded by what captures; reading the log back does not need it
    from snapshotter.capture import SnapshotRecord

MANIFEST_FORMAT = "snap-capture-manifest/1"
ARCHIVE_ATTESTATION = "archiveAttestation"  # an imported capture's: records.imports.attested
BLOB_SUFFIX = "Blob"


class CaptureMethod(StrEnum):
    HTTP = "http"
    BROWSER = "browser"
    FILE = "file"
    IMPORT = "import"


@dataclass(frozen=True)
class ManifestBlob:
    kind: str
    digest: str
    size: int | None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "sha256": self.digest, "size": self.size}


@dataclass(frozen=True)
class Manifest:
    """The document and its canonical bytes; ``digest`` is ``sha256:<hex>`` of the bytes."""

    document: dict[str, Any]
    data: bytes

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.data).hexdigest()

    @classmethod
    def of(cls, document: dict[str, Any]) -> Manifest:
        return cls(document, canonical_json(document))


def method_of(provenance: dict[str, Any], url: str, method: str = "") -> CaptureMethod:
    """How the bytes came to snap: read from an archive, driven through a browser, a local file,
    or an HTTP fetch."""
    source = provenance.get("source")
    if method in {member.value for member in CaptureMethod}:
        return CaptureMethod(method)
    if source in ("warc", "wacz", "import"):
        return CaptureMethod.IMPORT
    if source == "browser" or provenance.get("browser"):
        return CaptureMethod.BROWSER
    if not url.lower().startswith(("http://", "https://")):
        return CaptureMethod.FILE
    return CaptureMethod.HTTP


def capture_blobs(record: SnapshotRecord) -> list[ManifestBlob]:
    """Every blob of the capture: raw, the text, then the provenance's ``<kind>Blob`` entries
    in name order."""
    blobs = [ManifestBlob("raw", record.raw_hash, record.raw_size)]
    if record.text_hash is not None:
        blobs.append(ManifestBlob("text", record.text_hash, record.text_size))
    for key in sorted(record.provenance):
        named = record.provenance[key]
        if not key.endswith(BLOB_SUFFIX) or key == BLOB_SUFFIX or not isinstance(named, dict):
            continue
        digest, size = named.get("hash"), named.get("size")
        if isinstance(digest, str):
            kind = key.removesuffix(BLOB_SUFFIX)
            blobs.append(ManifestBlob(kind, digest, size if isinstance(size, int) else None))
    return blobs + browser_blobs(record.provenance)


def browser_blobs(provenance: dict[str, Any]) -> list[ManifestBlob]:
    """A browser capture's blobs, in the order its provenance lists them (``browser.blobs``,
    ``snapshotter.browser``): its browser document, screenshot, rendered DOM, rendered text and
    every subresource body."""
    summary = provenance.get(BROWSER_PROVENANCE)
    listed = summary.get("blobs") if isinstance(summary, dict) else None
    found = []
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict) and isinstance(item.get("hash"), str):
            size = item.get("size")
            kind = str(item.get("kind"))
            found.append(ManifestBlob(kind, item["hash"], size if isinstance(size, int) else None))
    return found


def build_manifest(record: SnapshotRecord, *, software: dict[str, str]) -> Manifest:
    """The manifest of one capture. An import also names its archive and what the archive
    claims (its software, dates, peer address), kept apart from what snap itself did."""
    provenance = record.provenance
    method = method_of(provenance, record.url, record.method)
    document: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "method": method.value,
        "requestedUrl": record.url,
        "servedUrl": record.final_url,
        "capturedAt": record.fetched_at,
        "httpStatus": record.status,
        "contentType": record.content_type,
        "snapshotId": record.snapshot_id,
        "software": {
            **software,
            "extractor": record.extractor,
            "normalizer": record.normalizer,
        },
        "blobs": [blob.to_json() for blob in capture_blobs(record)],
    }
    if method is CaptureMethod.IMPORT:
        document["import"] = import_claims(provenance)
        document["capturedAt"] = None  # snap did not capture it; the archive's date is a claim
    else:
        document["peer"] = {"ip": provenance.get("ip"), "port": provenance.get("port")}
    return Manifest.of(_json_safe(document))


def import_claims(provenance: dict[str, Any]) -> dict[str, Any]:
    """Where an imported capture came from, and what its archive states (never facts of a
    capture by snap)."""
    warc = provenance.get("warc") or {}
    return {
        "archive": {
            "fileName": warc.get("file"),
            "sha256": warc.get("fileDigest"),
            "recordId": warc.get("recordId"),
            "signature": provenance.get("archiveSignature") or "none",
            # whether the attestation the archive carries for this capture holds for the bytes
            # imported (records.imports.attested); captures imported before it was checked
            # have none
            **({"attestation": found} if (found := archive_attestation(provenance)) else {}),
            **({"package": warc["package"]} if warc.get("package") else {}),
        },
        "archiveClaims": {
            "software": warc.get("software"),
            "date": provenance.get("fetchedAt"),
            "ipAddress": provenance.get("ip"),
        },
    }


def archive_attestation(provenance: dict[str, Any]) -> str | None:
    """What an imported capture's provenance says of its archive's attestation
    (``records.imports.attested``): ``none``, ``holds: …`` or ``does not hold: …``; None for a
    capture snap made itself, or one imported before attestations were compared."""
    found = provenance.get(ARCHIVE_ATTESTATION)
    return str(found) if found else None


def attestation_line(provenance: dict[str, Any]) -> str | None:
    """``archive_attestation`` in words, beside ``origin_line``."""
    found = archive_attestation(provenance)
    if found is None:
        return None
    if found == ArchiveAttestation.NONE:
        return "its archive attests no capture of this URL at this time"
    return f"{ATTESTATION_LINE}{found}"


ATTESTATION_LINE = "its archive's attestation "  # + the state and what was found
BROKEN_ATTESTATION_LINE = f"{ATTESTATION_LINE}{ArchiveAttestation.BROKEN}"


def origin_line(provenance: dict[str, Any]) -> str | None:
    """For an imported capture: where it came from and who says it was captured when, in words
    (never "captured by snap"); None for a capture snap made itself."""
    if provenance.get("source") not in ("warc", "wacz", "import"):
        return None
    warc = provenance.get("warc") or {}
    return (
        f"imported from {warc.get('file')} (sha256 {warc.get('fileDigest')}, record"
        f" {record_id_of(warc)}), captured by {claimed_software(provenance)} at the time that"
        f" archive states ({provenance.get('fetchedAt')}); not captured by snap"
    )


def record_id_of(warc: dict[str, Any]) -> str:
    """The archived record's WARC-Record-ID, or that it had none (a header WARC requires, which
    the importer does not insist on)."""
    record_id = warc.get("recordId")
    return str(record_id) if record_id else "without a WARC-Record-ID"


def claimed_software(provenance: dict[str, Any]) -> str:
    """The software an imported archive names, quoted: it is the archive's word (a warcinfo
    saying ``snap/0.1.0`` does not make snap the capturer)."""
    software = (provenance.get("warc") or {}).get("software")
    return f'"{software}"' if software else "software the archive does not name"


def _json_safe(value: Any) -> Any:
    """Drop what JCS cannot hold faithfully: a float becomes its repr string."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    return value
