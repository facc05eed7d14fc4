"""``snap show`` never sends binary bytes to a terminal, where they would be taken as control
sequences: a PNG screenshot, or raw bytes holding a NUL, need ``-o FILE`` or a redirect (as
curl refuses). Text still prints, and a pipe still gets every byte."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.snap_cli import run_snap

BINARY = b"GIF89a\0\0\1\2 not a picture, but bytes no terminal should be sent"


@pytest.fixture
def env(home_env: dict[str, str]) -> dict[str, str]:
    return home_env | {"SNAP_CAPTURE": "http"}


def stored(env: dict[str, str], path: Path, data: bytes) -> str:
    path.write_bytes(data)
    done = run_snap(["fetch", str(path), "--json"], env)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["snapshotId"])


def on_a_terminal(env: dict[str, str], *args: str) -> tuple[int, bytes, str]:
    """snap with standard output a terminal (a pseudo-terminal's other end is read here)."""
    reader, terminal = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "snap", *args],
            env=os.environ | env,
            stdout=terminal,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )
        os.set_blocking(reader, False)
        try:
            seen = os.read(reader, 65536)
        except BlockingIOError:
            seen = b""
    finally:
        os.close(reader)
        os.close(terminal)
    return done.returncode, seen, done.stderr.decode("utf-8")


def test_binary_raw_bytes_are_not_sent_to_a_terminal(env: dict[str, str], tmp_path: Path) -> None:
    snapshot = stored(env, tmp_path / "x.gif", BINARY)
    code, seen, stderr = on_a_terminal(env, "show", "--raw", snapshot)
    assert code == 2
    assert seen == b""
    assert stderr.startswith(
        "snap: error: the raw bytes are binary: give -o FILE, or redirect standard output to a file"
    )


def test_binary_raw_bytes_still_go_to_a_pipe(env: dict[str, str], tmp_path: Path) -> None:
    snapshot = stored(env, tmp_path / "x.gif", BINARY)
    done = subprocess.run(
        [sys.executable, "-m", "snap", "show", "--raw", snapshot],
        env=os.environ | env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == BINARY


def test_text_raw_bytes_print_on_a_terminal(env: dict[str, str], tmp_path: Path) -> None:
    snapshot = stored(env, tmp_path / "page.html", b"<p>Plain words print.</p>")
    code, seen, stderr = on_a_terminal(env, "show", "--raw", snapshot)
    assert code == 0, stderr
    assert b"Plain words print." in seen


def test_a_screenshot_is_not_sent_to_a_terminal(env: dict[str, str], tmp_path: Path) -> None:
    """Refused before anything is read: whether or not a browser capture exists."""
    snapshot = stored(env, tmp_path / "page.html", b"<p>No browser here.</p>")
    code, seen, stderr = on_a_terminal(env, "show", "--screenshot", snapshot)
    assert code == 2
    assert seen == b""
    assert stderr.startswith(
        "snap: error: the screenshot is a PNG: give -o FILE, or redirect standard output to a file"
    )
