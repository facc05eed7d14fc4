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
    checkpoint_refusal,
    documents_option,
    emit_json,
    json_option,
    progress_counter,
    raise_if,
    workspace,
)
from snap.paths import InputFile, OutputFile

if TYPE_CHECKING:
    from records.show import ShownPart


@click.command()
@click.argument("snapshot_id", metavar="SNAPSHOT")
@click.option("--text", is_flag=True, help="The text (default).")
@click.option("--raw", is_flag=True, help="The raw bytes as fetched.")
@click.option("--headers", is_flag=True, help="The recorded response headers.")
@click.option(
    "--screenshot",
    is_flag=True,
    help="The full-page PNG of the latest browser capture (with -o FILE).",
)
@click.option(
    "-o",
    "--output",
    type=OutputFile(),
    help="Write what would be printed to this file instead, and print its SHA-256.",
)
@click.option("--force", is_flag=True, help="Replace the output file if it exists.")
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
    text: bool,
    raw: bool,
    headers: bool,
    screenshot: bool,
    output: Path | None,
    force: bool,
    page: str | None,
    around: int | None,
    as_json: bool,
) -> None:
    """Print what was stored for SNAPSHOT (an id, or 8+ of its hex digits).

    Every byte is read from the snapshot's recorded store and version and re-hashed first.
    With -o FILE, what would be printed is written to FILE instead, without the terminal's
    last line break, so the text's file hashes to the recorded text hash (an existing FILE is
    replaced only with --force).
    """
    from records.output_files import check_output, write_file
    from records.show import show as run_show

    what = shown_part({"text": text, "raw": raw, "headers": headers, "screenshot": screenshot})
    if what != "text" and (page is not None or around is not None):
        option = "--page" if page is not None else "--around"
        raise click.UsageError(f"{option} goes with the text, not --{what}")
    if output is None and force:
        raise click.UsageError("--force goes with -o FILE")
    if output is None and not as_json and what == "screenshot" and sys.stdout.isatty():
        raise click.UsageError(BINARY_TO_TERMINAL.format(what="the screenshot is a PNG"))
    if output is not None:
        check_output(output, force=force)
    with workspace(ctx, existing=True) as ws:
        shown = run_show(ws, snapshot_id, what=what, page=page, around=around)
    from records.wire import shown_json, shown_written_json

    offsets = page is not None or around is not None
    if output is None:
        if as_json:
            emit_json(shown_json(shown))
        elif shown.raw is not None:
            if is_binary(shown.raw) and sys.stdout.isatty():
                raise click.UsageError(BINARY_TO_TERMINAL.format(what="the raw bytes are binary"))
            sys.stdout.buffer.write(shown.raw)
            sys.stdout.buffer.flush()
        else:
            click.echo(render.shown(shown, offsets=offsets))
        return
    if shown.raw is not None:
        data = shown.raw
    else:  # the text or the exchanges, without the line break a terminal's line ends with:
        data = render.shown(shown, offsets=offsets).encode("utf-8")  # the text blob, byte for byte
    write_file(output, data, force=force)
    if as_json:
        emit_json(shown_written_json(shown, str(output), data))
    else:
        digest = hashlib.sha256(data).hexdigest()
        click.echo(f"wrote {output} ({len(data)} bytes, sha256:{digest})")


# Bytes a terminal would take as control sequences, or garble: written to a file, or to a pipe
# the user set up, never to the screen (as curl refuses binary output to a terminal).
BINARY_TO_TERMINAL = "{what}: give -o FILE, or redirect standard output to a file"


def is_binary(data: bytes) -> bool:
    """Whether ``data`` is no text a terminal should be sent: a NUL byte in its first 8 KiB,
    git's and curl's test."""
    return b"\0" in data[:8192]


def shown_part(flags: dict[ShownPart, bool]) -> ShownPart:
    """The one part of the snapshot asked for (the text when none is); several is a usage
    mistake, not a choice for snap to make."""
    given = [part for part, on in flags.items() if on]
    if len(given) > 1:
        named = " and ".join(f"--{part}" for part in given)
        choices = ", ".join(f"--{part}" for part in flags)
        raise click.UsageError(f"{named} cannot be combined: give one of {choices}")
    return given[0] if given else "text"


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
    file cannot be imported or breaks off (records before the damage stay imported). An
    archive's attestations that do not hold, and bytes that differ from what they sign, are
    reported, one line each, and refuse nothing; each capture says whether its archive's
    attestation holds for it (snap audit).
    """
    from records.imports.warc import import_archive, total_bytes

    with workspace(ctx) as ws, progress_counter(total_bytes(path), "importing") as bar:
        report = import_archive(ws, path, progress=bar.update, as_latest=as_latest)
        refusal = checkpoint_refusal(ws)
    if as_json:
        from records.wire import import_report_json

        raise_if(refusal)
        emit_json(import_report_json(report))
    elif report.results or not report.damaged:  # broken before any record: only the error
        click.echo(render.import_report(report))
    for line in report.damaged:
        click.echo(f"snap: error: {line}", err=True)
    raise_if(refusal)
    ctx.exit(report.exit_code)
