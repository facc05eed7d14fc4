"""Hostile servers and hostile local input against the real ``snap`` process.

Every case runs the ``snap`` command line against the hand-written server in ``servers.py``
on 127.0.0.1 and must end with its documented exit code, exactly one line on stderr and no
traceback, within the capture deadline + 1 s as measured by the server, with the failed
capture recorded and no temporary file left.  The cases run in this process (starting an
interpreter costs seconds on a loaded 2-core machine); the ones that stress memory run again
as child processes, three at a time, so that their peak RSS can be read from ``wait4``.

Network: loopback only.  Redirects point at 127.0.0.1 or at URLs refused before any lookup.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from snap.cli import cli
from tests.hostile.cases import DEADLINE, MAX_BYTES, TEXT, TIMEOUT, Case, server_cases
from tests.hostile.servers import HostileServer, response_head

HARD_LIMIT = DEADLINE + 30.0  # a case still running by then is killed and fails
IN_PROCESS_SLACK = 3.0  # extraction and recording after the capture, on a loaded machine
RSS_BOUND_MB = 400


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str
    wall: float
    peak_rss_mb: float
    held: float  # seconds the server saw its connections held (0 for local cases)
    captures: list[tuple[str, str | None]]  # (outcome, error) rows recorded
    leftovers: list[str]  # snap-fetch-* files left in the case's temporary folder


def recorded_captures(home: Path) -> list[tuple[str, str | None]]:
    database = home / "snap.db"
    if not database.exists():
        return []
    with sqlite3.connect(database) as connection:
        return list(connection.execute("SELECT outcome, error FROM captures ORDER BY id"))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty database, copied into each case's home (migrating once is faster)."""
    home = tmp_path_factory.mktemp("template")
    result = CliRunner().invoke(cli, ["db", "upgrade"], env={"SNAP_HOME": str(home)})
    assert result.exit_code == 0, result.output
    return home / "snap.db"


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    hostile = HostileServer()
    yield hostile
    hostile.stop()


SERVER_CASES = server_cases()
MEMORY_CASES = [  # the cases that could cost memory: bombs, endless bodies, huge headers
    "gzip-bomb",
    "deflate-bomb",
    "gzip-members",
    "endless-chunks",
    "huge-header-line",
    "many-headers",
    "charset-0-html",
]


def case_env(home: Path) -> dict[str, str | None]:
    """The case's settings; None unsets what the developer's environment may have set."""
    return {
        "SNAP_HOME": str(home),
        "SNAP_TIMEOUT": str(TIMEOUT),
        "SNAP_DEADLINE": str(DEADLINE),
        "SNAP_MAX_BYTES": str(MAX_BYTES),
        "SNAP_ALLOW_PRIVATE": "1",
        "SNAP_STORE": None,
        "SNAP_DATABASE_URL": None,
        "SNAP_S3_LOCK_MODE": None,
    }


def run_in_process(
    args: list[str], home: Path, extra_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> Run:
    """The command line in this process, with its own home and temporary folder."""
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    started = time.monotonic()
    result = CliRunner().invoke(cli, args, env={**case_env(home), **extra_env})
    wall = time.monotonic() - started
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback: " + repr(result.exception)
    leftovers = [p.name for p in tmp.iterdir() if p.name.startswith("snap-")]
    code = result.exit_code
    return Run(code, result.stdout, stderr, wall, 0.0, 0.0, recorded_captures(home), leftovers)


@pytest.fixture
def home(template: Path, tmp_path: Path) -> Path:
    shutil.copy(template, tmp_path / "snap.db")
    return tmp_path


def check_one_line(run: Run, exit_code: int, says: str) -> None:
    assert run.exit_code == exit_code, (run.stderr, run.stdout[:500])
    assert "Traceback" not in run.stderr + run.stdout
    assert "internal error" not in run.stderr
    if exit_code == 0:
        assert run.stderr == ""
        return
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("snap: error: ")
    assert says in lines[0]


HELD: dict[str, float] = {}


@pytest.mark.parametrize("case", SERVER_CASES, ids=[c.name for c in SERVER_CASES])
def test_hostile_server(
    case: Case, server: HostileServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = server.add(case.name, case.script)
    run = run_in_process(["fetch", "--json", url], home, {}, monkeypatch)
    if case.exit_code == 0:
        check_one_line(run, 0, "")
        assert case.says in json.loads(run.stdout)["extractor"]
        assert [outcome for outcome, _ in run.captures] == ["stored"]
    else:
        check_one_line(run, case.exit_code, case.says)
        assert json.loads(run.stdout)["error"]["exitCode"] == case.exit_code
        assert [outcome for outcome, _ in run.captures] == ["failed"]  # recorded
        assert run.captures[0][1] in run.stderr
    held = server.held(case.name)
    HELD[case.name] = held
    assert held <= DEADLINE + 1.0, f"the server was held {held:.2f} s"
    assert run.wall <= DEADLINE + 1.0 + IN_PROCESS_SLACK
    assert run.leftovers == []  # no temporary file left behind


def test_a_url_longer_than_a_file_name_is_fetched_not_stat_ed(
    server: HostileServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = server.add("long", lambda peer: peer.send(response_head(length=0)))
    run = run_in_process(["fetch", url + "/" + "u" * 5000], home, {}, monkeypatch)
    check_one_line(run, 0, "")
    assert [outcome for outcome, _ in run.captures] == ["stored"]


BAD_CONFIG = [
    ("SNAP_TIMEOUT", "nan"),
    ("SNAP_TIMEOUT", "inf"),
    ("SNAP_TIMEOUT", "-1"),
    ("SNAP_TIMEOUT", "abc"),
    ("SNAP_TIMEOUT", "1e309"),
    ("SNAP_TIMEOUT", "0"),
    ("SNAP_DEADLINE", "0"),
    ("SNAP_DEADLINE", "-inf"),
    ("SNAP_MAX_BYTES", "-5"),
    ("SNAP_MAX_BYTES", "9" * 5000),
    ("SNAP_MAX_REDIRECTS", "1000000"),
    ("SNAP_S3_LOCK_DAYS", "0"),
    ("SNAP_S3_LOCK_MODE", "sometimes"),
]


@pytest.mark.parametrize(("name", "value"), BAD_CONFIG, ids=[f"{n}={v[:8]}" for n, v in BAD_CONFIG])
def test_bad_settings_are_one_line_exit_2(
    name: str, value: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_in_process(["fetch", "/dev/null"], home, {name: value}, monkeypatch)
    check_one_line(run, 2, name)
    assert run.captures == []


def _special_files(tmp: Path) -> dict[str, Path]:
    fifo = tmp / "a-fifo"
    os.mkfifo(fifo)
    folder = tmp / "a-folder"
    folder.mkdir()
    return {"fifo": fifo, "device": Path("/dev/zero"), "folder": folder}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["fetch", "--timeout", "nan", "{fifo}"], "timeout"),
        (["fetch", "--deadline", "inf", "{fifo}"], "deadline"),
        (["fetch", "{fifo}"], "not a regular file"),
        (["fetch", "{device}"], "not a regular file"),
        (["fetch", "{folder}"], "not a regular file"),
        (["fetch", "n" * 5000], "File name too long"),
    ],
    ids=["timeout-nan", "deadline-inf", "fifo", "dev-zero", "folder", "long-name"],
)
def test_unusable_input_is_refused_at_once_with_exit_2(
    args: list[str], says: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = {name: str(path) for name, path in _special_files(home).items()}
    run = run_in_process([arg.format(**paths) for arg in args], home, {}, monkeypatch)
    check_one_line(run, 2, says)
    assert run.wall < 5  # refused at once, never blocked on the FIFO or the device
    assert run.captures == []  # nothing was attempted, so nothing is recorded


def test_a_url_with_a_control_character_is_unusable_input(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused at the edge (exit 2), as every command and route refuses it, before anything is
    attempted or recorded: a NUL would not even be storable in PostgreSQL."""
    for url in ("http://127.0.0.1:9/\x01\n", "http://127.0.0.1:9/\x00"):
        run = run_in_process(["fetch", url], home, {}, monkeypatch)
        check_one_line(run, 2, "control character")
        assert run.captures == []


def run_child(args: list[str], home: Path) -> tuple[int, str, str, float, float]:
    """``python -m snap`` as a child; exit code, stdout, stderr, wall seconds, peak RSS MiB."""
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        **{k: v for k, v in case_env(home).items() if v},
    }
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "snap", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    outputs: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=lambda n=n, s=s: outputs.__setitem__(n, s.read()))
        for n, s in (("out", child.stdout), ("err", child.stderr))
    ]
    for reader in readers:
        reader.start()
    killer = threading.Timer(HARD_LIMIT, child.kill)
    killer.start()
    _, status, usage = os.wait4(child.pid, 0)
    killer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    for stream in (child.stdout, child.stderr):
        if stream is not None:
            stream.close()
    out = outputs.get("out", b"").decode("utf-8", "replace")
    err = outputs.get("err", b"").decode("utf-8", "replace")
    return child.returncode, out, err, time.monotonic() - started, usage.ru_maxrss / 1024


def measured_child(args: list[str], home: Path) -> tuple[int, str, str, float, float]:
    """``run_child`` from a small process. A child's peak RSS (``ru_maxrss``) counts the memory
    of the process it was started from until its exec, so started from pytest's worker (hundreds
    of MiB late in a run over many files) it would measure that worker, not snap."""
    with multiprocessing.get_context("forkserver").Pool(1) as pool:
        return pool.apply(run_child, (args, home))


def test_peak_memory_of_the_worst_cases_in_a_child_process(
    server: HostileServer, template: Path, tmp_path: Path
) -> None:
    """Peak RSS of the memory-heavy cases, each in its own process (the report's figure)."""
    by_name = {case.name: case for case in SERVER_CASES}

    def run(name: str) -> tuple[str, tuple[int, str, str, float, float]]:
        case = by_name[name]
        url = server.add(f"child-{name}", case.script)
        home = tmp_path / name
        home.mkdir()
        shutil.copy(template, home / "snap.db")
        return name, measured_child(["fetch", url], home)

    with ThreadPoolExecutor(max_workers=3) as pool:
        outcomes = dict(pool.map(run, MEMORY_CASES))
    for name, (code, _, err, wall, _) in outcomes.items():
        assert code == by_name[name].exit_code, (name, err)
        assert "Traceback" not in err
        assert len(err.splitlines()) == (0 if code == 0 else 1), err
        assert server.held(f"child-{name}") <= DEADLINE + 1.0
        assert wall < HARD_LIMIT  # start-up time varies with the machine's load
    worst = max(outcomes, key=lambda n: outcomes[n][4])
    slowest = max(HELD or {"-": 0.0}, key=lambda n: HELD.get(n, 0.0))
    print(
        f"\nhostile server cases: {len(SERVER_CASES)}; worst time a server was held:"
        f" {HELD.get(slowest, 0.0):.2f} s ({slowest}; deadline {DEADLINE} s);"
        f" worst peak RSS of a child: {outcomes[worst][4]:.1f} MiB ({worst})"
    )
    assert outcomes[worst][4] < RSS_BOUND_MB


def test_verify_fetch_records_a_hostile_source_and_goes_on(
    server: HostileServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    latin1 = TEXT.decode().encode("latin-1")
    declared = (("Content-Type", "text/plain; charset=base64"),)
    bad = server.add(
        "verify-bad",
        lambda peer: peer.send(response_head(headers=declared, length=len(latin1)) + latin1),
    )
    plain = (("Content-Type", "text/plain"),)
    good = server.add(
        "verify-good",
        lambda peer: peer.send(response_head(headers=plain, length=len(TEXT)) + TEXT),
    )
    answer = {
        "answerId": "hostile",
        "claims": [
            {"text": "a", "url": bad, "quote": "a plain text source"},
            {"text": "b", "url": good, "quote": "a plain text source"},
        ],
    }
    (home / "answer.json").write_text(json.dumps(answer))
    args = ["verify", "--fetch", "--json", str(home / "answer.json")]
    run = run_in_process(args, home, {}, monkeypatch)
    assert run.exit_code == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert "base64" in run.stdout  # the hostile source is reported ...
    outcomes = sorted(outcome for outcome, _ in run.captures)
    assert outcomes == ["failed", "stored"]  # ... and the other one was still captured
