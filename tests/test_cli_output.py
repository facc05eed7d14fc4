"""Output that cannot be written, in real processes as a shell runs them: a pipe whose reader is
gone (``snap fetch … | head -1``) ends the command quietly, exit 141 as SIGPIPE would; a full
disk (``> /dev/full``) is one line and exit 3; never an internal error, never Python's
``Exception ignored`` as it shuts down. What a command recorded before it printed stays
recorded, whole.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest

from tests.snap_cli import run_snap

FULL = Path("/dev/full")
needs_dev_full = pytest.mark.skipif(not FULL.exists(), reason="no /dev/full here")
# ``snap ARGS`` as the console script runs it, with something still written to standard output
# as Python shuts down (an exit hook's, as a library may leave one).
WRITES_AT_EXIT = """
import atexit, sys
atexit.register(lambda: sys.stdout.write("written at exit"))
sys.argv = ["snap", *sys.argv[1:]]
from snap.entry import main
main()
"""


@pytest.fixture
def env(home_env: dict[str, str]) -> dict[str, str]:
    return home_env | {"SNAP_CAPTURE": "http"}


def sources(folder: Path, count: int) -> list[Path]:
    """``count`` local files of different text (each its own snapshot), in the order listed."""
    folder.mkdir()
    paths = [folder / f"source-{n:02}.txt" for n in range(count)]
    for n, path in enumerate(paths):
        path.write_text(f"Source number {n} says something of its own.\n", encoding="utf-8")
    return paths


@contextmanager
def closed_pipe() -> Iterator[int]:
    """The writing end of a pipe whose reader is already gone: the first write fails (EPIPE)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        yield write_end
    finally:
        os.close(write_end)


def snap_process(
    args: Sequence[str],
    env: dict[str, str],
    *,
    stdout: int | IO[Any] = subprocess.PIPE,
    stderr: int | IO[Any] = subprocess.PIPE,
    start: Sequence[str] = ("-m", "snap"),
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *start, *args],
        env=env,
        stdout=stdout,
        stderr=stderr,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("as_json", [[], ["--json"]], ids=["lines", "json"])
def test_a_closed_pipe_ends_a_batch_fetch_quietly_with_what_it_recorded_kept(
    tmp_path: Path, env: dict[str, str], as_json: list[str]
) -> None:
    """The first line is printed once the first batch is recorded: that batch stays recorded,
    its blobs intact and nothing left behind, and no later batch is begun."""
    listed = tmp_path / "targets.txt"
    listed.write_text("".join(f"{path}\n" for path in sources(tmp_path / "pages", 12)))
    with closed_pipe() as stdout:
        done = snap_process(
            ["fetch", *as_json, "--from", str(listed), "--batch-size", "5"], env, stdout=stdout
        )
    assert (done.returncode, done.stderr) == (141, "")
    checked = run_snap(["fsck", "--json"], env)
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert report["snapshotsChecked"] == 5
    assert (report["orphans"], report["tempFiles"]) == ([], [])


@pytest.mark.parametrize("args", [["fsck"], ["--help"], ["--version"]])
def test_a_closed_pipe_ends_a_report_quietly(env: dict[str, str], args: list[str]) -> None:
    with closed_pipe() as stdout:
        done = snap_process(args, env, stdout=stdout)
    assert (done.returncode, done.stderr) == (141, "")


def test_output_left_for_python_s_shutdown_after_a_closed_pipe_is_dropped_quietly(
    env: dict[str, str],
) -> None:
    """Not ``Exception ignored … BrokenPipeError`` (and exit 120) once snap has ended: the
    closed pipe's descriptor is the null device from then on."""
    with closed_pipe() as stdout:
        done = snap_process(["fsck"], env, stdout=stdout, start=("-c", WRITES_AT_EXIT))
    assert (done.returncode, done.stderr) == (141, "")


@needs_dev_full
def test_a_full_disk_is_one_line_and_exit_3_after_the_capture_is_recorded(
    tmp_path: Path, env: dict[str, str]
) -> None:
    (source,) = sources(tmp_path / "pages", 1)
    with FULL.open("w") as full:
        done = snap_process(["fetch", str(source)], env, stdout=full)
    assert done.returncode == 3
    assert done.stderr == "snap: error: cannot write the output: No space left on device\n"
    recorded = run_snap(["audit", "--url", source.as_uri()], env)
    assert recorded.returncode == 0, recorded.stderr


@needs_dev_full
@pytest.mark.parametrize(
    "command",
    [["fsck"], ["fsck", "--json"], ["verify", "{citation}"], ["--help"], ["--version"]],
)
def test_a_full_disk_is_one_line_and_exit_3(
    tmp_path: Path, env: dict[str, str], command: list[str]
) -> None:
    (source,) = sources(tmp_path / "pages", 1)
    citation = tmp_path / "citation.json"
    citation.write_text(json.dumps({"url": source.as_uri(), "quote": "Source number 0 says"}))
    assert run_snap(["fetch", str(source)], env).returncode == 0
    args = [part.format(citation=citation) for part in command]
    with FULL.open("w") as full:
        done = snap_process(args, env, stdout=full)
    assert done.returncode == 3
    assert done.stderr == "snap: error: cannot write the output: No space left on device\n"


@needs_dev_full
def test_standard_error_on_a_full_disk_is_reported_on_standard_output_with_json(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The missing file's message cannot be written; what can be is why not, as --json's
    error document."""
    with FULL.open("w") as full:
        done = snap_process(["verify", "--json", str(tmp_path / "missing.json")], env, stderr=full)
    assert done.returncode == 3
    assert json.loads(done.stdout) == {
        "error": {
            "message": "cannot write standard error: No space left on device",
            "exitCode": 3,
            "type": "OutputError",
        }
    }


def test_a_broken_pipe_that_is_not_the_output_is_still_an_internal_error(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """EPIPE also comes from sockets: only a write to standard output or error is the
    output's failure."""
    import records.fsck

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr(records.fsck, "plan_fsck", broken)
    done = run_snap(["fsck"], env)
    assert done.returncode == 70
    assert done.stderr.startswith("snap: internal error: BrokenPipeError: [Errno 32] Broken pipe")
