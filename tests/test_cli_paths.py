"""Every path argument of every command, given a folder, a FIFO, a missing file, a dangling
symbolic link or an unreadable file: one line naming the path on stderr, exit 2, never an
internal error (exit 70), never a hang.

Path arguments are found by walking the click command tree, so a new command or option is
covered without being listed here; every ``click.Path`` must be snap's checked ``InputFile`` or
``OutputFile``. Commands run in-process (click's CliRunner), except the unreadable case when
the tests run as root: root opens a mode-000 file, so that case runs the command in a child
process without capabilities (``setpriv``), to which file permissions apply.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from snap.cli import cli
from snap.paths import InputFile, OutputFile, OutputFolder
from tests.snap_cli import subcommands

# Arguments typed as text because they also take a URL, and the flags with which they are paths.
TEXT_PATHS: dict[tuple[tuple[str, ...], str], list[tuple[str, ...]]] = {
    (("fetch",), "targets"): [(), ("--enqueue",)],
}
SETPRIV = shutil.which("setpriv")
GOOD_INPUT = '{"url": "http://127.0.0.1:9/page", "quote": "a quoted sentence"}\n'


@dataclass(frozen=True)
class PathArgument:
    command: tuple[str, ...]  # e.g. ("verify",) or ("store", "relocate")
    param: click.Parameter
    writes: bool
    extra: tuple[str, ...] = ()  # flags that make a text argument a path

    @property
    def id(self) -> str:
        name = self.param.opts[0] if isinstance(self.param, click.Option) else self.param.name
        return " ".join([*self.command, *self.extra, str(name)])


def walk(
    group: click.Group, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in sorted(subcommands(group).items()):
        if isinstance(command, click.Group):
            yield from walk(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def path_arguments() -> list[PathArgument]:
    found = []
    for names, command in walk(cli):
        for param in command.params:
            if isinstance(param.type, click.Path):
                writes = isinstance(param.type, (OutputFile, OutputFolder))
                found.append(PathArgument(names, param, writes))
            for extra in TEXT_PATHS.get((names, str(param.name)), []):
                found.append(PathArgument(names, param, False, extra))
    return found


def test_every_path_parameter_is_checked() -> None:
    """A new ``click.Path`` must use the checked types, or it would be opened unchecked."""
    unchecked = [a.id for a in path_arguments() if a.param.type.__class__ is click.Path]
    assert unchecked == []
    assert {a.id for a in path_arguments()} >= {
        "verify file",
        "verify --emit",
        "verify --documents",
        "export file",
        "export -o",
        "export --documents",
        "import path",
        "fetch targets",
        "fetch --enqueue targets",
        "fetch --from",
    }


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with a migrated database, so commands that need one get to their arguments."""
    root = tmp_path_factory.mktemp("paths")
    env = {"SNAP_HOME": str(root / "home")}
    result = CliRunner().invoke(cli, ["db", "upgrade"], env=env)
    assert result.exit_code == 0, result.output
    (root / "good.json").write_text(GOOD_INPUT, encoding="utf-8")
    return root


def invocation(argument: PathArgument, bad: str, home: Path) -> list[str]:
    """The command with ``bad`` for the argument under test, and usable values for the rest."""
    args: list[str] = [*argument.command, *argument.extra]
    for param in argument.command and command_of(argument.command).params:
        if param is argument.param:
            args += [bad] if isinstance(param, click.Argument) else [param.opts[0], bad]
            continue
        if not param.required:
            continue
        value = usable_value(param, home)
        args += [value] if isinstance(param, click.Argument) else [param.opts[0], value]
    return args


def command_of(names: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in names:
        assert isinstance(command, click.Group)
        command = subcommands(command)[name]
    return command


def usable_value(param: click.Parameter, home: Path) -> str:
    if isinstance(param.type, click.Choice):
        return str(param.type.choices[0])
    if isinstance(param.type, OutputFile):
        return str(home / "out.file")
    if isinstance(param.type, InputFile):
        return str(home / "good.json")
    if isinstance(param.type, click.IntRange):
        return str(param.type.min or 1)  # a checkpoint: the path is refused before it is read
    if isinstance(param, click.Argument) and isinstance(param.type, click.types.StringParamType):
        return "sha256:" + "0" * 64  # an id: the path is refused before any id is looked up
    raise AssertionError(f"no usable value known for the required {param.name}: add one here")


def bad_inputs(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    (folder / "a-folder").mkdir()
    os.mkfifo(folder / "a-fifo")
    (folder / "dangling").symlink_to(folder / "gone")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "a-socket"))
    listener.close()
    return {
        "folder": folder / "a-folder",
        "fifo": folder / "a-fifo",
        "socket": folder / "a-socket",
        "missing": folder / "no-such-file",
        "dangling symlink": folder / "dangling",
    }


def bad_output_folders(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    (folder / "a-file").write_text("", encoding="utf-8")
    os.mkfifo(folder / "a-fifo")
    return {
        "file": folder / "a-file",
        "fifo": folder / "a-fifo",
        "missing folder": folder / "no-such-folder" / "out",
    }


def bad_outputs(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    (folder / "a-folder").mkdir()
    os.mkfifo(folder / "a-fifo")
    return {
        "folder": folder / "a-folder",
        "fifo": folder / "a-fifo",
        "missing folder": folder / "no-such-folder" / "out.file",
    }


def assert_one_line_exit_2(exit_code: int, stderr: str, bad: Path) -> None:
    lines = stderr.splitlines()
    assert exit_code == 2, stderr
    assert len(lines) == 1, stderr
    assert lines[0].startswith("snap: error: "), stderr
    assert "internal error" not in stderr
    assert str(bad) in lines[0]


@pytest.mark.timeout(60)  # a FIFO opened for reading or writing would block here forever
@pytest.mark.parametrize("argument", path_arguments(), ids=lambda a: a.id)
def test_a_bad_path_is_one_line_and_exit_2(
    argument: PathArgument, home: Path, tmp_path: Path
) -> None:
    if isinstance(argument.param.type, OutputFolder):
        cases = bad_output_folders(tmp_path / "bad")
    elif argument.writes:
        cases = bad_outputs(tmp_path / "bad")
    else:
        cases = bad_inputs(tmp_path / "bad")
    env = {"SNAP_HOME": str(home / "home"), "SNAP_BROKER_URL": ""}
    for case, bad in cases.items():
        result = CliRunner().invoke(cli, invocation(argument, str(bad), home), env=env)
        assert result.exception is None or isinstance(result.exception, SystemExit), case
        assert_one_line_exit_2(result.exit_code, result.stderr, bad)


def run_without_privileges(
    args: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """The command as root without capabilities (setpriv clears the bounding set, so the child
    has none after exec): file permissions then apply to it as to any other user."""
    return subprocess.run(
        [SETPRIV, "--bounding-set=-all", "--inh-caps=-all", sys.executable, "-m", "snap", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("argument", path_arguments(), ids=lambda a: a.id)
def test_an_unreadable_or_unwritable_path_is_one_line_and_exit_2(
    argument: PathArgument, home: Path, tmp_path: Path
) -> None:
    if argument.writes:
        bad = tmp_path / "closed" / "out.file"
        bad.parent.mkdir()
        bad.parent.chmod(0o555)
    else:
        bad = tmp_path / "secret.json"
        bad.write_text(GOOD_INPUT, encoding="utf-8")
        bad.chmod(0o000)
    args = invocation(argument, str(bad), home)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SNAP_")},
        "SNAP_HOME": str(home / "home"),
    }
    if os.geteuid() != 0:
        result = CliRunner().invoke(cli, args, env=env)
        assert_one_line_exit_2(result.exit_code, result.stderr, bad)
        return
    if SETPRIV is None:
        pytest.skip("root reads and writes any file, and setpriv is missing to drop that power")
    done = run_without_privileges(args, env)
    assert_one_line_exit_2(done.returncode, done.stderr, bad)
