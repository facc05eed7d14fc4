"""What every ``snap`` command shares: ``--json`` and its output, and the workspace a command
opens from the settings. Its own module, so that command modules beside ``snap.cli`` (which
adds them to its group) use it without importing ``snap.cli`` back."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from snap.config import Settings

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
