"""``snap show``, ``snap export`` and ``snap import``: stored evidence read back, written out as
web archives and evidence pages, and read in from other tools' archives."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from snap import render
from snap.cli_support import (
    as_url,
    checkpoint_log,
    documents_option,
    emit_json,
    json_option,
    progress_counter,
    workspace,
)
from snap.errors import InputError
from snap.paths import InputFile, OutputFile

if TYPE_CHECKING:
    from records.show import ShownPart


@click.command()
@click.argument("snapshot_id", metavar="SNAPSHOT")
@click.option("--text", "what", flag_value="text", default=True, help="The text (default).")
@click.option("--raw", "what", flag_value="raw", help="The raw bytes as fetched.")
@click.option("--headers", "what", flag_value="headers", help="The recorded response headers.")
@click.option(
    "--screenshot",
    "what",
    flag_value="screenshot",
    help="The full-page PNG of the latest browser capture (with -o FILE).",
)
@click.option(
    "-o",
    "--output",
    type=OutputFile(),
    help="Write the raw bytes or screenshot to this file instead of standard output.",
)
@click.option("--page", help="Only this page of a PDF (its label, or its number).")
@click.option(
    "--around",
    type=click.IntRange(min=0),
    metavar="CODEPOINT",
    help="Only the text around this code-point offset, with offsets shown.",
)
@json_option
@click.pass_context
def show(
    ctx: click.Context,
    snapshot_id: str,
    what: ShownPart,
    output: Path | None,
    page: str | None,
    around: int | None,
    as_json: bool,
) -> None:
    """Print what was stored for SNAPSHOT (an id, or 8+ of its hex digits).

    Every byte is read from the snapshot's recorded store and version and re-hashed first.
    """
    from records.show import show as run_show

    with workspace(ctx, existing=True) as ws:
        shown = run_show(ws, snapshot_id, what=what, page=page, around=around)
    from records.wire import shown_json, shown_written_json

    if output is not None and shown.raw is not None:
        write_output(output, shown.raw)
        if as_json:
            emit_json(shown_written_json(shown, str(output)))
        else:
            digest = hashlib.sha256(shown.raw).hexdigest()
            click.echo(f"wrote {output} ({len(shown.raw)} bytes, sha256:{digest})")
    elif as_json:
        emit_json(shown_json(shown))
    elif shown.raw is not None:
        sys.stdout.buffer.write(shown.raw)
        sys.stdout.buffer.flush()
    else:
        click.echo(render.shown(shown, offsets=page is not None or around is not None))


@click.command()
@click.argument("file", required=False, type=InputFile(allow_stdin=True))
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(["warc", "wacz", "html"]),
    help="warc: WARC 1.1; wacz: WACZ 1.1.1 with pages and annotations; html: evidence page.",
)
@click.option("-o", "--output", required=True, type=OutputFile(), help="The file to write.")
@click.option("--citation", "citation_id", help="Export this citation and what it was checked on.")
@click.option("--snapshot", "snapshot_id", help="Export every capture of this snapshot.")
@click.option("--url", help="Export every stored capture of this URL.")
@click.option("--force", is_flag=True, help="Replace the output file if it exists.")
@documents_option
@json_option
@click.pass_context
def export(
    ctx: click.Context,
    file: Path | None,
    fmt: str,
    output: Path,
    citation_id: str | None,
    snapshot_id: str | None,
    url: str | None,
    force: bool,
    documents_path: Path | None,
    as_json: bool,
) -> None:
    """Write stored evidence as a web archive (WARC, WACZ) or an evidence page.

    Select exactly one: --citation ID, --snapshot ID, --url URL, or FILE (an answer or citation
    file in any format `snap verify` reads: everything it cites; --documents as for verify).
    Every blob is re-hashed as it is read; a damaged one stops the export (exit 1) and nothing
    is written.
    """
    from records.exports.export import export as run_export
    from records.exports.selection import select
    from records.inputs import load_document_map
    from records.output_files import check_output

    if documents_path is not None and file is None:
        raise click.UsageError("--documents goes with FILE (a model's answer)")
    check_output(output, force=force)
    documents = load_document_map(documents_path)
    with workspace(ctx, existing=True) as ws:
        selection = select(
            ws,
            citation_id=citation_id,
            snapshot_id=snapshot_id,
            url=url and as_url(url),
            file=file,
            documents=documents,
        )
        with progress_counter(len(selection.captures), "exporting") as bar:
            result = run_export(
                ws, selection, fmt=fmt, out=output, force=force, progress=bar.update
            )
    if as_json:
        from records.wire import export_result_json

        emit_json(export_result_json(result))
    else:
        click.echo(render.export_summary(result))


def write_output(path: Path, data: bytes) -> None:
    """The bytes ``snap show -o`` writes; an unwritable path is one line (exit 2)."""
    try:
        path.write_bytes(data)
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror}") from None


@click.command("import")
@click.argument("path", type=InputFile())
@click.option(
    "--as-latest",
    is_flag=True,
    help="Let the imported captures become their URL's latest snapshot over snap's own.",
)
@json_option
@click.pass_context
def import_(ctx: click.Context, path: Path, as_latest: bool, as_json: bool) -> None:
    """Import the captures of a WARC (.warc, .warc.gz) or WACZ file made by another tool.

    Each HTTP response becomes a capture and snapshot as if fetched; revisits resolve to their
    original in the same archive. An imported capture keeps its own time but never becomes
    the latest snapshot of a URL snap captured itself, unless --as-latest. Exit 1 when a
    record was refused (payload digest mismatch, truncated or undecodable body), 2 when the
    file cannot be imported or breaks off (records before the damage stay imported).
    """
    from records.imports.warc import import_archive, total_bytes

    with workspace(ctx) as ws, progress_counter(total_bytes(path), "importing") as bar:
        report = import_archive(ws, path, progress=bar.update, as_latest=as_latest)
        checkpoint_log(ws)
    if as_json:
        from records.wire import import_report_json

        emit_json(import_report_json(report))
    else:
        click.echo(render.import_report(report))
    for line in report.damaged:
        click.echo(f"snap: error: {line}", err=True)
    ctx.exit(report.exit_code)
