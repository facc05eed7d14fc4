"""What every ``snap`` command shares: ``--json`` and its output, and the workspace a command
opens from the settings. Its own module, so that command modules beside ``snap.cli`` (which
adds them to its group) use it without importing ``snap.cli`` back."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
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
