"""The command line stays honest: every command has help, is in the manual, and answers --json.

The manual is ``docs/`` (the README only starts a newcomer off); ``tests/docs/`` also checks
that each command has a section of its own in ``docs/commands.md``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from snap import __version__
from snap.cli import cli
from tests.docs.manual import manual_text
from tests.snap_cli import subcommands

MANUAL = manual_text()


def all_commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in sorted(subcommands(group).items()):
        full = f"{prefix}{name}"
        if isinstance(command, click.Group):
            found += all_commands(command, f"{full} ")
        else:
            found.append((full, command))
    return found


COMMANDS = all_commands(cli)


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[name for name, _ in COMMANDS])
def test_every_command_has_help_and_is_documented(name: str, command: click.Command) -> None:
    assert command.help, f"snap {name} has no help text"
    assert f"snap {name}" in MANUAL, f"snap {name} is missing from the manual (docs/)"
    result = CliRunner().invoke(cli, [*name.split(), "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output


@pytest.mark.parametrize(
    "name",
    [
        "fetch",
        "verify",
        "audit",
        "reverify",
        "fsck",
        "show",
        "reextract",
        "export",
        "store init",
        "db upgrade",
        "jobs",
        "import",
    ],
)
def test_every_command_that_prints_results_has_json(name: str) -> None:
    command = dict(COMMANDS)[name]
    assert any(
        "--json" in param.opts for param in command.params if isinstance(param, click.Option)
    )


def test_a_snap_error_is_one_line_and_its_exit_code(tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"SNAP_HOME": str(tmp_path)}
    result = runner.invoke(cli, ["verify", str(tmp_path / "missing.json")], env=env)
    assert result.exit_code == 2
    assert result.output.strip() == f"snap: error: {tmp_path / 'missing.json'}: no such file"


def test_a_bad_setting_is_a_configuration_error(tmp_path: Path) -> None:
    env = {"SNAP_HOME": str(tmp_path), "SNAP_MAX_BYTES": "lots"}
    result = CliRunner().invoke(cli, ["fsck"], env=env)
    assert result.exit_code == 2
    assert "SNAP_MAX_BYTES must be a whole number" in result.output
    assert "Traceback" not in result.output


def test_with_json_an_error_is_json_on_stdout_too(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = tmp_path / "missing.json"
    result = runner.invoke(
        cli, ["verify", "--json", str(missing)], env={"SNAP_HOME": str(tmp_path)}
    )
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "error": {"message": f"{missing}: no such file", "exitCode": 2, "type": "InputError"}
    }
    assert result.stderr == f"snap: error: {missing}: no such file\n"
