"""``snap show``: what was stored for a snapshot (its text, raw bytes or response headers),
read from its recorded store and version and re-hashed on the way out, like every read."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from records.attest.manifest import origin_line
from records.errors import RecordNotFound
from records.evidence import Evidence, browser_blobs, recorded_head
from records.ids import resolve_snapshot_id
from records.repository import captures_of_snapshot, choose_extraction, get_snapshot
from records.workspace import Workspace
from snapshotter.errors import InputError
from snapshotter.store import BlobStore

AROUND = 200  # code points shown on each side of --around


@dataclass(frozen=True)
class Shown:
    snapshot_id: str
    what: str  # "text" | "raw" | "headers" | "screenshot"
    extraction_id: int | None = None
    text: str | None = None
    start: int = 0
    end: int = 0
    length: int = 0
    raw: bytes | None = None
    headers: dict[str, Any] | None = None
    exchanges: list[dict[str, Any]] | None = None  # from the capture's headers blob, if any
    origin: str | None = None  # an imported capture: where from, as its archive states

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"snapshotId": self.snapshot_id, "what": self.what}
        if self.what == "text":
            document |= {
                "extractionId": self.extraction_id,
                "start": self.start,
                "end": self.end,
                "length": self.length,
                "text": self.text,
            }
        elif self.what in ("raw", "screenshot"):
            raw = self.raw or b""
            document |= {"size": len(raw), "base64": base64.b64encode(raw).decode("ascii")}
        else:
            document["headers"] = self.headers
            if self.exchanges is not None:
                document["exchanges"] = self.exchanges
        document["origin"] = self.origin
        return document


def show(
    workspace: Workspace,
    snapshot_id: str,
    *,
    what: str = "text",
    page: str | None = None,
    around: int | None = None,
) -> Shown:
    with workspace.db.reading() as session:
        snapshot = get_snapshot(session, resolve_snapshot_id(session, snapshot_id))
        if snapshot is None:
            raise RecordNotFound(f"no snapshot {snapshot_id!r} is recorded")
        evidence = Evidence.of(snapshot, choose_extraction(session, snapshot.id))
        captures = captures_of_snapshot(session, snapshot.id)
        provenance = captures[-1].provenance if captures else {}
        final_url = (captures[-1].final_url or captures[-1].url) if captures else ""
    store = workspace.stores.store_for(evidence)
    if what == "screenshot":
        return Shown(evidence.snapshot_id, what, raw=latest_screenshot(store, evidence, captures))
    origin = origin_line(provenance)
    if what == "headers":
        exchanges = recorded_exchanges(store, provenance, final_url)
        headers = provenance.get("headers") or {}
        return Shown(
            evidence.snapshot_id, what, headers=headers, exchanges=exchanges, origin=origin
        )
    if what == "raw":
        raw = store.get("raw", evidence.raw_hash, version_id=evidence.raw_version_id)
        return Shown(evidence.snapshot_id, what, raw=raw, origin=origin)
    if evidence.text_hash is None:
        raise RecordNotFound(f"snapshot {evidence.snapshot_id} has no text; try --raw")
    data = store.get("text", evidence.text_hash, version_id=evidence.text_version_id)
    text = data.decode("utf-8")
    start, end = window(text, evidence, page, around)
    return Shown(
        evidence.snapshot_id,
        what,
        evidence.extraction_id,
        text[start:end],
        start,
        end,
        len(text),
        origin=origin,
    )


def latest_screenshot(store: BlobStore, evidence: Evidence, captures: Any) -> bytes:
    """The full-page PNG of the snapshot's latest browser capture, re-hashed as it is read."""
    for capture in reversed(list(captures)):
        for kind, digest, version in browser_blobs(capture.provenance):
            if kind == "screenshot":
                return store.get("screenshot", digest, version_id=version)
    raise RecordNotFound(
        f"snapshot {evidence.snapshot_id} has no browser capture, so no screenshot;"
        " capture it with snap fetch --browser"
    )


def window(text: str, evidence: Evidence, page: str | None, around: int | None) -> tuple[int, int]:
    """The code points to show: a page, around one code point, both, or everything."""
    start, end = 0, len(text)
    if page is not None:
        pages = list(evidence.pages)
        named = [p for p in pages if str(p["label"]) == page] or [
            p for p in pages if page.isdigit() and p["index"] == int(page) - 1
        ]
        if not named:
            raise InputError(f"snapshot {evidence.snapshot_id} has no page {page}")
        start, end = int(named[0]["start"]), int(named[0]["end"])
    if around is not None:
        if not 0 <= around <= len(text):
            raise InputError(f"--around {around} is outside the text (0–{len(text)})")
        start, end = max(start, around - AROUND), min(end, around + AROUND)
    return start, end


def recorded_exchanges(
    store: BlobStore, provenance: dict[str, Any], url: str
) -> list[dict[str, Any]] | None:
    """Every HTTP exchange of the latest capture, in order, from its ``headers`` blob (read and
    re-hashed like every blob); None for a capture that kept no blob (a local file, or one made
    before snap kept them)."""
    from records.exports.http_head import parse_exchanges

    named = recorded_head(provenance)
    if named is None:
        return None
    _, digest, version = named
    exchanges = parse_exchanges(store.get("headers", digest, version_id=version), digest, url=url)
    return [
        {
            "url": exchange.url,
            "status": exchange.status,
            "request": None if exchange.request is None else _head_json(exchange.request),
            "response": _head_json(exchange.response),
        }
        for exchange in exchanges
    ]


def _head_json(head: Any) -> dict[str, Any]:
    return {"line": head.first_line, "headers": [list(pair) for pair in head.headers]}
