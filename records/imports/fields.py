"""The fields of a WARC record as snap records them: capture time, status, HTTP head,
provenance, and the software named by the archive's ``warcinfo`` record."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from records.imports.payload import PayloadRefused
from records.imports.sources import WarcSource
from snapshotter.capture import rfc3339
from snapshotter.version import __version__

MAX_HEAD = 256 * 1024  # an HTTP head larger than this is refused, not stored
MAX_WARCINFO = 64 * 1024


def warc_date(text: str | None) -> str:
    """``WARC-Date`` as RFC 3339 UTC, keeping fractions of a second when the record has them."""
    if not text:
        raise PayloadRefused("the record has no WARC-Date")
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise PayloadRefused(f"WARC-Date {text[:60]!r} is not a date") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return str(rfc3339(moment))


def http_status(http: Any) -> int:
    code = str(http.get_statuscode() or "")
    if not (code.isdigit() and len(code) == 3):
        raise PayloadRefused(f"the HTTP status line {str(http.statusline)[:80]!r} has no status")
    return int(code)


def head_bytes(http: Any) -> bytes:
    """The status line and headers as recorded (warcio's parse, serialized back)."""
    text = str(http.to_str())
    head = text.encode("utf-8", "surrogateescape")
    if len(head) > MAX_HEAD:
        raise PayloadRefused(f"the HTTP head is {len(head)} bytes, more than {MAX_HEAD}")
    return head


RECORDED_HEADERS = {
    "contentType": "Content-Type",
    "etag": "ETag",
    "lastModified": "Last-Modified",
    "date": "Date",
}


def provenance_of(
    source: WarcSource,
    offset: int,
    record: Any,
    fetched_at: str,
    http: Any,
    software: str | None,
) -> dict[str, object]:
    """What ``snap fetch`` records, taken from the archive, plus where in it the record is."""
    headers = record.rec_headers
    found = {key: http.get_header(name) for key, name in RECORDED_HEADERS.items()} if http else {}
    status_line = f"{http.protocol} {http.statusline}".strip() if http else None
    provenance: dict[str, object] = {
        "fetchedAt": fetched_at,
        "source": "warc",
        "statusLine": status_line,
        "headers": {key: value for key, value in found.items() if value is not None},
        "warc": {
            "file": source.name,
            "fileDigest": source.digest,
            "offset": offset,
            "recordId": headers.get_header("WARC-Record-ID"),
            "type": record.rec_type,
            "payloadDigest": headers.get_header("WARC-Payload-Digest"),
            "software": software,
        },
        "snapVersion": __version__,
    }
    ip = headers.get_header("WARC-IP-Address")
    if ip:
        provenance["ip"] = ip
    return provenance


def same_record(recorded: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether a capture already recorded is this very record: same record id, same file."""
    before, now = recorded.get("warc") or {}, new.get("warc") or {}
    keys = ("recordId", "fileDigest")
    return bool(before.get("recordId")) and all(before.get(k) == now.get(k) for k in keys)


def software_of(record: Any) -> str:
    """The ``software`` field of a warcinfo record (``application/warc-fields``)."""
    data: bytes = record.content_stream().read(MAX_WARCINFO)
    for line in data.decode("utf-8", "replace").splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "software" and value.strip():
            return value.strip()[:300]
    return "unknown"
