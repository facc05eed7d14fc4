"""Temporary capture files left by a killed capture are swept; a live capture's never are."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from snap.cli import cli
from snapshotter import fetch as fetch_module
from snapshotter.fetch import FetchOptions, fetch
from snapshotter.tempfiles import (
    STALE_AGE,
    create_locked,
    remove_stale_temp_files,
    stale_temp_files,
)
from tests.http_fixtures import LoopbackServer

OLD = time.time() - STALE_AGE - 60

HOLDER = """
import sys, time
from pathlib import Path
from snapshotter.tempfiles import create_locked
path, handle = create_locked(Path(sys.argv[1]))
handle.write(b"half a download")
handle.flush()
print(path, flush=True)
time.sleep(120)
"""


CUT_SHORT = """
import os, sys, threading
from pathlib import Path
from snapshotter.tempfiles import create_locked
made = threading.Event()

def download() -> None:
    path, handle = create_locked(Path(sys.argv[1]))
    handle.write(b"half a download")
    handle.flush()
    made.set()
    threading.Event().wait()  # a fetch still running when the process ends

threading.Thread(target=download, daemon=True).start()
made.wait()
if sys.argv[2] == "fork":  # a child made by fork ends first, and must leave the file alone
    child = os.fork()
    if child == 0:
        sys.exit(0)
    os.waitpid(child, 0)
    print(len(list(Path(sys.argv[1]).glob("snap-fetch-*"))), flush=True)
sys.exit(130)  # as snap does on Ctrl-C
"""


def cut_short(folder: Path, how: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CUT_SHORT, str(folder), how],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )


def test_a_process_ending_deletes_the_files_its_daemon_threads_were_writing(
    tmp_path: Path,
) -> None:
    ended = cut_short(tmp_path, "exit")
    assert ended.returncode == 130, ended.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_forked_child_ending_leaves_its_parent_s_files(tmp_path: Path) -> None:
    ended = cut_short(tmp_path, "fork")
    assert ended.returncode == 130, ended.stderr
    assert ended.stdout.strip() == "1"  # still there after the child's exit
    assert list(tmp_path.iterdir()) == []  # deleted at the parent's


def hear_ctrl_c() -> None:
    """In the child: SIGINT as a terminal delivers it. A test run started in the background of
    a shell without job control (``cmd &`` in a script) ignores SIGINT, its children inherit
    that, and Python then installs no KeyboardInterrupt handler: Ctrl-C would go unheard."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_snap_fetch_interrupted_leaves_no_body_of_a_fetch_in_flight(
    tmp_path: Path, http_server: LoopbackServer
) -> None:
    """Ctrl-C while a large body streams in on a fetch thread: exit 130, and no ``snap-fetch-*``
    file of it is left for the sweep."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    http_server.route(
        "/slow",
        body=lambda: iter([b"<p>" + b"x" * 64 * 1024] * 400),
        chunk_delay=0.05,
    )
    http_server.route("/page", body=b"<p>a page</p>")
    targets = tmp_path / "targets.txt"
    targets.write_text(f"{http_server.url('/slow')}\n{http_server.url('/page')}\n")
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("SNAP_")},
        "SNAP_HOME": str(tmp_path / "home"),
        "SNAP_ALLOW_PRIVATE": "1",
        "SNAP_CAPTURE": "http",
        "TMPDIR": str(folder),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "snap", "fetch", "--from", str(targets)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=hear_ctrl_c,
    )
    deadline = time.monotonic() + 30
    while not list(folder.glob("snap-fetch-*")) and time.monotonic() < deadline:
        time.sleep(0.02)  # the body passed the in-memory bound: it is in a file now
    assert list(folder.glob("snap-fetch-*")), "the body never reached a file"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert stderr.strip() == "snap: interrupted"
    assert list(folder.glob("snap-fetch-*")) == []


def age(path: Path) -> None:
    os.utime(path, (OLD, OLD))


def test_a_live_capture_s_file_is_never_swept_however_old(tmp_path: Path) -> None:
    path, handle = create_locked(tmp_path)
    age(path)
    assert stale_temp_files(tmp_path) == []
    assert remove_stale_temp_files(tmp_path) == []
    assert path.exists()
    handle.close()
    assert stale_temp_files(tmp_path) == [path]


def test_a_new_unlocked_file_is_not_swept(tmp_path: Path) -> None:
    path, handle = create_locked(tmp_path)
    handle.close()
    assert stale_temp_files(tmp_path) == []  # younger than STALE_AGE
    assert stale_temp_files(tmp_path, min_age=0) == [path]


def test_other_files_and_links_are_left_alone(tmp_path: Path) -> None:
    other = tmp_path / "not-snap"
    other.write_bytes(b"x")
    link = tmp_path / "snap-fetch-link"
    link.symlink_to(other)
    age(other)
    assert stale_temp_files(tmp_path, min_age=0) == []


def test_the_file_of_a_capture_killed_with_sigkill_is_swept(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert holder.stdout is not None
    path = Path(holder.stdout.readline().strip())
    age(path)
    assert stale_temp_files(tmp_path) == []  # locked by a live process
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    holder.stdout.close()
    assert path.exists()  # kill -9 left it behind ...
    assert remove_stale_temp_files(tmp_path) == [path]  # ... and the next run removes it
    assert not path.exists()


def test_the_next_fetch_sweeps_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch_module, "_swept", set())
    path, handle = create_locked(tmp_path)
    handle.close()
    age(path)
    source = tmp_path / "source.txt"
    source.write_text("text")
    options = FetchOptions(max_bytes=1000, timeout=1.0, max_redirects=0)
    fetch(str(source), options, workdir=tmp_path).cleanup()
    assert not path.exists()
    assert [p for p in tmp_path.iterdir() if p.name.startswith("snap-fetch-")] == []


def test_fsck_lists_and_repair_removes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    path, handle = create_locked(folder)
    handle.close()
    age(path)
    env = {"SNAP_HOME": str(tmp_path / "home"), "SNAP_STORE": None, "SNAP_DATABASE_URL": None}
    source = tmp_path / "page.txt"
    source.write_text("a page")
    monkeypatch.setattr(fetch_module, "_swept", {None})  # as if this process had swept already
    assert CliRunner().invoke(cli, ["fetch", str(source)], env=env).exit_code == 0
    listed = CliRunner().invoke(cli, ["fsck", "--json"], env=env)
    assert listed.exit_code == 0, listed.output
    assert str(path) in listed.stdout
    assert path.exists()
    repaired = CliRunner().invoke(cli, ["fsck", "--repair"], env=env)
    assert repaired.exit_code == 0
    assert f"temporary file removed: {path}" in repaired.stdout
    assert not path.exists()
