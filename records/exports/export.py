"""``snap export``: a selection written as WARC, WACZ or an HTML evidence page.

The output appears whole or not at all, and an existing file is replaced only with ``--force``
(``records.output_files``, the rule of every file snap writes where the user says). Any
failure, a damaged blob above all, removes the temporary file and leaves nothing at the target.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from records.exports.selection import Selection
from records.output_files import check_output, staged
from records.workspace import Workspace
from snapshotter.errors import InputError

if TYPE_CHECKING:
    from records.attest.log_checks import LogProofs

FORMATS = ("warc", "wacz", "html")


@dataclass(frozen=True)
class WrittenCounts:
    """What the format wrote beside the selection: a WARC's records by type (WARC and WACZ),
    a WACZ's pages and annotations and whether (and why not) it is signed; nothing for the
    evidence page."""

    records: Mapping[str, int] | None = None
    pages: int | None = None
    annotations: int | None = None
    signed: bool | None = None
    signature: str | None = None  # "signed", or "not signed: " and why


@dataclass(frozen=True)
class ExportResult:
    """The file written (its JSON: ``records.wire.export_result_json``)."""

    path: Path
    format: str
    sha256: str
    size: int
    selection: Selection
    written: WrittenCounts = field(default_factory=WrittenCounts)

    @property
    def verifications(self) -> int:
        """The checks of the selected citations written with them."""
        return sum(len(c.verifications) for c in self.selection.citations)


def export(
    workspace: Workspace,
    selection: Selection,
    *,
    fmt: str,
    out: Path,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ExportResult:
    """Write ``selection`` to ``out``; ``progress`` is told of each capture written."""
    if fmt not in FORMATS:
        raise InputError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    check_output(out, force=force)
    with staged(out, force=force) as temporary:
        written = _write(workspace, selection, fmt, temporary, name=out.name, progress=progress)
    digest, size = _digest(out)
    return ExportResult(out, fmt, digest, size, selection, written)


def _write(
    workspace: Workspace,
    selection: Selection,
    fmt: str,
    target: Path,
    *,
    name: str,
    progress: Callable[[int], None] | None,
) -> WrittenCounts:
    from records.attest.checks import refuse_broken_seals, seal_checks_of
    from records.attest.log_checks import LogProofs
    from records.attest.seal import attestor_of

    sealed = [(c.capture_id, c.snapshot_id, c.provenance) for c in selection.captures]
    refuse_broken_seals(seal_checks_of(workspace), workspace.store, sealed)
    log = LogProofs(workspace)  # read once: the page's proofs are the ones checked here
    proofs = _attestations(workspace, selection, log)
    refuse_broken_proofs(proofs)
    if fmt == "html":
        from records.exports.evidence_page import render_evidence_page

        if not selection.citations:
            raise InputError(
                f"{selection.described} has no recorded citation; the evidence page shows citations"
            )
        page = render_evidence_page(workspace, selection.citation_ids, log, attestations=proofs)
        target.write_text(page, "utf-8")
        return WrittenCounts()
    from records.exports.warc import write_warc

    workspace.stores.check_all([capture.evidence for capture in selection.captures])
    if fmt == "warc":
        with target.open("wb") as out:
            summary = write_warc(
                out,
                selection,
                workspace.stores,
                filename=name,
                progress=progress,
                attestations=proofs,
            )
        return WrittenCounts(records=summary.records)
    from records.exports.wacz import WARC_NAME, write_wacz

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".snap-export-") as folder:
        warc = Path(folder) / WARC_NAME
        with warc.open("wb") as out:
            summary = write_warc(
                out, selection, workspace.stores, filename=WARC_NAME, progress=progress
            )
        from records.attest.wacz_signing import wacz_signer

        signer, why = wacz_signer(attestor_of(workspace), workspace.settings.signing_cert)
        sign = signer.signed_data if signer is not None else None
        wacz = write_wacz(target, warc, selection, summary, sign, attestations=proofs)
    return WrittenCounts(summary.records, wacz.pages, wacz.annotations, wacz.signed, why)


def _attestations(
    workspace: Workspace, selection: Selection, log: LogProofs
) -> list[dict[str, Any]]:
    """Each capture's manifest, signature, token and inclusion proof, and each verification's
    proof, with the checkpoint they are proved against (records.attest.attest)."""
    from records.attest.attest import export_attestations

    checks = [v.id for c in selection.citations for v in c.verifications]
    sealed_captures = [(c.capture_id, c.provenance) for c in selection.captures]
    return export_attestations(workspace, sealed_captures, checks, log)


def refuse_broken_proofs(attestations: list[dict[str, Any]]) -> None:
    """Before an export is written: every inclusion proof it hands out checks (the record's
    row as it is now, the path to its checkpoint's signed root), else nothing is written."""
    from records.attest.errors import AttestationFailure
    from records.attest.log_checks import proof_problems

    proofs = {
        _record_of(line): line.get("logProof")
        for line in attestations
        if "captureId" in line or "verificationId" in line
    }
    problems = proof_problems(proofs)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise AttestationFailure(f"{problems[0]}{more}; nothing was written")


def _record_of(line: dict[str, Any]) -> tuple[str, str]:
    if "captureId" in line:
        return "capture", str(line["captureId"])
    return "verification", str(line["verificationId"])


def _digest(path: Path) -> tuple[str, int]:
    with path.open("rb") as stream:
        digest = hashlib.file_digest(stream, "sha256")
    return "sha256:" + digest.hexdigest(), path.stat().st_size
