"""The captured HTTP heads, as an archive replays them with the body snap stored.

snap stores the body after undoing gzip/deflate Content-Encoding (its SHA-256 is the snapshot
id), and never a transfer encoding. Replaying the original headers with that body would be a
lie a browser acts on: it would try to gunzip plain bytes, or read a chunked body that is not
chunked, or stop at a Content-Length that no longer fits. So, as web archives do for decoded
payloads, a header that no longer describes the stored body is renamed ``X-Archive-Orig-<name>``
(its original value kept, in its place), and a true ``Content-Length`` is added:

* ``Transfer-Encoding``: always renamed (the stored body is never transfer-encoded);
* ``Content-Encoding``: renamed unless ``identity`` (the stored body is decoded);
* ``Content-Length``: renamed when it is not the stored size.

Everything else is exactly as received: order, duplicates, case of names, values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from snapshotter.capture import HEAD_FORMAT
from snapshotter.errors import IntegrityError

ORIGINAL_PREFIX = "X-Archive-Orig-"
# What a ``headers`` blob is, as a WARC record's Content-Type: snap's own fetches write JSON
# exchanges; ``snap import`` keeps the archived response head (status line and header lines).
EXCHANGES_MEDIA_TYPE = f'application/json; profile="{HEAD_FORMAT}"'
ARCHIVED_HEAD_MEDIA_TYPE = "application/http; msgtype=response"


@dataclass(frozen=True)
class Head:
    """A request or response head: ``first_line`` is ``GET /p HTTP/1.1`` or ``HTTP/1.1 200 OK``."""

    first_line: str
    headers: tuple[tuple[str, str], ...]
    renamed: tuple[str, ...] = ()  # names moved to X-Archive-Orig-*, for the metadata record


@dataclass(frozen=True)
class Exchange:
    url: str
    request: Head | None  # None: an imported capture, whose archive's request is not kept
    response: Head
    status: int
    ip: str | None = None  # the address this hop's connection went to


def parse_exchanges(blob: bytes, digest: str, *, url: str) -> list[Exchange]:
    """The exchanges of a ``headers`` blob (redirect hops first, the final one last). The blob
    was read through the digest-checked path. A fetch writes snap's JSON format; ``snap import``
    keeps the archived response head as text (status line and headers), the response of ``url``.
    Anything else is refused."""
    try:
        if not is_exchanges_document(blob):
            return [_imported(blob, url)]
        document = json.loads(blob)
        if document.get("format") != HEAD_FORMAT:
            raise ValueError("unknown format")
        return [_exchange(item) for item in document["exchanges"]]
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        raise IntegrityError(f"headers/{digest}", f"a {HEAD_FORMAT} document", str(error)) from None


def is_exchanges_document(blob: bytes) -> bool:
    """Whether a ``headers`` blob is snap's JSON (a fetch) rather than an archived head (an
    import): the blob's text is the only place the two are told apart, so one rule decides."""
    return blob.lstrip().startswith(b"{")


def head_media_type(blob: bytes) -> str:
    """The Content-Type that says truthfully what a ``headers`` blob's bytes are."""
    return EXCHANGES_MEDIA_TYPE if is_exchanges_document(blob) else ARCHIVED_HEAD_MEDIA_TYPE


def _imported(blob: bytes, url: str) -> Exchange:
    lines = blob.decode("utf-8", "surrogateescape").split("\r\n")
    first = lines[0].strip()
    status = int(first.split(" ", 2)[1])
    headers = tuple(
        (name, value.strip())
        for name, _, value in (line.partition(":") for line in lines[1:] if ":" in line)
    )
    return Exchange(url=url, request=None, response=Head(first, headers), status=status)


def _exchange(item: dict[str, Any]) -> Exchange:
    request, response = item["request"], item["response"]
    return Exchange(
        url=str(item["url"]),
        request=Head(
            f"{request['method']} {request['target']} {request['httpVersion']}",
            tuple((str(n), str(v)) for n, v in request["headers"]),
        ),
        response=Head(
            f"{response['httpVersion']} {int(response['status'])} {response['reason']}".rstrip(),
            tuple((str(n), str(v)) for n, v in response["headers"]),
        ),
        status=int(response["status"]),
        ip=str(item["ip"]) if item.get("ip") else None,
    )


def as_replayed(head: Head, payload_size: int) -> Head:
    """The response head to store beside a payload of ``payload_size`` bytes (see the module
    docstring for what is renamed, and why)."""
    headers: list[tuple[str, str]] = []
    renamed: list[str] = []
    has_length = False
    for name, value in head.headers:
        lowered = name.lower()
        stale = (
            lowered == "transfer-encoding"
            or (lowered == "content-encoding" and value.strip().lower() != "identity")
            or (lowered == "content-length" and value.strip() != str(payload_size))
        )
        if stale:
            headers.append((ORIGINAL_PREFIX + name, value))
            renamed.append(name)
        else:
            headers.append((name, value))
            has_length = has_length or lowered == "content-length"
    if not has_length:
        headers.append(("Content-Length", str(payload_size)))
    return Head(head.first_line, tuple(headers), tuple(renamed))
