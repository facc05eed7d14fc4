"""``snap fsck``, ``snap store`` and ``snap db``: the store and the database kept sound."""

from __future__ import annotations

import click

from snap import render
from snap.cli_support import emit_json, json_option, progress_counter, workspace
from snap.config import Settings


@click.command()
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


@click.group()
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


@click.group()
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
