"""``snap worker`` and ``snap jobs``, and how the other commands hand a batch to workers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from records.vocabulary import BatchKind, ItemState
from snap import render
from snap.cli_support import emit_json, json_option, progress_counter, workspace
from snap.config import Settings, settings_of

if TYPE_CHECKING:
    from records.jobs import BatchProgress


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


@click.command(
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


@click.command()
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
