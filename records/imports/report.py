"""What ``snap import`` reports: one result per record, and the counts and exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RecordResult:
    """What became of one record: ``imported``, ``exists`` (imported before), ``skipped``
    (not a capture, or a revisit without its original) or ``refused`` (see ``reason``)."""

    source: str
    offset: int
    record_type: str
    uri: str | None
    outcome: str
    record_id: str | None = None
    snapshot_id: str | None = None
    capture_id: int | None = None
    status: int | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.source,
            "offset": self.offset,
            "type": self.record_type,
            "uri": self.uri,
            "outcome": self.outcome,
            "recordId": self.record_id,
            "snapshotId": self.snapshot_id,
            "captureId": self.capture_id,
            "status": self.status,
            "reason": self.reason,
        }


@dataclass
class ImportReport:
    path: str
    kind: str
    results: list[RecordResult] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)  # one line per WARC that broke off

    def count(self, outcome: str) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    @property
    def refused(self) -> list[RecordResult]:
        return [result for result in self.results if result.outcome == "refused"]

    @property
    def exit_code(self) -> int:
        """0 all captures imported; 1 a record was refused; 2 an archive is damaged."""
        if self.damaged:
            return 2
        return 1 if self.refused else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "records": [result.to_json() for result in self.results],
            "summary": {
                outcome: self.count(outcome)
                for outcome in ("imported", "exists", "skipped", "refused")
            }
            | {"damaged": self.damaged, "exitCode": self.exit_code},
        }
