"""Running ``snap`` from a test: in this process by default, in a real process when that is the
point of the test.

Starting ``python -m snap`` costs about half a second of CPU (the interpreter, click,
SQLAlchemy and the layers' imports) before the command does anything, and many tests run
several commands. ``run_snap`` runs the same click command in this process (click's
``CliRunner``) with exactly the environment given, and answers like ``subprocess.run``: exit
code, stdout and stderr, so a test reads the same either way. An exception that escapes the
command (a traceback in a real process) comes back as exit code 1 with the traceback in
stderr, where the tests' ``"Traceback" not in stderr`` checks look for it.

``run_snap_process`` starts the installed entry point for the tests that are about a real
process: the ``snap`` script, exit codes and stderr as a shell sees them, signals, several
processes at once, and anything that must outlive or be killed apart from the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import click
from click.testing import CliRunner

from snap.cli import cli


def subcommands(group: click.Group) -> dict[str, click.Command]:
    """A group's commands by name, as click resolves them: ``snap``'s own are loaded on first
    use (``snap.cli.COMMANDS``), so its ``commands`` dict is empty."""
    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


@contextmanager
def environment(env: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` is exactly ``env`` inside the block (as a child process's would be) and
    exactly what it was afterwards, whatever the command set or removed meanwhile."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_snap(
    args: Sequence[str], env: Mapping[str, str], *, input: str | bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """``snap ARGS`` in this process, with ``env`` as the whole environment."""
    runner = CliRunner()
    with environment(env):
        result = runner.invoke(cli, list(args), input=input, prog_name="snap")
    stderr = result.stderr
    code = result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        stderr += "".join(traceback.format_exception(*result.exc_info))
        code = 1
    return subprocess.CompletedProcess(["snap", *args], code, result.stdout, stderr)


def run_snap_process(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``python -m snap ARGS`` in a child process, as a user's shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "snap", *args],
        env=dict(env),
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
