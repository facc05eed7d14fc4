"""Files a command writes where the user says (``snap show -o``, ``snap verify --emit``, as
``snap export -o``): ``-o`` writes what would have been printed, whatever is shown; a file
that is there is refused unless ``--force``; and a write that fails midway leaves no
half-written file in its place (``records.output_files``)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.http_fixtures import LoopbackServer, http_server  # noqa: F401  (fixture)
from tests.snap_cli import run_snap

PAGE = (
    b"<html><head><title>Output files</title></head><body><main><h1>Output files</h1>"
    b"<p>The cache serves nine requests in ten from the edge, and the origin the tenth.</p>"
    b"</main></body></html>"
)
PRECIOUS = "precious, kept by hand\n"
PRINTED = [(), ("--text",), ("--around", "10"), ("--headers",)]  # --raw always wrote its bytes
SHOWN = [*PRINTED, ("--raw",)]
ONE_OF = "give one of --text, --raw, --headers, --screenshot"
CLASHES = {
    ("--text", "--raw"): f"--text and --raw cannot be combined: {ONE_OF}",
    ("--raw", "--headers"): f"--raw and --headers cannot be combined: {ONE_OF}",
    ("--headers", "--screenshot"): f"--headers and --screenshot cannot be combined: {ONE_OF}",
    ("--raw", "--page", "1"): "--page goes with the text, not --raw",
    ("--headers", "--around", "3"): "--around goes with the text, not --headers",
    ("--force",): "--force goes with -o FILE",
}


@pytest.fixture
def env(home_env: dict[str, str]) -> dict[str, str]:
    return home_env | {"SNAP_ALLOW_PRIVATE": "1", "SNAP_CAPTURE": "http"}


@pytest.fixture
def snapshot(env: dict[str, str], http_server: LoopbackServer) -> str:  # noqa: F811
    http_server.route("/page", body=PAGE)
    done = run_snap(["fetch", http_server.url("/page"), "--json"], env)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["snapshotId"])


def one_error(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("snap: error: "), done.stderr
    return lines[0]


@pytest.mark.parametrize("shown", PRINTED, ids=lambda args: " ".join(args) or "default")
def test_o_writes_what_show_prints(
    env: dict[str, str], snapshot: str, tmp_path: Path, shown: tuple[str, ...]
) -> None:
    printed = run_snap(["show", snapshot, *shown], env)
    assert printed.returncode == 0, printed.stderr
    out = tmp_path / "shown.out"
    done = run_snap(["show", snapshot, *shown, "-o", str(out)], env)
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    assert data + b"\n" == printed.stdout.encode("utf-8")  # but for the terminal's line break
    digest = hashlib.sha256(data).hexdigest()
    assert done.stdout == f"wrote {out} ({len(data)} bytes, sha256:{digest})\n"


def test_the_text_written_is_the_stored_text_byte_for_byte(
    env: dict[str, str],
    http_server: LoopbackServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Whoever checks the evidence with their own tools: ``sha256sum`` of the file is the
    recorded text hash."""
    http_server.route("/page", body=PAGE)
    fetched = run_snap(["fetch", http_server.url("/page"), "--json"], env)
    record = json.loads(fetched.stdout)
    out = tmp_path / "text.txt"
    done = run_snap(["show", record["snapshotId"], "--text", "-o", str(out)], env)
    assert done.returncode == 0, done.stderr
    assert f"sha256:{hashlib.sha256(out.read_bytes()).hexdigest()}" == record["hashes"]["text"]


def test_o_with_json_describes_the_file_written(
    env: dict[str, str], snapshot: str, tmp_path: Path
) -> None:
    out = tmp_path / "text.txt"
    done = run_snap(["show", snapshot, "--text", "-o", str(out), "--json"], env)
    assert done.returncode == 0, done.stderr
    written = json.loads(done.stdout)
    data = out.read_bytes()
    assert written["what"] == "text"
    assert (written["size"], written["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize(("clash", "said"), CLASHES.items(), ids=[" ".join(c) for c in CLASHES])
def test_options_that_do_not_go_together_are_a_usage_error(
    env: dict[str, str], snapshot: str, clash: tuple[str, ...], said: str
) -> None:
    line = one_error(run_snap(["show", snapshot, *clash], env), 2)
    assert line == f"snap: error: {said} (see: snap show --help)"


@pytest.mark.parametrize("shown", SHOWN, ids=lambda args: " ".join(args) or "default")
def test_show_refuses_an_existing_file_unless_forced(
    env: dict[str, str], snapshot: str, tmp_path: Path, shown: tuple[str, ...]
) -> None:
    kept = tmp_path / "keep.txt"
    kept.write_text(PRECIOUS)
    line = one_error(run_snap(["show", snapshot, *shown, "-o", str(kept)], env), 2)
    assert line == f"snap: error: {kept} exists; give --force to replace it"
    assert kept.read_text() == PRECIOUS
    done = run_snap(["show", snapshot, *shown, "-o", str(kept), "--force"], env)
    assert done.returncode == 0, done.stderr
    assert kept.read_text() != PRECIOUS


def test_verify_emit_refuses_an_existing_file_unless_forced(
    env: dict[str, str], snapshot: str, tmp_path: Path
) -> None:
    citation = tmp_path / "citation.json"
    quote = "nine requests in ten"
    citation.write_text(json.dumps({"citationId": "kept", "snapshotId": snapshot, "quote": quote}))
    kept = tmp_path / "keep.json"
    kept.write_text(PRECIOUS)
    line = one_error(run_snap(["verify", str(citation), "--emit", str(kept)], env), 2)
    assert line == f"snap: error: {kept} exists; give --force to replace it"
    assert kept.read_text() == PRECIOUS
    assert run_snap(["audit", "kept"], env).returncode == 1  # refused before anything was checked
    done = run_snap(["verify", str(citation), "--emit", str(kept), "--force"], env)
    assert done.returncode == 0, done.stderr
    assert json.loads(kept.read_text())["citations"][0]["citationId"] == "kept"
    assert one_error(run_snap(["verify", str(citation), "--force"], env), 2).endswith(
        "--force goes with --emit FILE (see: snap verify --help)"
    )


ROOM = 256 * 1024  # bytes any file may grow to: room for the database's shared memory file


@pytest.fixture
def large_snapshot(env: dict[str, str], http_server: LoopbackServer) -> str:  # noqa: F811
    """A page four times ``ROOM``."""
    body = PAGE.replace(b"</main>", b"<p>" + b"padding " * (ROOM // 2) + b"</p></main>")
    http_server.route("/large", body=body)
    done = run_snap(["fetch", http_server.url("/large"), "--json"], env)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["snapshotId"])


def show_with_little_room(
    env: dict[str, str], snapshot: str, out: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``snap show --raw -o OUT``, with little room."""
    return with_little_room(env, "show", "--raw", snapshot, "-o", str(out), *extra)


def with_little_room(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """snap in a process that may write no file beyond ``ROOM``, as on a disk that fills up
    midway (SIGXFSZ ignored: the write fails with EFBIG instead)."""

    def little_room() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (ROOM, ROOM))

    return subprocess.run(
        [sys.executable, "-m", "snap", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=little_room,
    )


def test_a_write_that_fails_midway_leaves_no_file(
    env: dict[str, str], large_snapshot: str, tmp_path: Path
) -> None:
    out = tmp_path / "out" / "page.html"
    out.parent.mkdir()
    line = one_error(show_with_little_room(env, large_snapshot, out), 3)
    assert line.startswith(f"snap: error: cannot write {out}: File too large"), line
    assert list(out.parent.iterdir()) == []  # neither half a file nor the temporary one


def test_a_forced_write_that_fails_midway_keeps_the_old_file(
    env: dict[str, str], large_snapshot: str, tmp_path: Path
) -> None:
    kept = tmp_path / "out" / "keep.html"
    kept.parent.mkdir()
    kept.write_text(PRECIOUS)
    line = one_error(show_with_little_room(env, large_snapshot, kept, "--force"), 3)
    assert line.startswith(f"snap: error: cannot write {kept}: File too large"), line
    assert kept.read_text() == PRECIOUS
    assert list(kept.parent.iterdir()) == [kept]


@pytest.mark.parametrize("fmt", ["warc", "wacz"])
def test_an_export_that_fills_the_disk_is_an_output_error_and_leaves_no_file(
    env: dict[str, str],
    http_server: LoopbackServer,  # noqa: F811
    tmp_path: Path,
    fmt: str,
) -> None:
    """A page under ``ROOM`` whose archive (its bytes and its text, compressed) is over it: the
    write fails midway, which is exit 3 with one line, as a full standard output is, not an
    internal error."""
    words = base64.b64encode(random.Random(7).randbytes(ROOM * 3 // 5)).replace(b"A", b" ")
    body = PAGE.replace(b"</main>", b"<p>" + words + b"</p></main>")  # gzip keeps ~3/4 of it
    assert len(body) < ROOM
    http_server.route("/roomy", body=body)
    fetched = run_snap(["fetch", http_server.url("/roomy"), "--json"], env)
    assert fetched.returncode == 0, fetched.stderr
    out = tmp_path / "out" / f"evidence.{fmt}"
    out.parent.mkdir()
    snapshot = str(json.loads(fetched.stdout)["snapshotId"])
    done = with_little_room(env, "export", "--format", fmt, "--snapshot", snapshot, "-o", str(out))
    line = one_error(done, 3)
    assert line.startswith(f"snap: error: cannot write {out}: File too large"), line
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_mode_the_umask_gives(
    env: dict[str, str], snapshot: str, tmp_path: Path, umask: int, mode: int
) -> None:
    """As the shell's ``>`` makes it: an evidence file is for others to read too."""
    out = tmp_path / "page.txt"
    before = os.umask(umask)
    try:
        done = run_snap(["show", snapshot, "-o", str(out)], env)
    finally:
        os.umask(before)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == mode


def test_a_forced_write_keeps_the_mode_of_the_file_it_replaces(
    env: dict[str, str], snapshot: str, tmp_path: Path
) -> None:
    kept = tmp_path / "keep.txt"
    kept.write_text(PRECIOUS)
    kept.chmod(0o640)
    done = run_snap(["show", snapshot, "-o", str(kept), "--force"], env)
    assert done.returncode == 0, done.stderr
    assert kept.read_text() != PRECIOUS
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_verify_emit_writes_no_file_when_nothing_was_verified(
    env: dict[str, str], snapshot: str, tmp_path: Path
) -> None:
    """A file of no citation is one ``verify`` refuses to read ("the list of citations is
    empty"): none is written, and a file there already is left as it was."""
    citation = tmp_path / "citation.json"
    quote = "nine requests in eleven"
    citation.write_text(json.dumps({"snapshotId": snapshot, "quote": quote}))
    out = tmp_path / "verified.json"
    done = run_snap(["verify", str(citation), "--emit", str(out)], env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == f"no citation was verified, so {out} was not written"
    assert not out.exists()
    out.write_text(PRECIOUS)
    assert run_snap(["verify", str(citation), "--emit", str(out), "--force"], env).returncode == 1
    assert out.read_text() == PRECIOUS
