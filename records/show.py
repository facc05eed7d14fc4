"""``snap show``: what was stored for a snapshot (its text, raw bytes or response headers),
read from its recorded store and version and re-hashed on the way out, like every read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from records.attest.manifest import attestation_line, origin_line
from records.errors import RecordNotFound
from records.evidence import Evidence, browser_blobs, recorded_head
from records.ids import resolve_snapshot_id
from records.repository import captures_of_snapshot, choose_extraction, get_snapshot
from records.workspace import Workspace
from snapshotter.errors import InputError
from snapshotter.store import BlobStore

if TYPE_CHECKING:
    from records.exports.http_head import Exchange

AROUND = 200  # code points shown on each side of --around


ShownPart = Literal["text", "raw", "headers", "screenshot"]


@dataclass(frozen=True)
class Shown:
    """What ``snap show`` read: a window of the text, the raw bytes or screenshot, or the
    recorded headers (and every HTTP exchange of the latest capture, when its blob was kept)."""

    snapshot_id: str
    what: ShownPart
    extraction_id: int | None = None
    text: str | None = None
    start: int = 0
    end: int = 0
    length: int = 0
    raw: bytes | None = None
    headers: Mapping[str, Any] | None = None  # the latest capture's recorded header summary
    exchanges: tuple[Exchange, ...] | None = None  # from the capture's headers blob, if any
    origin: str | None = None  # an imported capture: where from, as its archive states


def show(
    workspace: Workspace,
    snapshot_id: str,
    *,
    what: ShownPart = "text",
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
    origin = imported_origin(provenance)
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


def imported_origin(provenance: dict[str, Any]) -> str | None:
    """Where an imported capture came from, and whether its archive's attestation holds for
    it; None for a capture snap made."""
    origin = origin_line(provenance)
    attestation = attestation_line(provenance)
    if origin is None or attestation is None:
        return origin
    return f"{origin}; {attestation}"


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
) -> tuple[Exchange, ...] | None:
    """Every HTTP exchange of the latest capture, in order, from its ``headers`` blob (read and
    re-hashed like every blob); None for a capture that kept no blob (a local file, or one made
    before snap kept them)."""
    from records.exports.http_head import parse_exchanges

    named = recorded_head(provenance)
    if named is None:
        return None
    _, digest, version = named
    blob = store.get("headers", digest, version_id=version)
    return tuple(parse_exchanges(blob, digest, url=url))
