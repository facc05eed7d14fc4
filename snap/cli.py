"""The ``snap`` command line: each command parses, makes one library call, and prints.

Errors are turned into one line and an exit code in exactly one place, ``SnapGroup.invoke``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from records.vocabulary import BatchKind, ItemState
from snap import __version__, render
from snap.cli_support import F, emit_json, emit_json_list, json_option, workspace
from snap.config import Settings, settings_of
from snap.errors import InputError, SnapError, VerifierError, exit_code_of
from snap.paths import InputFile, OutputFile

if TYPE_CHECKING:
    from records.jobs import BatchProgress
    from records.show import ShownPart

INTERNAL_ERROR_EXIT = 70


def usage_error(error: click.UsageError) -> NoReturn:
    """A usage mistake is one line too, with where to look, and exit code 2."""
    where = error.ctx.command_path if error.ctx else "snap"
    click.echo(f"snap: error: {error.format_message()} (see: {where} --help)", err=True)
    sys.exit(2)


class SnapGroup(click.Group):
    """Maps every SnapError to ``snap: error: <one line>`` and its exit code; never a traceback."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            usage_error(error)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            usage_error(error)
        except (SnapError, VerifierError) as error:
            code = exit_code_of(error)
            click.echo(f"snap: error: {error.message}", err=True)
            if ctx.meta.get("snap.json"):
                emit_json(error_document(error))
            ctx.exit(code)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("snap: interrupted", err=True)
            ctx.exit(130)
        except Exception as error:
            if os.environ.get("SNAP_DEBUG"):
                raise
            summary = " ".join(f"{type(error).__name__}: {error}".split())[:300]
            click.echo(
                f"snap: internal error: {summary} (SNAP_DEBUG=1 shows the traceback)", err=True
            )
            ctx.exit(INTERNAL_ERROR_EXIT)


BATCH_SIZE = 100  # records.capture.BATCH_SIZE (not imported: --help loads no records code)


def checkpoint_log(ws: Any) -> None:
    """The end of a command that recorded something is the end of a batch: the log's new size
    and root are signed and stamped (records.attest)."""
    from records.attest.checkpoints import checkpoint_if_grown

    checkpoint_if_grown(ws)


def progress_counter(total: int, label: str) -> Any:
    """A progress bar on a terminal; silent in pipes, CI and tests."""
    return click.progressbar(
        length=total, label=label, file=sys.stderr, hidden=not sys.stderr.isatty()
    )


@click.group(cls=SnapGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="snap")
@click.option(
    "--store",
    "store_url",
    metavar="URL",
    help="Blob store: a folder, or s3://bucket/prefix (default: $SNAP_STORE).",
)
@click.option(
    "--database",
    "database_url",
    metavar="URL",
    help="SQLAlchemy database URL (default: $SNAP_DATABASE_URL, else SQLite).",
)
@click.pass_context
def cli(ctx: click.Context, store_url: str | None, database_url: str | None) -> None:
    """Snapshot sources and check that quotes are really in them.

    snap stores every fetched source write-once under its SHA-256, records each capture, and
    verifies citations against the stored text with an exact, number-safe token match.
    """
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings are ours to report
    settings = Settings.from_env()
    overrides = {"store_url": store_url, "database_url": database_url}
    ctx.obj = settings.with_overrides(**{k: v for k, v in overrides.items() if v})


PRIVATE_HELP = (
    "Also allow loopback and RFC 1918: 127.0.0.0/8, ::1, 10.0.0.0/8, 172.16.0.0/12 and"
    " 192.168.0.0/16, never cloud metadata (an alias; also SNAP_ALLOW_PRIVATE=1)."
)


def parse_allow_network(
    _ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]
) -> Any:
    """``--allow-network`` (repeatable, or comma-separated): None when not given, so the
    setting of SNAP_ALLOW_NETWORKS stays."""
    from snap.config import parse_networks
    from snap.errors import ConfigError

    if not value:
        return None
    try:
        return parse_networks(",".join(value), "--allow-network")
    except ConfigError as error:
        raise click.BadParameter(error.message.removeprefix("--allow-network: ")) from None


def allow_network_option(function: F) -> F:
    return click.option(
        "--allow-network",
        "allow_networks",
        metavar="CIDR",
        multiple=True,
        callback=parse_allow_network,
        help=(
            "Let captures reach this network although the address guard refuses it; repeat or"
            " separate with commas (replaces SNAP_ALLOW_NETWORKS). Covers a cloud metadata"
            " address only when it is named alone."
        ),
    )(function)


def enqueue_option(function: F) -> F:
    return click.option(
        "--enqueue",
        is_flag=True,
        help="Split the work into tasks for workers and record the batch (see snap jobs).",
    )(function)


@cli.command()
@click.argument("targets", metavar="TARGET...", nargs=-1)
@click.option(
    "--from",
    "from_file",
    type=InputFile(allow_stdin=True),
    help="Also capture the targets in this file, one a line (- reads standard input).",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1, max=10000),
    default=BATCH_SIZE,
    show_default=True,
    help="With several targets: captures stored, made durable and recorded together.",
)
@click.option("--allow-private", is_flag=True, default=None, help=PRIVATE_HELP)
@allow_network_option
@click.option("--max-bytes", type=click.IntRange(min=1), help="Size cap (default 50 MiB).")
@click.option(
    "--timeout", type=float, help="Seconds for connecting and for each read (default 30)."
)
@click.option(
    "--deadline",
    type=float,
    help="Seconds for the whole capture, redirects included (default 10 x timeout).",
)
@click.option(
    "--enqueue",
    is_flag=True,
    help="TARGET (or --from) is a file of URLs, one a line: a batch of capture tasks for workers.",
)
@click.option(
    "--browser",
    "capture",
    flag_value="browser",
    default=None,
    help="Render the page in Chromium, every request through snap (also SNAP_CAPTURE=browser).",
)
@click.option(
    "--http",
    "capture",
    flag_value="http",
    help="Capture over HTTP only, whatever SNAP_CAPTURE says.",
)
@json_option
@click.pass_context
def fetch(
    ctx: click.Context,
    targets: tuple[str, ...],
    from_file: Path | None,
    batch_size: int,
    allow_private: bool | None,
    allow_networks: Any,
    max_bytes: int | None,
    timeout: float | None,
    deadline: float | None,
    enqueue: bool,
    capture: str | None,
    as_json: bool,
) -> None:
    """Capture each TARGET (an http(s) URL or a local file) and store it write-once.

    TARGET starting with http: or https: is always a URL (exit 2 unless it is an absolute URL
    with a host); a file: URL or anything else is a local file. Only this command reads
    local files: the HTTP service, verify --fetch and the workers capture web URLs only.
    With --browser, the page is rendered in Chromium and its subresources, screenshot,
    rendered DOM and rendered text are stored too. With --enqueue, TARGET is a file of URLs,
    each captured by a worker (see snap jobs).

    Several targets (or --from) are captured a batch at a time: one line per target, in
    order (--json: one JSON object a line), and the exit code of the worst failure.
    """
    limits: dict[str, Any] = {
        "max_bytes": max_bytes,
        "timeout": timeout,
        "deadline": deadline,
        "allow_networks": allow_networks,
        "capture": capture,
    }
    if enqueue:
        from records.jobs import capture_items, read_url_list

        if len(targets) + (from_file is not None) != 1:
            raise click.UsageError("--enqueue takes one file of URLs (TARGET or --from)")
        items = capture_items(read_url_list(from_file or Path(targets[0])), method=capture)
        with workspace(ctx, allow_private=allow_private, **limits) as ws:
            start_batch(ctx, ws, BatchKind.CAPTURE, {"urls": len(items)}, items, as_json)
        return
    if not targets and from_file is None:
        raise click.UsageError("give a TARGET to capture, or --from FILE")
    if len(targets) == 1 and from_file is None:
        with workspace(ctx, allow_private=allow_private, **limits) as ws:
            fetch_one(ws, targets[0], as_json)
        return
    from records.capture import read_targets

    listed = [*targets, *(read_targets(from_file) if from_file is not None else [])]
    with workspace(ctx, allow_private=allow_private, **limits) as ws:
        worst = fetch_many(ws, listed, batch_size, as_json)
    ctx.exit(worst)


def fetch_one(ws: Any, target: str, as_json: bool) -> None:
    from records.capture import capture_source
    from records.wire import stored_capture_json

    record = capture_source(ws, target)
    checkpoint_log(ws)
    if as_json:
        emit_json(stored_capture_json(record))
    else:
        click.echo(render.snapshot_summary(record))


def fetch_many(ws: Any, targets: list[str], batch_size: int, as_json: bool) -> int:
    """Capture ``targets`` a batch at a time, one line each as its batch is recorded; the
    exit code of the worst failure (0 when every target was stored)."""
    from records.capture import capture_sources
    from records.wire import stored_capture_json

    worst = 0
    with progress_counter(len(targets), "capturing") as bar:
        try:
            for outcome in capture_sources(ws, targets, batch_size=batch_size):
                if outcome.record is not None:
                    line = stored_capture_json(outcome.record)
                    text = f"stored {outcome.target} {outcome.record.snapshot_id}"
                else:
                    assert outcome.error is not None
                    worst = max(worst, exit_code_of(outcome.error))
                    line = {"target": outcome.target, **error_document(outcome.error)}
                    text = f"failed {outcome.target}: {outcome.error.message}"
                click.echo(json.dumps(line, ensure_ascii=False, default=str) if as_json else text)
                bar.update(1)
        finally:
            checkpoint_log(ws)
    return worst


def error_document(error: SnapError | VerifierError) -> dict[str, Any]:
    """The JSON of an error, as every command gives it with --json."""
    return {
        "error": {
            "message": error.message,
            "exitCode": exit_code_of(error),
            "type": type(error).__name__,
        }
    }


def documents_option(function: F) -> F:
    return click.option(
        "--documents",
        "documents_path",
        type=InputFile(),
        help="JSON map from a model's document index, title or file id to a URL or snapshot id.",
    )(function)


@cli.command()
@click.argument("file", type=InputFile(allow_stdin=True))
@click.option(
    "--fetch",
    "fetch_missing",
    is_flag=True,
    help="Capture a cited URL first when it has no snapshot yet.",
)
@click.option("--allow-private", is_flag=True, default=None, help="With --fetch: " + PRIVATE_HELP)
@allow_network_option
@click.option(
    "--emit",
    "emit_path",
    type=OutputFile(),
    help="Write verified citations here as citation records and W3C annotations.",
)
@documents_option
@json_option
@click.pass_context
def verify(
    ctx: click.Context,
    file: Path,
    fetch_missing: bool,
    allow_private: bool | None,
    allow_networks: Any,
    emit_path: Path | None,
    documents_path: Path | None,
    as_json: bool,
) -> None:
    """Check the citations in FILE against their stored snapshots.

    Exit 0 when every quote is found, 1 when any is not, 2 when FILE cannot be used.
    """
    from records.inputs import load_document_map, load_verify_input
    from records.verify import verify_citations

    given = load_verify_input(file, load_document_map(documents_path))
    if emit_path is not None:
        check_can_write(emit_path, file)
    with workspace(ctx, allow_private=allow_private, allow_networks=allow_networks) as ws:
        report = verify_citations(ws, given, fetch_missing=fetch_missing)
        checkpoint_log(ws)
        if emit_path is not None:
            from records.emit import emit_verified  # the ORM's models: only --emit reads them

            emitted = emit_verified(ws, report.results)
            write_json_file(emit_path, emitted)
            click.echo(
                f"wrote {len(emitted['citations'])} verified citation(s) of "
                f"{len(report.results)} to {emit_path}",
                err=True,
            )
    if as_json:
        from records.wire import verify_report_json  # the JSON shapes: only --json writes them

        emit_json(verify_report_json(report))
    else:
        click.echo(render.verify_report(report))
    ctx.exit(0 if report.passed else 1)


def write_output(path: Path, data: bytes) -> None:
    """The bytes ``snap show -o`` writes; an unwritable path is one line (exit 2)."""
    try:
        path.write_bytes(data)
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror}") from None


def check_can_write(path: Path, given: Path) -> None:
    """Before any check is recorded: an --emit target that cannot be written is an input error,
    and so is the input file itself (it would be overwritten)."""
    if str(given) != "-" and path.resolve() == given.resolve():
        raise InputError(f"{path}: --emit would overwrite the input file")
    folder = path.resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise InputError(f"{path}: cannot write there (no such folder, or not writable)")


def write_json_file(path: Path, document: Any) -> None:
    try:
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as error:
        raise InputError(f"{path}: cannot write: {error.strerror}") from None


@cli.command()
@click.argument("citation_id", required=False)
@click.option("--url", help="Everything recorded about this URL.")
@click.option("--snapshot", "snapshot_id", help="Everything recorded about this snapshot.")
@json_option
@click.pass_context
def audit(
    ctx: click.Context,
    citation_id: str | None,
    url: str | None,
    snapshot_id: str | None,
    as_json: bool,
) -> None:
    """Show what was stored, when, its hashes, and every verification.

    Every blob shown is re-hashed now; exit 1 when any of that evidence is damaged or missing.
    """
    from records.audit import audit as run_audit
    from records.audit import evidence_intact

    with workspace(ctx, existing=True) as ws:
        report = run_audit(
            ws, citation_id=citation_id, url=url and as_url(url), snapshot_id=snapshot_id
        )
    if as_json:
        from records.wire import audit_json

        emit_json(audit_json(report))
    else:
        click.echo(render.audit_report(report))
    ctx.exit(0 if evidence_intact(report) else 1)


def as_url(target: str) -> str:
    """A local path, as typed to ``snap fetch``, names its capture by its ``file://`` URL."""
    try:
        if "://" not in target and Path(target).exists():
            return Path(target).resolve().as_uri()
    except (OSError, ValueError):  # a name too long (or with NUL) to be a file is a URL
        pass
    return target


def parse_since(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from snapshotter.times import parse_time

    try:
        return parse_time(value)
    except ValueError:
        raise click.BadParameter("expected an ISO date such as 2026-11-05") from None


@cli.command()
@click.option("--url", help="Only citations of this URL.")
@click.option("--since", callback=parse_since, help="Only citations recorded since this date.")
@click.option("--refetch", is_flag=True, help="Capture every cited source again first.")
@click.option("--allow-private", is_flag=True, default=None, help="With --refetch: " + PRIVATE_HELP)
@allow_network_option
@click.option(
    "--run",
    "run_id",
    metavar="RUN_ID",
    help="Continue an interrupted run (its id as printed, or a unique prefix of 6+"
    " characters): citations it already recorded are not checked again.",
)
@enqueue_option
@json_option
@click.pass_context
def reverify(
    ctx: click.Context,
    url: str | None,
    since: datetime | None,
    refetch: bool,
    allow_private: bool | None,
    allow_networks: Any,
    run_id: str | None,
    enqueue: bool,
    as_json: bool,
) -> None:
    """Re-check recorded citations against the latest snapshot of each source.

    Each snapshot group is committed on its own; the run id is printed, and ``--run`` with it
    (or a batch id of --enqueue) continues an interrupted run; a run id never recorded is
    refused (exit 2). Exit 1 when any citation fails or any refetch failed. With --enqueue,
    each snapshot group is a task for workers; snap jobs BATCH shows what they found.
    """
    from records.wire import citation_result_json, reverify_report_json_besides_results
    from snap.reverify_submission import (
        QueuedPlan,
        Queueing,
        ReverifyRequest,
        plan_reverify,
        submit_reverify,
    )

    request = ReverifyRequest(url and as_url(url), since, refetch, run_id)
    queueing = Queueing.ASKED if enqueue else Queueing.NEVER
    with workspace(
        ctx, existing=True, allow_private=allow_private, allow_networks=allow_networks
    ) as ws:
        plan = plan_reverify(ws, request, queueing)
        if isinstance(plan, QueuedPlan):
            with in_process_notice(ws, plan.size, BatchKind.REVERIFY) as notice:
                submitted = submit_reverify(ws, plan, progress=notice)
            report_submitted(ctx, ws, submitted, as_json, verb="queued")
            return
        with progress_counter(plan.size, "re-verifying") as bar:
            report = submit_reverify(ws, plan, progress=bar.update)
            checkpoint_log(ws)
    if as_json:  # as emit_json(reverify_report_json(report)), a result at a time
        results = (citation_result_json(result) for result in report.results)
        besides = reverify_report_json_besides_results(report)
        emit_json_list({"results": [], **besides}, "results", results)
    else:
        click.echo(render.reverify_report(report))
    ctx.exit(0 if report.passed else 1)


@cli.command()
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


@cli.command()
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
    from records.exports.export import check_output
    from records.exports.export import export as run_export
    from records.exports.selection import select
    from records.inputs import load_document_map

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


@cli.command()
@click.option("--url", help="Only snapshots captured from this URL.")
@click.option("--snapshot", "snapshot_id", help="Only this snapshot (an id or 8+ hex digits).")
@click.option("--since", callback=parse_since, help="Only snapshots recorded since this date.")
@enqueue_option
@json_option
@click.pass_context
def reextract(
    ctx: click.Context,
    url: str | None,
    snapshot_id: str | None,
    since: datetime | None,
    enqueue: bool,
    as_json: bool,
) -> None:
    """Extract stored raw bytes again with the current extractor (nothing is fetched).

    A different text is recorded as a new extraction beside the old ones; citations stay pinned
    to the extraction they were checked against, and reverify compares the two.
    With --enqueue, each snapshot is a task for workers (see snap jobs).
    """
    from records.reextract import plan_reextract
    from records.reextract import reextract as run_reextract

    if enqueue:
        from records.jobs import reextract_items

        params = {"url": url, "snapshot": snapshot_id, "since": since and since.isoformat()}
        with workspace(ctx, existing=True) as ws:
            items = reextract_items(
                ws, url=url and as_url(url), snapshot_id=snapshot_id, since=since
            )
            start_batch(ctx, ws, BatchKind.REEXTRACT, params, items, as_json)
        return

    with workspace(ctx, existing=True) as ws:
        jobs = plan_reextract(ws, url=url and as_url(url), snapshot_id=snapshot_id, since=since)
        with progress_counter(len(jobs), "re-extracting") as bar:
            results = run_reextract(ws, jobs, progress=bar.update)
    if as_json:
        from records.wire import reextracted_json

        emit_json(reextracted_json(results))
    else:
        click.echo(render.reextracted(results))


@cli.command()
@click.option(
    "--repair",
    is_flag=True,
    help="Remove temporary files left by killed captures (stale and unlocked).",
)
@json_option
@click.pass_context
def fsck(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Re-hash every stored blob and check every snapshot's blobs; exit 1 on any problem.

    Also lists temporary files that killed captures left behind; --repair removes them.
    """
    from records.fsck import fsck as run_fsck
    from records.fsck import plan_fsck

    with workspace(ctx, existing=True) as ws:
        plan = plan_fsck(ws)
        with progress_counter(len(plan.blobs), "checking blobs") as bar:
            report = run_fsck(ws, plan, progress=bar.update, repair=repair)
    if as_json:
        from records.wire import fsck_json

        emit_json(fsck_json(report))
    else:
        click.echo(render.fsck_report(report))
    ctx.exit(0 if report.ok else 1)


@cli.group()
def store() -> None:
    """Manage the blob store."""


@store.command("init")
@json_option
@click.pass_context
def store_init(ctx: click.Context, as_json: bool) -> None:
    """Create the store (an S3 bucket with Object Lock) or report how an existing one is set.

    Exit 1 when an existing bucket has no Object Lock: evidence stored there could be deleted.
    """
    from records.wire import store_init_json
    from snapshotter.store import init_store

    settings: Settings = ctx.obj
    result = init_store(
        settings.store_url,
        lock_mode=settings.lock_mode,
        lock_days=settings.lock_days,
        home=settings.home,
    )
    if as_json:
        emit_json(store_init_json(result))
    else:
        click.echo(render.store_init(result))
    ctx.exit(0 if result.protected else 1)


@store.command("relocate")
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="[NEW]", required=False)
@json_option
@click.pass_context
def store_relocate(ctx: click.Context, old: str, new: str | None, as_json: bool) -> None:
    """Record that the snapshots stored in OLD are now in NEW (default: the configured store).

    For a home or store that was copied or moved: OLD is the location the snapshots were
    recorded with (a folder, file:// URL or s3://bucket/prefix; see snap audit). Only the
    records change, and only after every blob they name is found in NEW.
    """
    from records.relocate import relocate

    with workspace(ctx, existing=True) as ws:
        moved = relocate(ws, old, new)
    if as_json:
        from records.wire import relocation_json

        emit_json(relocation_json(moved))
    else:
        click.echo(render.relocated(moved))


@cli.group()
def db() -> None:
    """Manage the database schema."""


@db.command("upgrade")
@json_option
@click.pass_context
def db_upgrade(ctx: click.Context, as_json: bool) -> None:
    """Apply every pending migration (SQLite is also upgraded on first use)."""
    from records.db import upgrade_database

    settings: Settings = ctx.obj
    result = upgrade_database(settings.database_url)
    if as_json:
        from records.wire import upgrade_json

        emit_json(upgrade_json(result))
    elif result.upgraded:
        click.echo(
            f"database {result.database} upgraded from {result.before or 'empty'}"
            f" to {result.revision}"
        )
    else:
        click.echo(
            f"database {result.database} is already at the latest revision, {result.revision}"
        )


@cli.command("import")
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


# Workers: batches split into tasks (snap/workers), their state in the database -----------------


def start_batch(
    ctx: click.Context,
    ws: Any,
    kind: BatchKind,
    params: dict[str, Any],
    items: list[tuple[str, dict[str, Any]]],
    as_json: bool,
) -> None:
    """Record the batch, then publish its items, or, with no broker, run them here."""
    from snap.workers.submit import submit

    with in_process_notice(ws, len(items), kind) as bar:
        submitted = submit(ws, kind, params, items, progress=bar)
    report_submitted(ctx, ws, submitted, as_json, verb="queued")


@contextmanager
def in_process_notice(ws: Any, total: int, label: str) -> Iterator[Callable[[int], None]]:
    """Without a broker, one line says the batch runs here, and a progress bar follows it."""
    settings = settings_of(ws)
    if settings.broker_url is not None:
        yield lambda _done: None
        return
    click.echo(
        "snap: no broker configured (SNAP_BROKER_URL): running the batch in this process",
        err=True,
    )
    with progress_counter(total, label) as bar:
        yield bar.update


def report_submitted(
    ctx: click.Context, ws: Any, submitted: Any, as_json: bool, *, verb: str
) -> None:
    from records.jobs import batch_progress

    if submitted.queue is None:  # run here: what happened, and exit 1 if any item failed
        progress = batch_progress(ws.db, submitted.batch_id)
        show_progress(progress, as_json)
        ctx.exit(0 if progress.passed else 1)
    batch_id, kind, count = submitted.batch_id, submitted.kind, submitted.items
    if as_json:
        emit_json({"batchId": batch_id, "kind": kind, verb: count, "queue": submitted.queue})
    else:
        click.echo(f"batch {batch_id}: {count} {kind} task(s) {verb} on {submitted.queue}")
        click.echo(f"follow it with: snap jobs {batch_id}")


def show_progress(progress: BatchProgress, as_json: bool) -> None:
    from records.wire import batch_progress_json

    if as_json:
        emit_json(batch_progress_json(progress))
    else:
        click.echo(render.batch_progress(progress))


@cli.command(
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("celery_args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def worker(ctx: click.Context, celery_args: tuple[str, ...]) -> None:
    """Start a Celery worker for snap's tasks; options are passed to ``celery worker``.

    For example: snap worker --concurrency 4 --loglevel INFO. Needs SNAP_BROKER_URL.
    """
    from snap.errors import ConfigError

    settings: Settings = ctx.obj
    if settings.broker_url is None:
        raise ConfigError("snap worker needs a broker: set SNAP_BROKER_URL (e.g. redis://…)")
    if not {"--help", "-h"} & set(celery_args):  # celery's help opens nothing
        with workspace(ctx):  # the database and store answer (and SQLite is migrated) first
            pass
    from snap.workers.app import configure

    app = configure(settings)
    quiet = ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    app.worker_main(["worker", "--queues", settings.queue, *quiet, *celery_args])


@cli.command()
@click.argument("batch_id", metavar="[BATCH]", required=False)
@click.option(
    "--resume",
    is_flag=True,
    help="Re-queue the items still pending, running or failed for a transient reason.",
)
@click.option("--wait", is_flag=True, help="Wait until no item is pending or running.")
@json_option
@click.pass_context
def jobs(ctx: click.Context, batch_id: str | None, resume: bool, wait: bool, as_json: bool) -> None:
    """Show the progress of a batch (done / failed / pending), from the database.

    For a re-verification batch, also what its checks found: still found / broke / refetch
    failed, and the first citations that broke. Without BATCH, the 20 most recent batches.
    BATCH may be a unique prefix of 6+ characters. Exit 1 when any item failed or, for a
    re-verification, any citation broke.
    """
    from records.jobs import batch_progress, recent_batches

    if batch_id is None:
        if resume or wait:
            raise click.UsageError("--resume and --wait need a BATCH")
        with workspace(ctx, existing=True) as ws:
            batches = recent_batches(ws.db)
        if as_json:
            from records.wire import batch_list_json

            emit_json(batch_list_json(batches))
        else:
            click.echo(render.batch_list(batches))
        return
    with workspace(ctx, existing=True) as ws:
        if resume:
            from snap.workers.submit import resume as resume_batch

            progress = batch_progress(ws.db, batch_id)
            with in_process_notice(ws, progress.unfinished, progress.kind) as bar:
                submitted = resume_batch(ws, progress.batch_id, progress=bar)
            report_submitted(ctx, ws, submitted, as_json, verb="requeued")
            return
        progress = batch_progress(ws.db, batch_id)
        if wait:
            progress = wait_for(ws, progress)
    show_progress(progress, as_json)
    ctx.exit(0 if progress.passed else 1)


def wait_for(ws: Any, progress: BatchProgress) -> BatchProgress:
    """Poll the database once a second, with a progress bar on a terminal."""
    import time

    from records.jobs import batch_progress

    with progress_counter(progress.total, progress.kind) as bar:
        shown = 0
        while True:
            finished = progress.count(ItemState.DONE) + progress.count(ItemState.FAILED)
            bar.update(finished - shown)
            shown = finished
            if progress.finished:
                return progress
            time.sleep(1.0)
            progress = batch_progress(ws.db, progress.batch_id)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--allow-private",
    is_flag=True,
    default=None,
    help="Server-wide, never per request: " + PRIVATE_HELP,
)
@allow_network_option
@click.option(
    "--request-timeout",
    type=click.FloatRange(min=0, min_open=True, max=24 * 3600),
    default=60.0,
    show_default=True,
    help="Seconds a request may take before it is answered 504.",
)
@click.option(
    "--header-timeout",
    type=click.FloatRange(min=0, min_open=True, max=3600),
    default=10.0,
    show_default=True,
    help="Seconds a request's line and headers may take before the connection is dropped.",
)
@click.option(
    "--max-citations",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Citations one POST /v1/verify may carry (more is answered 413).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes sharing the port (uvicorn's supervisor restarts one that dies).",
)
@click.option(
    "--checkpoint-interval",
    type=click.FloatRange(min=0, max=24 * 3600),
    default=30.0,
    show_default=True,
    help="Seconds between the log's checkpoints (signed, timestamped) after requests that"
    " recorded anything: a burst makes one; one more at shutdown.",
)
@click.option("--access-log", is_flag=True, help="Log every request (uvicorn's access log).")
@click.option("--print-openapi", is_flag=True, help="Print the OpenAPI document and exit.")
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    allow_private: bool | None,
    allow_networks: Any,
    request_timeout: float,
    header_timeout: float,
    max_citations: int,
    workers: int,
    checkpoint_interval: float,
    access_log: bool,
    print_openapi: bool,
) -> None:
    """Serve the HTTP API (verify, captures, snapshots, audit, reverify, metrics).

    Bearer tokens come from SNAP_API_TOKENS (comma-separated); with none set, the server
    listens only on a loopback address and asks for no token.
    """
    from snap.service.app import openapi_document

    if print_openapi:
        emit_json(openapi_document())
        return
    from records.inputs.reader import max_input_bytes
    from snap.service import serving
    from snap.service.app import ServiceConfig, create_app
    from snap.service.auth import check_bind, parse_tokens

    tokens = parse_tokens(os.environ.get("SNAP_API_TOKENS"))
    check_bind(host, tokens)
    settings: Settings = ctx.obj
    if allow_private is not None:
        settings = settings.with_overrides(allow_private=allow_private)
    if allow_networks is not None:
        settings = settings.with_overrides(allow_networks=allow_networks)
    config = ServiceConfig(
        settings, tokens, max_input_bytes(), request_timeout, max_citations, checkpoint_interval
    )
    from records.workspace import Workspace

    opened = Workspace.open(settings)  # a bad store or database is one line, before binding
    how = serving.Listen(
        host.strip("[]"), port, access_log, header_timeout, int(request_timeout) + 1
    )
    if workers == 1:
        serving.run(create_app(config, workspace=opened), how)
        return
    opened.close()  # each worker process opens its own
    import functools

    serving.run_workers(functools.partial(create_app, config), how, workers=workers)


@cli.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for desktop and CLI agents; http for Streamable HTTP at /mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address (http only).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--request-timeout",
    type=click.FloatRange(min=0, min_open=True, max=24 * 3600),
    default=60.0,
    show_default=True,
    help="Seconds an HTTP request may take before it is answered 504.",
)
@click.pass_context
def mcp(ctx: click.Context, transport: str, host: str, port: int, request_timeout: float) -> None:
    """Serve snap's tools to AI agents over MCP (verify_quote, verify_answer, capture, audit,
    show_text).

    Over http, the same bearer tokens (SNAP_API_TOKENS) and limits as snap serve; the
    capture allow-list comes from settings (SNAP_ALLOW_PRIVATE, SNAP_ALLOW_NETWORKS).
    """
    from records.inputs.reader import max_input_bytes
    from records.workspace import Workspace
    from snap.service.auth import check_bind, is_loopback_host, parse_tokens

    tokens = parse_tokens(os.environ.get("SNAP_API_TOKENS")) if transport == "http" else ()
    if transport == "http":
        check_bind(host, tokens)
    try:
        from snap.mcp import build_server, http_app
    except ImportError as error:  # pragma: no cover - the SDK is a dependency
        raise InputError(f"snap mcp needs the MCP SDK: pip install 'mcp' ({error})") from None
    settings: Settings = ctx.obj
    opened = Workspace.open(settings)  # a bad store or database is one line, before serving
    from records.attest.schedule import CheckpointSchedule

    checkpoints = CheckpointSchedule(opened, MCP_CHECKPOINT_INTERVAL)
    try:
        server = build_server(
            opened,
            host=host,
            port=port,
            loopback=is_loopback_host(host),
            checkpoints=checkpoints,
        )
        if transport == "stdio":
            server.run("stdio")
            return
        from snap.service import serving

        app = http_app(server, tokens, max_body=max_input_bytes(), timeout=request_timeout)
        how = serving.Listen(
            host=host.strip("[]"),
            port=port,
            access_log=False,
            header_timeout=10.0,
            graceful_shutdown=int(request_timeout) + 1,
        )
        serving.run(app, how)
    finally:
        checkpoints.close()  # the last checkpoint of what the tools recorded
        opened.close()


MCP_CHECKPOINT_INTERVAL = 30.0  # as snap serve's default --checkpoint-interval

main = cli


def _add_attestation_commands() -> None:
    from snap import cli_attest

    cli.add_command(cli_attest.keys)
    cli.add_command(cli_attest.log_group)
    cli.add_command(cli_attest.attest_command)


_add_attestation_commands()
