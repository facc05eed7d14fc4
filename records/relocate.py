"""``snap store relocate``: say that the snapshots recorded in one store now live in another.

Snapshots recorded before folder stores were recorded relative to the home carry the store's
absolute ``file://`` URL; after the home (or the store) is copied or moved, those point to the
old place. Relocating rewrites the recorded location, never a blob, and only after every blob
of every snapshot moved has been found in the new store at its recorded version: a relocation
can never make intact evidence look missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from records.evidence import Evidence, recorded_blobs, recorded_head
from records.models import Capture, Extraction, Snapshot
from records.vocabulary import CaptureOutcome
from snapshotter.errors import BlobNotFound, InputError
from snapshotter.store import BlobStore, open_store

if TYPE_CHECKING:
    from records.workspace import Workspace

BATCH = 500  # snapshot ids per UPDATE: under every database's limit on bound parameters
LISTED = 5  # recorded locations named in a refusal


@dataclass(frozen=True)
class Relocation:
    """The snapshots relocated (their JSON: ``records.wire.relocation_json``)."""

    moved_from: tuple[str, ...]  # the recorded locations rewritten, as they were recorded
    moved_to: str
    snapshots: int
    blobs_checked: int


def relocate(workspace: Workspace, old: str, new: str | None = None) -> Relocation:
    """Rewrite every snapshot recorded in ``old`` (as typed: a folder, ``file://`` URL,
    ``home:…`` or ``s3://…``) to ``new`` (default: the configured store).

    InputError when nothing is recorded in ``old``; BlobNotFound (exit 1, nothing rewritten)
    when a blob of a snapshot to move is not in the new store; StoreError when it cannot be
    reached."""
    target = _target_store(workspace, new)
    stores = workspace.stores
    wanted = stores.canonical(old)
    with workspace.db.reading() as session:
        recorded = list(session.scalars(select(Snapshot.store_location).distinct()))
        sources = tuple(
            sorted(
                location
                for location in recorded
                if stores.canonical(location) == wanted and location != target.location
            )
        )
        if not sources:
            raise InputError(_nothing_recorded(old, recorded))
        ids, blobs = _snapshots_and_blobs(session, sources)
    _require_present(target, blobs)
    with workspace.db.session() as session:
        for start in range(0, len(ids), BATCH):
            session.execute(
                update(Snapshot)
                .where(
                    Snapshot.id.in_(ids[start : start + BATCH]),
                    Snapshot.store_location.in_(sources),  # unless rewritten meanwhile
                )
                .values(store_location=target.location)
            )
    return Relocation(sources, target.location, len(ids), len(blobs))


def _snapshots_and_blobs(
    session: Session, sources: tuple[str, ...]
) -> tuple[list[str], list[tuple[str, str, str | None]]]:
    """The ids of the snapshots recorded in ``sources``, and every blob they name."""
    moved = Snapshot.store_location.in_(sources)
    snapshots = list(session.scalars(select(Snapshot).where(moved)))
    extractions = list(session.scalars(select(Extraction).join(Snapshot).where(moved)))
    stored = (
        select(Capture.provenance)
        .join(Snapshot, Capture.snapshot_id == Snapshot.id)
        .where(Capture.outcome == CaptureOutcome.STORED, moved)
    )
    heads = [recorded_head(provenance) for provenance in session.scalars(stored)]
    return [snapshot.id for snapshot in snapshots], _blobs_of(snapshots, extractions, heads)


def _target_store(workspace: Workspace, new: str | None) -> BlobStore:
    if new is None:
        target = workspace.store
    else:
        settings = workspace.settings
        target = open_store(
            new, lock_mode=settings.lock_mode, lock_days=settings.lock_days, home=settings.home
        )
    target.probe()
    return target


def _nothing_recorded(old: str, recorded: list[str]) -> str:
    if not recorded:
        return f"no snapshot is recorded in {old} (no snapshot is recorded at all)"
    named = ", ".join(sorted(recorded)[:LISTED]) + (", …" if len(recorded) > LISTED else "")
    return f"no snapshot to move is recorded in {old}; snapshots are recorded in: {named}"


def _blobs_of(
    snapshots: list[Snapshot],
    extractions: list[Extraction],
    heads: list[tuple[str, str, str | None] | None],
) -> list[tuple[str, str, str | None]]:
    """Every (kind, digest, recorded version) the snapshots name, each once."""
    by_id = {snapshot.id: snapshot for snapshot in snapshots}
    evidence = [Evidence.of(snapshot, None) for snapshot in snapshots]
    evidence += [Evidence.of(by_id[e.snapshot_id], e) for e in extractions]
    blobs = [blob for item in evidence for blob in recorded_blobs(item)]
    blobs += [head for head in heads if head is not None]
    return list(dict.fromkeys(blobs))


def _require_present(target: BlobStore, blobs: list[tuple[str, str, str | None]]) -> None:
    missing = [
        (kind, digest)
        for kind, digest, version in blobs
        if target.head(kind, digest, version_id=version) is None
    ]
    if missing:
        kind, digest = missing[0]
        raise BlobNotFound(
            f"{len(missing)} of {len(blobs)} blobs are not in {target.location} (the first:"
            f" {kind} {digest}); copy the store there first; nothing was relocated"
        )
