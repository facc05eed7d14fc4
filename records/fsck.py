"""``snap fsck``: re-hash every recorded blob at its recorded version, in the store it was
written to, and say what state each is in.

States (``BlobState``): *intact*; *shadowed* (intact, but a delete marker or a newer version
sits on top of the recorded one: someone wrote over the key); *damaged* (the recorded version
does not hash to its digest); *missing* (gone from the store it was written to). Damaged and
missing are problems (exit 1); shadowed is reported, and the evidence still verifies.
Orphans (blobs no record names, left by an interrupted capture) are listed but harmless:
content addressing means they can only ever be correct copies of something.  So are temporary
files of a capture killed mid-download (``snap-fetch-*``, stale and unlocked); ``--repair``
removes them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from records.attest.checks import seal_blobs, seal_checks_of
from records.evidence import (
    BlobCheck,
    Evidence,
    blob_state,
    capture_blobs,
    recorded_blobs,
    rehash_blob,
)
from records.models import Capture, Extraction, Snapshot
from records.vocabulary import BlobState, CaptureOutcome
from records.workspace import Workspace
from snapshotter.errors import StoreError
from snapshotter.store import blob_key
from snapshotter.tempfiles import remove_stale_temp_files, stale_temp_files


@dataclass(frozen=True)
class RecordedBlob:
    snapshot_id: str
    evidence: Evidence
    kind: str
    digest: str
    version_id: str | None


@dataclass(frozen=True)
class FsckProblem:
    """Something wrong with the evidence: a recorded blob damaged or missing (``blob``), a
    capture's seal that does not hold (``snapshot_id`` only), or an orphan that does not
    re-hash (``key`` only)."""

    problem: str
    snapshot_id: str | None = None
    blob: BlobCheck | None = None
    key: str | None = None


@dataclass(frozen=True)
class ShadowedBlob:
    """Intact, but something sits on top of the recorded version: reported, not a problem."""

    blob: BlobCheck
    snapshot_id: str


@dataclass(frozen=True)
class FsckReport:
    blobs_checked: int
    snapshots_checked: int
    states: Mapping[BlobState, int]  # every state, in BlobState's order
    problems: tuple[FsckProblem, ...]
    shadowed: tuple[ShadowedBlob, ...]
    orphans: tuple[str, ...]  # keys of blobs no record names
    temp_files: tuple[str, ...]
    temp_files_removed: bool

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Tally:
    """The report while it is being made."""

    states: dict[BlobState, int] = field(default_factory=lambda: dict.fromkeys(BlobState, 0))
    problems: list[FsckProblem] = field(default_factory=list)
    shadowed: list[ShadowedBlob] = field(default_factory=list)

    def add(self, blob: RecordedBlob, check: BlobCheck) -> None:
        self.states[check.state] += 1
        if check.state is BlobState.SHADOWED:
            self.shadowed.append(ShadowedBlob(check, blob.snapshot_id))
        elif not check.holds:
            problem = f"{blob_key(blob.kind, blob.digest)} is {check.state}: {check.detail}"
            self.problems.append(FsckProblem(problem, blob.snapshot_id, check))


@dataclass(frozen=True)
class FsckPlan:
    """What will be checked, listed first so a progress bar can show how far along it is."""

    recorded: list[RecordedBlob]
    orphans: list[tuple[str, str]]
    snapshots: int
    # (snapshot id, provenance) of every stored capture: its seal is checked too
    captures: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def blobs(self) -> list[object]:
        return [*self.recorded, *self.orphans]


def plan_fsck(workspace: Workspace) -> FsckPlan:
    """Every blob a snapshot, extraction or stored capture (its ``headers``, a browser
    capture's blobs) names, with its
    recorded version; then the blobs in the configured store that nothing names."""
    with workspace.db.reading() as session:
        snapshots = {s.id: s for s in session.scalars(select(Snapshot))}
        extractions = list(session.scalars(select(Extraction).order_by(Extraction.id)))
        stored = select(Capture.snapshot_id, Capture.provenance).where(
            Capture.outcome == CaptureOutcome.STORED
        )
        rows = [(str(row[0]), dict(row[1] or {})) for row in session.execute(stored)]
    heads = [
        (snapshot_id, blob)
        for snapshot_id, provenance in rows
        for blob in [*capture_blobs(provenance), *seal_blobs(provenance)]
    ]
    evidence = [Evidence.of(s, None) for s in snapshots.values()]
    evidence += [Evidence.of(snapshots[e.snapshot_id], e) for e in extractions]
    blobs = [(item, blob) for item in evidence for blob in recorded_blobs(item)]
    own = {item.snapshot_id: item for item in evidence if item.extraction_id is None}
    blobs += [(own[snapshot_id], blob) for snapshot_id, blob in heads]
    recorded: dict[tuple[str, str, str, str | None], RecordedBlob] = {}
    for item, (kind, digest, version) in blobs:
        key = (item.store_location, kind, digest, version)
        recorded.setdefault(key, RecordedBlob(item.snapshot_id, item, kind, digest, version))
    here = workspace.stores.is_configured
    named = {(b.kind, b.digest) for b in recorded.values() if here(b.evidence.store_location)}
    orphans = sorted(blob for blob in workspace.store.iterate() if blob not in named)
    ordered = sorted(recorded.values(), key=lambda b: (b.kind, b.digest, b.snapshot_id))
    return FsckPlan(ordered, orphans, len(snapshots), rows)


def fsck(
    workspace: Workspace,
    plan: FsckPlan,
    *,
    progress: Callable[[int], None] | None = None,
    repair: bool = False,
) -> FsckReport:
    left_behind = remove_stale_temp_files() if repair else stale_temp_files()
    tally = _Tally()
    checked = 0
    workspace.stores.check_all([blob.evidence for blob in plan.recorded])
    for blob in plan.recorded:
        store = workspace.stores.store_for(blob.evidence)
        tally.add(blob, blob_state(store, blob.kind, blob.digest, blob.version_id))
        checked += 1
        if progress is not None:
            progress(1)
    checks = seal_checks_of(workspace)
    for snapshot_id, provenance in plan.captures:
        read = [("raw", snapshot_id)]
        state = checks.state(workspace.store, provenance, snapshot_id, read=read)
        for problem in state.problems if state is not None else ():
            tally.problems.append(FsckProblem(problem, snapshot_id))
    orphans = []
    for kind, digest in plan.orphans:
        orphans.append(blob_key(kind, digest))
        checked += 1
        try:
            rehash_blob(workspace.store, kind, digest)
        except StoreError as error:
            tally.problems.append(FsckProblem(error.message, key=blob_key(kind, digest)))
        if progress is not None:
            progress(1)
    return FsckReport(
        blobs_checked=checked,
        snapshots_checked=plan.snapshots,
        states=tally.states,
        problems=tuple(tally.problems),
        shadowed=tuple(tally.shadowed),
        orphans=tuple(orphans),
        temp_files=tuple(str(path) for path in left_behind),
        temp_files_removed=repair,
    )
