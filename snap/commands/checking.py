"""``snap verify``, ``snap audit`` and ``snap reverify``: citations checked, and the record of
what was checked."""

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
    checkpoint_refusal,
    documents_option,
    emit_json,
    emit_json_list,
    enqueue_option,
    json_option,
    parse_since,
    progress_counter,
    raise_if,
    workspace,
)
from snap.commands.batches import in_process_notice, report_submitted
from snap.errors import InputError
from snap.paths import InputFile, OutputFile


@click.command()
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
@click.option("--force", is_flag=True, help="With --emit: replace the file if it exists.")
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
    force: bool,
    documents_path: Path | None,
    as_json: bool,
) -> None:
    """Check the citations in FILE against their stored snapshots.

    Exit 0 when every quote is found, 1 when any is not, 2 when FILE cannot be used.
    """
    from records.inputs import load_document_map, load_verify_input
    from records.verify import verify_citations

    if emit_path is None and force:
        raise click.UsageError("--force goes with --emit FILE")
    given = load_verify_input(file, load_document_map(documents_path))
    if emit_path is not None:
        check_can_write(emit_path, file, force=force)
    # Without --fetch nothing can be found in a home that does not exist: a mistyped SNAP_HOME
    # is said so, not answered with every citation "never captured" from a new empty database.
    opened = workspace(
        ctx,
        existing=not fetch_missing,
        allow_private=allow_private,
        allow_networks=allow_networks,
    )
    with opened as ws:
        report = verify_citations(ws, given, fetch_missing=fetch_missing)
        refusal = checkpoint_refusal(ws)
        if emit_path is not None and refusal is None:
            from records.emit import emit_verified  # the ORM's models: only --emit reads them

            emitted = emit_verified(ws, report.results)
            if emitted["citations"]:
                write_json_file(emit_path, emitted, force=force)
                written = f"wrote {len(emitted['citations'])} verified citation(s) of"
                click.echo(f"{written} {len(report.results)} to {emit_path}", err=True)
            else:  # a file of no citation is one verify refuses to read: none is written
                click.echo(f"no citation was verified, so {emit_path} was not written", err=True)
    if as_json:
        from records.wire import verify_report_json  # the JSON shapes: only --json writes them

        raise_if(refusal)
        emit_json(verify_report_json(report))
    else:
        click.echo(render.verify_report(report))
        raise_if(refusal)
    ctx.exit(0 if report.passed else 1)


def check_can_write(path: Path, given: Path, *, force: bool) -> None:
    """Before any check is recorded: an --emit target that cannot be written is an input error,
    and so is the input file itself (it would be overwritten, --force or not) and, without
    --force, any other file that is there."""
    from records.output_files import check_output

    if str(given) != "-" and path.resolve() == given.resolve():
        raise InputError(f"{path}: --emit would overwrite the input file")
    check_output(path, force=force)


def write_json_file(path: Path, document: Any, *, force: bool) -> None:
    from records.output_files import write_file

    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    write_file(path, text.encode("utf-8"), force=force)


@click.command()
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


@click.command()
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
    from records.wire import reverified_result_json, reverify_report_json_besides_results
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
        # one bar over both phases: the sources captured again (--refetch), then the checks
        with progress_counter(plan.refetches + plan.size, "re-verifying") as bar:
            checked, captured = [0], [0]

            def progress(count: int) -> None:
                checked[0] += count
                bar.update(count)

            def refetched(count: int) -> None:
                captured[0] += count
                bar.update(count)

            try:
                report = submit_reverify(ws, plan, progress=progress, refetched=refetched)
            except KeyboardInterrupt:
                if checked[0]:  # the run recorded what it checked: --run goes on from there
                    line = render.interrupted_run(plan.run_id, request.url, request.since)
                    click.echo(line, err=True)
                elif captured[0]:
                    click.echo(render.interrupted_refetch(captured[0]), err=True)
                raise
            refusal = checkpoint_refusal(ws)
    if as_json:  # as emit_json(reverify_report_json(report)), a result at a time
        raise_if(refusal)
        results = (reverified_result_json(result, report) for result in report.results)
        besides = reverify_report_json_besides_results(report)
        emit_json_list({"results": [], **besides}, "results", results)
    else:
        click.echo(render.reverify_report(report))
        raise_if(refusal)
    ctx.exit(0 if report.passed else 1)
