"""A snapshot id typed to any command: one that cannot name a snapshot (too few hex digits, not
hex) is unusable input, exit 2, as an ambiguous prefix is; a well-formed one that names no
snapshot is "nothing recorded", exit 1, as ``snap audit`` has always said it (records.ids)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.snap_cli import run_snap

Command = Callable[[str, Path], list[str]]
COMMANDS: dict[str, Command] = {
    "show": lambda given, _tmp: ["show", given],
    "show --raw": lambda given, tmp: ["show", "--raw", given, "-o", str(tmp / "raw.out")],
    "audit --snapshot": lambda given, _tmp: ["audit", "--snapshot", given],
    "export --snapshot": lambda given, tmp: [
        "export",
        "--format",
        "html",
        "-o",
        str(tmp / "evidence.html"),
        "--snapshot",
        given,
    ],
    "reextract --snapshot": lambda given, _tmp: ["reextract", "--snapshot", given],
    "attest": lambda given, _tmp: ["attest", given],
}
UNUSABLE = ["sha256:35e1", "sha256:zzzz", "sha256:4ec78e7", "sha256:4ec78e7x9"]
UNKNOWN = "sha256:deadbeefdeadbeef"


@pytest.fixture
def env(home_env: dict[str, str]) -> dict[str, str]:
    return home_env


def error_line(args: list[str], env: dict[str, str], code: int) -> str:
    done = run_snap(args, env)
    assert done.returncode == code, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("given", UNUSABLE)
@pytest.mark.parametrize("command", COMMANDS)
def test_an_id_that_cannot_name_a_snapshot_is_unusable_input(
    env: dict[str, str], tmp_path: Path, command: str, given: str
) -> None:
    line = error_line(COMMANDS[command](given, tmp_path), env, 2)
    assert line == (
        f"snap: error: {given!r} is not a snapshot id: give its id, or at least 8 of its hex digits"
    )
    assert not (tmp_path / "raw.out").exists()
    assert not (tmp_path / "evidence.html").exists()
    line = error_line(COMMANDS[command](UNKNOWN, tmp_path), env, 1)
    assert line == f"snap: error: no snapshot with an id starting {UNKNOWN!r} is recorded"


def test_show_takes_a_short_bare_id_as_unusable_too(env: dict[str, str]) -> None:
    line = error_line(["show", "35e1"], env, 2)
    assert line.startswith("snap: error: '35e1' is not a snapshot id: give its id")
