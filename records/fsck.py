"""``snap fsck``: re-hash every recorded blob at its recorded version, in the store it was
written to, and say what state each is in.

States (``BlobState``): *intact*; *shadowed* (intact, but a delete marker or a newer version
sits on top of the recorded one: someone wrote over the key); *damaged* (the recorded version
does not hash to its digest); *missing* (gone from the store it was written to). Damaged and
missing are problems (exit 1); shadowed is reported, and the evidence still verifies.
A recorded blob is one a snapshot, an extraction or a stored capture names, or the timestamp
token of a log checkpoint (read from the configured store, where ``snap log checkpoint`` puts
it); each problem names the record it belongs to, so the reader knows which evidence it
touches. Orphans (blobs no record names, left by an interrupted capture) are listed but harmless:
content addressing means they can only ever be correct copies of something.  So are temporary
files of a capture killed mid-download (``snap-fetch-*``, stale and unlocked); ``--repair``
removes them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from records.attest.checks import TIMESTAMP, SealState, seal_blobs, seal_checks_of
from records.evidence import (
    BlobCheck,
    Evidence,
    blob_state,
    capture_blobs,
    recorded_blobs,
    rehash_blob,
)
from records.models import Capture, Extraction, LogCheckpoint, Snapshot
from records.vocabulary import BlobState, CaptureOutcome
from records.workspace import Workspace
from snapshotter.errors import StoreError
from snapshotter.store import BlobStore, blob_key
from snapshotter.tempfiles import remove_stale_temp_files, stale_temp_files


@dataclass(frozen=True)
class RecordedBlob:
    """A blob some record names: a snapshot's (``evidence`` says which store it is in) or a
    log checkpoint's timestamp token (``checkpoint_id``; no snapshot, the configured store)."""

    snapshot_id: str | None
    evidence: Evidence | None
    kind: str
    digest: str
    version_id: str | None
    checkpoint_id: int | None = None

    def owner(self) -> str:
        """Whose blob it is, as a problem names it."""
        if self.checkpoint_id is not None:
            return f"checkpoint {self.checkpoint_id}'s timestamp token"
        return f"snapshot {self.snapshot_id}'s {self.kind} blob"


@dataclass(frozen=True)
class FsckProblem:
    """Something wrong with the evidence: a recorded blob damaged or missing (``blob``, with
    the snapshot or checkpoint that names it), a capture's seal that does not hold
    (``snapshot_id`` and ``capture_id``), or an orphan that does not re-hash (``key`` only)."""

    problem: str
    snapshot_id: str | None = None
    blob: BlobCheck | None = None
    key: str | None = None
    capture_id: int | None = None
    checkpoint_id: int | None = None


@dataclass(frozen=True)
class ShadowedBlob:
    """Intact, but something sits on top of the recorded version: reported, not a problem."""

    blob: BlobCheck
    snapshot_id: str | None
    checkpoint_id: int | None = None


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
            self.shadowed.append(ShadowedBlob(check, blob.snapshot_id, blob.checkpoint_id))
        elif not check.holds:
            problem = (
                f"{blob_key(blob.kind, blob.digest)} ({blob.owner()}) is {check.state}: "
                f"{check.detail}"
            )
            self.problems.append(
                FsckProblem(problem, blob.snapshot_id, check, checkpoint_id=blob.checkpoint_id)
            )

    def add_seal(self, capture_id: int, snapshot_id: str, state: SealState) -> None:
        """Each piece of a seal that fails, naming the capture and its snapshot (a home has
        many captures, and the same problem on two of them must read as two problems)."""
        for problem in state.problems:
            line = f"capture {capture_id}'s seal (snapshot {snapshot_id}) does not hold: {problem}"
            self.problems.append(FsckProblem(line, snapshot_id, capture_id=capture_id))


@dataclass(frozen=True)
class FsckPlan:
    """What will be checked, listed first so a progress bar can show how far along it is."""

    recorded: list[RecordedBlob]
    orphans: list[tuple[str, str]]
    snapshots: int
    # (capture id, snapshot id, provenance) of every stored capture: its seal is checked too
    captures: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)

    @property
    def blobs(self) -> list[object]:
        return [*self.recorded, *self.orphans]


def plan_fsck(workspace: Workspace) -> FsckPlan:
    """Every blob a snapshot, extraction or stored capture (its ``headers``, a browser
    capture's blobs, its seal) names, with its recorded version, and every log checkpoint's
    timestamp token; then the blobs in the configured store that nothing names."""
    with workspace.db.reading() as session:
        snapshots = {s.id: s for s in session.scalars(select(Snapshot))}
        extractions = list(session.scalars(select(Extraction).order_by(Extraction.id)))
        stored = select(Capture.id, Capture.snapshot_id, Capture.provenance).where(
            Capture.outcome == CaptureOutcome.STORED
        )
        rows = [(int(row[0]), str(row[1]), dict(row[2] or {})) for row in session.execute(stored)]
        stamps = session.execute(select(LogCheckpoint.id, LogCheckpoint.timestamp)).all()
    heads = [
        (snapshot_id, blob)
        for _, snapshot_id, provenance in rows
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
    tokens = [checkpoint_token(checkpoint_id, stamp) for checkpoint_id, stamp in stamps]
    every = [*recorded.values(), *(token for token in tokens if token is not None)]
    named = {(b.kind, b.digest) for b in every if _in_configured(workspace, b)}
    orphans = sorted(blob for blob in workspace.store.iterate() if blob not in named)
    ordered = sorted(
        every, key=lambda b: (b.kind, b.digest, b.snapshot_id or "", b.checkpoint_id or 0)
    )
    return FsckPlan(ordered, orphans, len(snapshots), rows)


def checkpoint_token(checkpoint_id: int, stamp: dict[str, Any] | None) -> RecordedBlob | None:
    """The timestamp token a log checkpoint's record names, when it was stamped."""
    stamp = stamp or {}
    if stamp.get("state") != "stamped" or not isinstance(stamp.get("hash"), str):
        return None
    version = stamp.get("versionId")
    version_id = version if isinstance(version, str) else None
    return RecordedBlob(None, None, TIMESTAMP, stamp["hash"], version_id, checkpoint_id)


def _in_configured(workspace: Workspace, blob: RecordedBlob) -> bool:
    """Whether the blob is recorded in the configured store, the one whose keys are listed
    for orphans (a checkpoint's token always is)."""
    return blob.evidence is None or workspace.stores.is_configured(blob.evidence.store_location)


def _store_of(workspace: Workspace, blob: RecordedBlob) -> BlobStore:
    return workspace.store if blob.evidence is None else workspace.stores.store_for(blob.evidence)


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
    workspace.stores.check_all([b.evidence for b in plan.recorded if b.evidence is not None])
    for blob in plan.recorded:
        store = _store_of(workspace, blob)
        tally.add(blob, blob_state(store, blob.kind, blob.digest, blob.version_id))
        checked += 1
        if progress is not None:
            progress(1)
    checks = seal_checks_of(workspace)
    for capture_id, snapshot_id, provenance in plan.captures:
        read = [("raw", snapshot_id)]
        state = checks.state(workspace.store, provenance, snapshot_id, read=read)
        if state is not None:
            tally.add_seal(capture_id, snapshot_id, state)
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
