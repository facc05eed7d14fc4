"""What ``snap import`` reports: one result per record, and the counts and exit code.

The JSON of the report is written by ``records.wire.import_report_json``."""

from __future__ import annotations

from dataclasses import dataclass, field

from records.vocabulary import ArchiveAttestation, ImportOutcome


@dataclass(frozen=True)
class RecordResult:
    """What became of one record: ``imported``, ``exists`` (imported before), ``skipped``
    (not a capture, or a revisit without its original) or ``refused`` (see ``reason``)."""

    source: str
    offset: int
    record_type: str
    uri: str | None
    outcome: ImportOutcome
    record_id: str | None = None
    snapshot_id: str | None = None
    capture_id: int | None = None
    status: int | None = None
    reason: str | None = None
    # a capture recorded: whether its archive's attestation holds for it (records.imports.attested)
    attestation: ArchiveAttestation | None = None


@dataclass
class ImportReport:
    path: str
    kind: str
    results: list[RecordResult] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)  # one line per WARC that broke off
    # what does not hold together in the archive's attestations, or between them and its bytes:
    # said, and the exit code unchanged (an import claims nothing of its own; the captures are
    # imported all the same, each saying whether its attestation holds for it)
    attestation_problems: list[str] = field(default_factory=list)

    def count(self, outcome: ImportOutcome) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    @property
    def refused(self) -> list[RecordResult]:
        return [result for result in self.results if result.outcome == ImportOutcome.REFUSED]

    @property
    def exit_code(self) -> int:
        """0 all captures imported (skipped records and attestation problems are reported,
        not failures: nothing of the archive was lost); 1 a record was refused; 2 an archive
        is damaged."""
        if self.damaged:
            return 2
        return 1 if self.refused else 0
