"""``snap fetch`` and ``snap reextract``: bytes captured and stored, text extracted again."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from records.vocabulary import BatchKind
from snap import render
from snap.cli_support import (
    PRIVATE_HELP,
    allow_network_option,
    as_url,
    checkpoint_log,
    checkpoint_refusal,
    emit_json,
    enqueue_option,
    error_document,
    json_option,
    parse_since,
    progress_counter,
    raise_if,
    workspace,
)
from snap.commands.batches import start_batch
from snap.errors import exit_code_of
from snap.paths import InputFile

BATCH_SIZE = 100  # records.capture.BATCH_SIZE (not imported: --help loads no records code)


@click.command()
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
    listed = list(dict.fromkeys(listed))  # a target given twice (or also in the file) once
    with workspace(ctx, allow_private=allow_private, **limits) as ws:
        worst = fetch_many(ws, listed, batch_size, as_json)
    ctx.exit(worst)


def fetch_one(ws: Any, target: str, as_json: bool) -> None:
    from records.capture import capture_source
    from records.wire import stored_capture_json

    record = capture_source(ws, target)
    refusal = checkpoint_refusal(ws)
    if as_json:
        raise_if(refusal)
        emit_json(stored_capture_json(record))
    else:
        click.echo(render.snapshot_summary(record))
        raise_if(refusal)
    warn_unstamped(ws, [record])


def warn_unstamped(ws: Any, records: list[Any]) -> None:
    """A time-stamping authority that did not answer fails no capture (each is stored and
    signed), but must not pass unseen: one line on standard error, after the captures. The
    capture's time then rests on snap's clock until a stamped checkpoint of the log covers it."""
    from records.attest.seal import missed_stamp

    reasons = [reason for record in records if (reason := missed_stamp(ws, record))]
    if reasons:
        click.echo(render.unstamped_warning(len(reasons), reasons[0]), err=True)


def fetch_many(ws: Any, targets: list[str], batch_size: int, as_json: bool) -> int:
    """Capture ``targets`` a batch at a time, one line each as its batch is recorded; the
    exit code of the worst failure (0 when every target was stored)."""
    from records.capture import capture_sources
    from records.wire import stored_capture_json
    from snapshotter.errors import shown

    worst = 0
    stored = []
    with progress_counter(len(targets), "capturing") as bar:
        try:
            for outcome in capture_sources(ws, targets, batch_size=batch_size):
                if outcome.record is not None:
                    stored.append(outcome.record)
                    line = stored_capture_json(outcome.record)
                    text = f"stored {shown(outcome.target)} {outcome.record.snapshot_id}"
                else:
                    assert outcome.error is not None
                    worst = max(worst, exit_code_of(outcome.error))
                    line = {"target": outcome.target, **error_document(outcome.error)}
                    text = f"failed {shown(outcome.target)}: {outcome.error.message}"
                click.echo(json.dumps(line, ensure_ascii=False, default=str) if as_json else text)
                bar.update(1)
        finally:
            checkpoint_log(ws)
    warn_unstamped(ws, stored)
    return worst


@click.command()
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
        refusal = checkpoint_refusal(ws)  # the new extractions are log entries too
    if as_json:
        from records.wire import reextracted_json

        raise_if(refusal)
        emit_json(reextracted_json(results))
    else:
        click.echo(render.reextracted(results))
        raise_if(refusal)
