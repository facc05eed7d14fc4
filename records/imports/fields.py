"""The fields of a WARC record as snap records them: capture time, status, HTTP head,
provenance, and the software named by the archive's ``warcinfo`` record."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from records.imports.payload import PayloadRefused
from records.imports.sources import WarcSource
from snapshotter.times import parse_time, precise_time, wire_time
from snapshotter.version import __version__

MAX_HEAD = 256 * 1024  # an HTTP head larger than this is refused, not stored
MAX_WARCINFO = 64 * 1024
# How far a record's WARC-Date may lie ahead of this machine's clock (another machine's clock
# running a little fast); anything later is a capture that cannot have happened yet.
CLOCK_SLACK = timedelta(minutes=5)


def warc_date(text: str | None) -> str:
    """``WARC-Date`` as RFC 3339 UTC, keeping fractions of a second when the record has them."""
    return _as_text(_parse_date(text))


def capture_date(text: str | None, *, now: datetime | None = None) -> str:
    """A record's capture time (``warc_date``), refused when it lies in the future: an archive
    must not record a capture that cannot have happened yet, since the latest capture of a URL
    among imports is chosen by this time."""
    moment = _parse_date(text)
    now = now or datetime.now(UTC)
    if moment > now + CLOCK_SLACK:
        raise PayloadRefused(
            f"WARC-Date {_as_text(moment)} is in the future (this machine's clock says"
            f" {_as_text(now.replace(microsecond=0))}); a capture cannot come from the future"
        )
    return _as_text(moment)


def _parse_date(text: str | None) -> datetime:
    if not text:
        raise PayloadRefused("the record has no WARC-Date")
    try:
        return parse_time(text)
    except ValueError:
        raise PayloadRefused(f"WARC-Date {text[:60]!r} is not a date") from None


def _as_text(moment: datetime) -> str:
    """A WARC-Date as snap records capture times: to the microsecond when it has them."""
    return precise_time(moment) if moment.microsecond else wire_time(moment)


def http_status(http: Any) -> int:
    code = str(http.get_statuscode() or "")
    if not (code.isdigit() and len(code) == 3):
        raise PayloadRefused(f"the HTTP status line {str(http.statusline)[:80]!r} has no status")
    return int(code)


def head_bytes(http: Any) -> bytes:
    """The status line and headers as recorded (warcio's parse, serialized back).

    The limit holds on the bytes the record's head took in the archive (warcio counts them),
    not only on what its parse gives back: lines without a colon, which warcio drops, would
    otherwise let a head of any size through, cut."""
    text = str(http.to_str())
    head = text.encode("utf-8", "surrogateescape")
    size = max(len(head), int(getattr(http, "total_len", 0) or 0))
    if size > MAX_HEAD:
        raise PayloadRefused(f"the HTTP head is {size} bytes, more than {MAX_HEAD}")
    return head


def target_host(uri: str) -> str:
    """The host of a record's ``WARC-Target-URI``; a URI without one names no page."""
    try:
        host = urlsplit(uri).hostname
    except ValueError:
        host = None
    if not host:
        raise PayloadRefused(f"the target URI {uri[:200]!r} has no host")
    return host


def ip_address(value: str | None) -> str | None:
    """``WARC-IP-Address`` when it is an IPv4 or IPv6 address, else None: provenance records a
    server address, never whatever text an archive put in that field."""
    if not value:
        return None
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        return None


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
            "software": software or (source.package or {}).get("software"),
            **({"package": source.package} if source.package else {}),
        },
        "snapVersion": __version__,
        "archiveSignature": source.signature,
    }
    ip = ip_address(headers.get_header("WARC-IP-Address"))
    if ip:
        provenance["ip"] = ip
    return provenance


def same_record(recorded: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether a capture already recorded is this very record: same record id, same file."""
    before, now = recorded.get("warc") or {}, new.get("warc") or {}
    keys = ("recordId", "fileDigest")
    return bool(before.get("recordId")) and all(before.get(k) == now.get(k) for k in keys)


def software_of(record: Any) -> str:
    """The ``software`` field of a warcinfo record (``application/warc-fields``); empty when it
    names none (a WACZ's ``datapackage.json`` may name it instead)."""
    data: bytes = record.content_stream().read(MAX_WARCINFO)
    for line in data.decode("utf-8", "replace").splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "software" and value.strip():
            return value.strip()[:300]
    return ""
