"""What the ``snap`` commands share: ``--json`` and its output, the options several commands
take, progress bars, and the workspace a command opens from the settings. Its own module, so
that the command modules (``snap.commands``, which ``snap.cli`` loads) use it without importing
``snap.cli`` back."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from snap.config import Settings
from snap.errors import SnapError, VerifierError, exit_code_of
from snap.paths import InputFile

F = TypeVar("F", bound=Callable[..., Any])


def remember_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    ctx.meta["snap.json"] = value  # meta is shared with the group, which reports errors
    return value


def json_option(function: F) -> F:
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        is_eager=True,  # before path arguments, whose errors it turns into JSON
        callback=remember_json,
        help='Print the result as JSON (an error too, as {"error": …}).',
    )(function)


def emit_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=2, ensure_ascii=False, default=str))


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


ITEMS_PER_WRITE = 500


def emit_json_list(document: dict[str, Any], key: str, items: Iterable[Any]) -> None:
    """``emit_json`` of ``document`` with ``items`` as the list under ``key``, byte for byte,
    but made an item at a time: the JSON of a report of 100,000 results took about four times
    the memory of the whole run, made at once (the list of dicts, then one string of it).

    Each item is indented as ``json.dumps`` nests it, its lines prefixed with its depth (JSON
    strings hold no raw line breaks, so every line break is the layout's)."""
    marker = f"snap-items-{uuid.uuid4().hex}"
    before, after = _dumps({**document, key: marker}).split(json.dumps(marker), 1)
    depth = before[before.rfind("\n") + 1 :]
    outer = depth[: len(depth) - len(depth.lstrip(" "))]
    inner = outer + "  "
    parts = [before]
    written = 0
    for item in items:
        parts.append(("[\n" if written == 0 else ",\n") + inner)
        parts.append(_dumps(item).replace("\n", "\n" + inner))
        written += 1
        if written % ITEMS_PER_WRITE == 0:
            click.echo("".join(parts), nl=False)
            parts = []
    parts.append(f"\n{outer}]" if written else "[]")
    click.echo("".join([*parts, after]))


@contextmanager
def workspace(ctx: click.Context, *, existing: bool = False, **overrides: Any) -> Iterator[Any]:
    from records.workspace import Workspace  # imported late: --help stays fast

    settings: Settings = ctx.obj
    settings = settings.with_overrides(**{k: v for k, v in overrides.items() if v is not None})
    opened = Workspace.open(settings, existing=existing)
    try:
        yield opened
    finally:
        opened.close()


def checkpoint_log(ws: Any) -> None:
    """The end of a command that recorded something is the end of a batch: the log's new size
    and root are signed and stamped (records.attest)."""
    from records.attest.checkpoints import checkpoint_if_grown

    checkpoint_if_grown(ws)


def checkpoint_refusal(ws: Any) -> Exception | None:
    """``checkpoint_log``, with a refusal to sign (a log rewritten behind snap's back:
    ``AttestationFailure``) handed back instead of raised. The command's records are kept
    either way, so it shows what it recorded first and raises the refusal after: the
    human-readable report, then the error line and its exit code. With --json the refusal is
    raised before the report, which keeps standard output one JSON document."""
    from records.attest.errors import AttestationFailure

    try:
        checkpoint_log(ws)
    except AttestationFailure as refusal:
        return refusal
    return None


def raise_if(refusal: Exception | None) -> None:
    """Raise what ``checkpoint_refusal`` handed back, once the command has shown its report."""
    if refusal is not None:
        raise refusal


def progress_counter(total: int, label: str) -> Any:
    """A progress bar on a terminal; silent in pipes, CI and tests."""
    return click.progressbar(
        length=total, label=label, file=sys.stderr, hidden=not sys.stderr.isatty()
    )


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
