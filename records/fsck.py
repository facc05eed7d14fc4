"""``snap fsck``: re-hash every blob and check every snapshot row against the store.

Problems (exit 1): a blob whose bytes do not match its digest, a snapshot whose blob is missing.
Orphans (blobs no snapshot row names, left by an interrupted capture) are listed but harmless:
content addressing means they can only ever be correct copies of something.  So are temporary
files of a capture killed mid-download (``snap-fetch-*``, stale and unlocked); ``--repair``
removes them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from records.models import Snapshot
from records.repository import all_snapshots
from records.texts import rehash_blob
from records.workspace import Workspace
from snap.errors import StoreError
from snapshotter.store import blob_key
from snapshotter.tempfiles import remove_stale_temp_files, stale_temp_files


@dataclass
class FsckReport:
    blobs_checked: int = 0
    snapshots_checked: int = 0
    problems: list[dict[str, str]] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    temp_files: list[str] = field(default_factory=list)
    temp_files_removed: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "blobsChecked": self.blobs_checked,
            "snapshotsChecked": self.snapshots_checked,
            "problems": self.problems,
            "orphans": self.orphans,
            "tempFiles": self.temp_files,
            "tempFilesRemoved": self.temp_files_removed,
        }


@dataclass(frozen=True)
class FsckPlan:
    """What will be checked, listed first so a progress bar can show how far along it is."""

    blobs: list[tuple[str, str]]
    snapshots: list[Snapshot]


def plan_fsck(workspace: Workspace) -> FsckPlan:
    with workspace.db.session() as session:
        snapshots = list(all_snapshots(session))
    return FsckPlan(sorted(workspace.store.iterate()), snapshots)


def fsck(
    workspace: Workspace,
    plan: FsckPlan,
    *,
    progress: Callable[[int], None] | None = None,
    repair: bool = False,
) -> FsckReport:
    report = FsckReport()
    left_behind = remove_stale_temp_files() if repair else stale_temp_files()
    report.temp_files = [str(path) for path in left_behind]
    report.temp_files_removed = repair
    store = workspace.store
    snapshots = plan.snapshots
    needed = set().union(*(needed_by(s) for s in snapshots))
    present: set[tuple[str, str]] = set()
    for kind, digest in plan.blobs:
        present.add((kind, digest))
        report.blobs_checked += 1
        try:
            rehash_blob(store, kind, digest)
        except StoreError as error:
            report.problems.append({"key": blob_key(kind, digest), "problem": error.message})
        if (kind, digest) not in needed:
            report.orphans.append(blob_key(kind, digest))
        if progress is not None:
            progress(1)
    for snapshot in snapshots:
        report.snapshots_checked += 1
        for kind, digest in sorted(needed_by(snapshot)):
            if (kind, digest) not in present:
                report.problems.append(
                    {
                        "key": blob_key(kind, digest),
                        "problem": f"{blob_key(kind, digest)} is missing: snapshot {snapshot.id}"
                        f" names it as its {kind} blob",
                    }
                )
    return report


def needed_by(snapshot: Snapshot) -> set[tuple[str, str]]:
    blobs = {("raw", snapshot.raw_hash)}
    if snapshot.text_hash:
        blobs.add(("text", snapshot.text_hash))
    return blobs
