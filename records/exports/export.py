"""``snap export``: a selection written as WARC, WACZ or an HTML evidence page.

The output appears whole or not at all: it is written to a temporary file beside the target,
flushed to disk, and only then linked into place (``os.link`` refuses an existing file, so two
exports cannot overwrite each other; ``--force`` replaces instead). Any failure, a damaged blob
above all, removes the temporary file and leaves nothing at the target.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from records.exports.selection import Selection
from records.workspace import Workspace
from snapshotter.errors import InputError

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


def check_output(path: Path, *, force: bool) -> None:
    """Before anything is read: the target can be written, and is not there unless forced."""
    folder = path.resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise InputError(f"{path}: cannot write there (no such folder, or not writable)")
    if path.is_dir():
        raise InputError(f"{path} is a folder; give the path of the file to write")
    if path.exists() and not force:
        raise InputError(f"{path} exists; give --force to replace it")


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
    with _staged(out, force=force) as staged:
        written = _write(workspace, selection, fmt, staged, name=out.name, progress=progress)
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
    from records.attest.seal import attestor_of

    sealed = [(c.capture_id, c.snapshot_id, c.provenance) for c in selection.captures]
    refuse_broken_seals(seal_checks_of(workspace), workspace.store, sealed)
    if fmt == "html":
        from records.exports.evidence_page import render_evidence_page

        if not selection.citations:
            raise InputError(
                f"{selection.described} has no recorded citation; the evidence page shows citations"
            )
        target.write_text(render_evidence_page(workspace, selection.citation_ids), "utf-8")
        return WrittenCounts()
    from records.exports.warc import write_warc

    workspace.stores.check_all([capture.evidence for capture in selection.captures])
    if fmt == "warc":
        proofs = _attestations(workspace, selection)
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
        proofs = _attestations(workspace, selection)
        wacz = write_wacz(target, warc, selection, summary, sign, attestations=proofs)
    return WrittenCounts(summary.records, wacz.pages, wacz.annotations, wacz.signed, why)


def _attestations(workspace: Workspace, selection: Selection) -> list[dict[str, Any]]:
    """Each capture's manifest, signature, token and inclusion proof, and each verification's
    proof, with the checkpoint they are proved against (records.attest.attest)."""
    from records.attest.attest import export_attestations

    checks = [v.id for c in selection.citations for v in c.verifications]
    sealed_captures = [(c.capture_id, c.provenance) for c in selection.captures]
    return export_attestations(workspace, sealed_captures, checks)


@contextmanager
def _staged(out: Path, *, force: bool) -> Iterator[Path]:
    """A temporary path beside ``out``, put in place only when the body finishes."""
    handle, name = tempfile.mkstemp(dir=out.resolve().parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(handle)
    staged = Path(name)
    try:
        yield staged
        with staged.open("rb+") as written:
            os.fsync(written.fileno())
        if force:
            staged.replace(out)
        else:
            try:
                os.link(staged, out)
            except FileExistsError:
                raise InputError(f"{out} exists; give --force to replace it") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            staged.unlink()


def _digest(path: Path) -> tuple[str, int]:
    with path.open("rb") as stream:
        digest = hashlib.file_digest(stream, "sha256")
    return "sha256:" + digest.hexdigest(), path.stat().st_size
