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
