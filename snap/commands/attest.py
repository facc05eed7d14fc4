"""Commands of attestation: ``snap keys``, ``snap log`` and ``snap attest`` (records.attest).

Each parses, makes one library call and prints; ``snap.cli`` loads them when they are run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from snap.cli_support import emit_json, json_option, workspace
from snap.config import Settings
from snap.paths import OutputFolder

if TYPE_CHECKING:
    from records.attest.signing import SigningKey


@click.group()
def keys() -> None:
    """Manage the key that signs manifests and checkpoints."""


@keys.command("init")
@click.option(
    "--type",
    "key_type",
    type=click.Choice(["ecdsa-p256", "ed25519"]),
    default="ecdsa-p256",
    show_default=True,
    help="ECDSA P-256 also signs WACZ packages; Ed25519 only manifests and checkpoints.",
)
@json_option
@click.pass_context
def keys_init(ctx: click.Context, key_type: str, as_json: bool) -> None:
    """Generate the signing key (SNAP_SIGNING_KEY, else SNAP_HOME/signing-key.pem); an
    existing key is never replaced. Prints the public key."""
    from records.attest.seal import signing_key_path
    from records.attest.signing import KeyType, write_new_key

    settings: Settings = ctx.obj
    path = signing_key_path(settings)
    _print_key(path, write_new_key(path, KeyType(key_type)), as_json)


@keys.command("show")
@json_option
@click.pass_context
def keys_show(ctx: click.Context, as_json: bool) -> None:
    """Print the public key and key id of the signing key."""
    from records.attest.seal import signing_key_path
    from records.attest.signing import load_key

    settings: Settings = ctx.obj
    path = signing_key_path(settings)
    _print_key(path, load_key(path), as_json)


def _print_key(path: Path, key: SigningKey, as_json: bool) -> None:
    if as_json:
        from records.wire_attest import signing_key_json

        emit_json(signing_key_json(path, key))
        return
    click.echo(f"key    {path}\ntype   {key.key_type.value}\nkey id {key.key_id}")
    click.echo(key.public_pem(), nl=False)


@click.group("log")
def log_group() -> None:
    """The verifiable log of captures, extractions and verifications."""


@log_group.command("checkpoint")
@json_option
@click.pass_context
def log_checkpoint(ctx: click.Context, as_json: bool) -> None:
    """Sign and timestamp the log's size and root now (nothing new if nothing was added)."""
    from records.attest.checkpoints import make_checkpoint

    with workspace(ctx, existing=True) as ws:
        result = make_checkpoint(ws)
    if as_json:
        from records.wire_attest import checkpoint_result_json

        emit_json(checkpoint_result_json(result))
        return
    state = "checkpoint" if result.created else "unchanged since checkpoint"
    click.echo(f"{state} {result.id}: size {result.tree_size} root {result.root_hash}")
    click.echo(
        f"  signature {result.signature.get('state')}  timestamp"
        f" {result.timestamp.get('genTime') or result.timestamp.get('reason')}"
    )


@log_group.command("verify")
@json_option
@click.pass_context
def log_verify(ctx: click.Context, as_json: bool) -> None:
    """Recompute the log from the database and check every checkpoint; exit 1 on any row
    changed, removed or inserted behind the log's back."""
    from records.attest.log_checks import verify_log

    with workspace(ctx, existing=True) as ws:
        report = verify_log(ws)
    if as_json:
        from records.wire_attest import log_report_json

        emit_json(log_report_json(report))
    else:
        for problem in report.problems:
            where = problem.position
            click.echo(f"✗ {'' if where is None else f'position {where}: '}{problem.problem}")
        verdict = "intact" if report.ok else f"{len(report.problems)} problem(s)"
        click.echo(f"log of {report.entries} entries, {report.checkpoints} checkpoints: {verdict}")
    ctx.exit(0 if report.ok else 1)


@log_group.command("consistency")
@click.argument("old", metavar="FROM", type=click.IntRange(min=1))
@click.argument("new", metavar="[TO]", type=click.IntRange(min=1), required=False)
@click.option(
    "--out",
    "out",
    type=OutputFolder(),
    help="Also write the proof, both checkpoints (signature, key, token), the TSA chain and"
    " check_consistency.py (standard library).",
)
@click.option(
    "--force", is_flag=True, help="Replace files in that folder that hold something else."
)
@json_option
@click.pass_context
def log_consistency(
    ctx: click.Context, old: int, new: int | None, out: Path | None, force: bool, as_json: bool
) -> None:
    """The RFC 9162 proof that the log of checkpoint TO (default: the newest) extends the log
    of checkpoint FROM, for someone who holds the two checkpoints and not the log. Exit 1 when
    it does not, or a checkpoint's signature or token does not check."""
    from records.attest.attest import consistency_commands, consistency_files, tsa_chain_pem
    from records.attest.log_checks import consistency_between
    from records.output_files import write_files_into
    from records.wire_attest import consistency_json

    refuse_force_without_out(out, force)
    with workspace(ctx, existing=True) as ws:
        result = consistency_between(ws, old, new)
        chain = tsa_chain_pem(ws) if out is not None else None
    document = consistency_json(result)
    if out is not None:
        write_files_into(out, consistency_files(document, chain), force=force)
    if as_json:
        emit_json(document)
    else:
        first, last = result.old, result.new
        verdict = "extends" if result.holds else "does NOT extend"
        click.echo(
            f"checkpoint {last['id']} (size {last['treeSize']}) {verdict} checkpoint"
            f" {first['id']} (size {first['treeSize']}): {len(result.proof)} proof nodes"
        )
        for problem in result.problems:
            click.echo(f"✗ {problem}")
        if out is not None:
            for command in consistency_commands(document):
                click.echo(f"    $ {command}")
    ctx.exit(0 if result.ok else 1)


def refuse_force_without_out(out: Path | None, force: bool) -> None:
    if force and out is None:
        raise click.UsageError("--force goes with --out FOLDER")


@click.command("attest")
@click.argument("given", metavar="ID")
@click.option(
    "--out",
    "out",
    type=OutputFolder(),
    help="Also write each piece, and the TSA chain, as files the printed commands check.",
)
@click.option(
    "--force", is_flag=True, help="Replace files in that folder that hold something else."
)
@json_option
@click.pass_context
def attest_command(
    ctx: click.Context, given: str, out: Path | None, force: bool, as_json: bool
) -> None:
    """Everything the other side needs to check a citation, snapshot or answer (ID) without
    snap: manifests, signatures and public key, RFC 3161 tokens, inclusion proofs and their
    checkpoint, with the openssl command that checks each. Exit 1 when one does not check."""
    from records.attest.attest import attest, attestation_files, tsa_chain_pem
    from records.output_files import write_files_into

    refuse_force_without_out(out, force)
    with workspace(ctx, existing=True) as ws:
        result = attest(ws, given)
        chain = tsa_chain_pem(ws) if out is not None else None
    if out is not None:
        write_files_into(out, attestation_files(result, chain), force=force)
    if as_json:
        from records.wire_attest import attestation_json

        emit_json(attestation_json(result))
    else:
        for capture in result.captures:
            click.echo(f"capture {capture.capture_id}")
            if capture.manifest is None:
                click.echo(f"  {capture.note}")
                continue
            signature, stamp = capture.signature, capture.timestamp
            click.echo(f"  manifest  {capture.manifest.sha256}")
            click.echo(
                f"  signature {signature.get('state')}"
                f" {signature.get('keyId') or signature.get('reason')}"
            )
            click.echo(f"  timestamp {stamp.get('genTime') or stamp.get('reason')}")
            proof = capture.proof or {}
            click.echo(
                f"  log       position {proof.get('position')}, proved against checkpoint"
                f" {(proof.get('checkpoint') or {}).get('id', 'none yet')}"
            )
            for command in capture.check:
                click.echo(f"    $ {command}")
        for check in result.verifications:
            proof = check.proof or {}
            click.echo(
                f"verification {check.id} {check.status}: log position {proof.get('position')}"
            )
            for command in check.check:
                click.echo(f"    $ {command}")
        for problem in result.problems:
            click.echo(f"✗ {problem}")
    ctx.exit(0 if result.ok else 1)
