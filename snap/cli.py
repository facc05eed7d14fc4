"""The ``snap`` command line: each command parses, makes one library call, and prints.

Errors are turned into one line and an exit code in exactly one place, ``SnapGroup.invoke``,
and so is a failure to write the output (``snap.output``); what other packages log is printed
only with SNAP_DEBUG (``LastResortLog``).
The commands live in ``snap.commands``, one module per family, and each is imported only when
it is run (or listed, by ``--help`` and shell completion): a start builds the click options of
the one command it runs, not those of all eighteen (``COMMANDS``).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Container, Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any, Final, NoReturn

import click

from snap import __version__
from snap.cli_support import emit_json, error_document
from snap.config import Settings
from snap.errors import SnapError, VerifierError, exit_code_of
from snap.output import (
    BROKEN_PIPE_EXIT,
    StreamName,
    WatchedOutput,
    output_error,
    watched_output,
)

INTERNAL_ERROR_EXIT = 70

# Each command's module and name in it: loaded when the command is run, listed or completed.
COMMANDS: Final[Mapping[str, str]] = {
    "attest": "snap.commands.attest:attest_command",
    "audit": "snap.commands.checking:audit",
    "db": "snap.commands.admin:db",
    "export": "snap.commands.reading:export",
    "fetch": "snap.commands.capture:fetch",
    "fsck": "snap.commands.admin:fsck",
    "import": "snap.commands.reading:import_",
    "jobs": "snap.commands.batches:jobs",
    "keys": "snap.commands.attest:keys",
    "log": "snap.commands.attest:log_group",
    "mcp": "snap.commands.serving:mcp",
    "reextract": "snap.commands.capture:reextract",
    "reverify": "snap.commands.checking:reverify",
    "serve": "snap.commands.serving:serve",
    "show": "snap.commands.reading:show",
    "store": "snap.commands.admin:store",
    "verify": "snap.commands.checking:verify",
    "worker": "snap.commands.batches:worker",
}


def usage_error(error: click.UsageError) -> NoReturn:
    """A usage mistake is one line too, with where to look, and exit code 2."""
    where = error.ctx.command_path if error.ctx else "snap"
    click.echo(f"snap: error: {error.format_message()} (see: {where} --help)", err=True)
    sys.exit(2)


def report_error(
    ctx: click.Context, error: SnapError | VerifierError, *, unwritable: Container[str] = ()
) -> None:
    """``snap: error: <one line>`` on standard error, and with --json the error document on
    standard output too; a stream in ``unwritable`` is skipped."""
    if "stderr" not in unwritable:
        click.echo(f"snap: error: {error.message}", err=True)
    if ctx.meta.get("snap.json") and "stdout" not in unwritable:
        emit_json(error_document(error))


def output_failed(
    ctx: click.Context, output: WatchedOutput, stream: StreamName, error: OSError
) -> NoReturn:
    """The end of a command whose output could not be written; what it had done is kept (each
    command prints what it has recorded, never before).

    A pipe whose reader is gone (``snap fetch … | head -1``) ends the command quietly, as it
    ends a Unix tool, with the exit code of a process SIGPIPE ended; any other failure (a full
    disk, an I/O error) is one line on whichever stream still works, an ``OutputError``."""
    output.discard_failed()
    if isinstance(error, BrokenPipeError):
        ctx.exit(BROKEN_PIPE_EXIT)
    failure = output_error(stream, error)
    with suppress(OSError):  # the other stream may fail too: nothing is left to tell it on
        report_error(ctx, failure, unwritable=output.failures)
    ctx.exit(exit_code_of(failure))


@contextmanager
def output_failures_reported(ctx: click.Context) -> Iterator[WatchedOutput]:
    """The standard streams watched inside the block: a write to them that fails (printing
    the output, or reporting an error) ends the command through ``output_failed``."""
    with watched_output() as output:
        try:
            yield output
        except OSError as error:
            stream = output.stream_failed_by(error)
            if stream is None:
                raise
            output_failed(ctx, output, stream, error)


def is_shown(record: logging.LogRecord) -> bool:
    """Whether ``LastResortLog`` prints the record: snap's own, or any with SNAP_DEBUG."""
    own = record.name == "snap" or record.name.startswith("snap.")
    return own or bool(os.environ.get("SNAP_DEBUG"))


class LastResortLog(logging.Handler):
    """Where a log record goes when nothing has configured logging (``logging.lastResort``),
    for the ``snap`` command.

    Python's own prints any package's WARNING and above, traceback and all, on standard error.
    snap says what went wrong in one line of its own, so another package's records are details
    for SNAP_DEBUG: SQLAlchemy's pool, when Ctrl-C lands while it closes a connection, logs
    ``Exception closing connection …`` with a traceback before ``snap: interrupted``. snap's
    own loggers' records (``snap.*``) are printed as before. A logger that has a handler never
    gets here: uvicorn's own, and every one once Celery or the MCP SDK has set up logging."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.addFilter(is_shown)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # as logging's handlers do: logging must not end the program
            self.handleError(record)


LAST_RESORT_LOG = LastResortLog()


class SnapGroup(click.Group):
    """Maps every SnapError to ``snap: error: <one line>`` and its exit code, and output that
    cannot be written to ``output_failed``; never a traceback.

    Its commands are ``COMMANDS``, imported on first use (click's documented pattern for lazy
    subcommands: ``list_commands`` and ``get_command``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        module, _, name = where.partition(":")
        command = getattr(importlib.import_module(module), name)
        if not isinstance(command, click.Command):  # pragma: no cover - the tests load each
            raise TypeError(f"{where} is not a click command")
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        with output_failures_reported(ctx):  # snap --help prints here
            try:
                return super().parse_args(ctx, args)
            except click.exceptions.NoArgsIsHelpError:
                raise
            except click.UsageError as error:
                usage_error(error)

    def invoke(self, ctx: click.Context) -> Any:
        with output_failures_reported(ctx) as output:
            return self.invoke_reporting_errors(ctx, output)

    def invoke_reporting_errors(self, ctx: click.Context, output: WatchedOutput) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as error:
            usage_error(error)
        except (SnapError, VerifierError) as error:
            report_error(ctx, error)
            ctx.exit(exit_code_of(error))
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("snap: interrupted", err=True)
            ctx.exit(130)
        except Exception as error:
            if output.stream_failed_by(error) is not None or os.environ.get("SNAP_DEBUG"):
                raise
            summary = " ".join(f"{type(error).__name__}: {error}".split())[:300]
            click.echo(
                f"snap: internal error: {summary} (SNAP_DEBUG=1 shows the traceback)", err=True
            )
            ctx.exit(INTERNAL_ERROR_EXIT)


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
    logging.lastResort = LAST_RESORT_LOG
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings are ours to report
    settings = Settings.from_env()
    overrides = {"store_url": store_url, "database_url": database_url}
    ctx.obj = settings.with_overrides(**{k: v for k, v in overrides.items() if v})


main = cli
