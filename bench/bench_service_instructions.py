"""Instructions one answer costs in ``snap serve`` and in-process: the one-worker goal of issue
25 asked of the work done, which a shared machine's clock does not change.

Run: ``.venv/bin/python bench/bench_service_instructions.py [--answers 60] [--warm 20]
[--database sqlite|postgresql] [--json]`` (needs valgrind; takes a few minutes).

``bench_service.py`` compares answers per second, over HTTP and in-process, on the same two
cores that also run the clients and the database: on this 2-core machine that ratio moves
between about 0.75 and 1.0 from run to run with nothing changed. Here each side runs under
callgrind instead, with the same answers (``bench_service.build_answers``: 10 citations of
captured 100 KB pages, 9 copied and 1 changed) after the same warm-up (every page tokenized
and every citation recorded):

- *server*: a real ``snap serve`` (uvicorn) under callgrind, its threads counted apart; one
  client sends the answers one after another over loopback. Counting starts after the warm-up
  (``callgrind_control -z``) and ends after the last answer (``-d``), so start-up and
  shutdown are left out. Every thread of the server counts: the event loop's, the thread that
  checks, and the rest.
- *in-process*: a child process under callgrind verifying the same answers through the Python
  API (``verify_input_from_bytes`` and ``verify_citations``, with the shared tokenized texts
  the server keeps), as ``bench_service.py``'s in-process baseline does.

The ratio is the in-process instructions per answer over the server's: the share of the
server's work that is the use case itself. Goal (issue 25, one worker >= 0.9x in-process):
>= 0.9. Both run with ``PYTHONHASHSEED=0``, so the counts repeat from run to run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_service import (  # noqa: E402
    build_answers,
    build_pages,
    database_env,
    post_or_get,
    served,
)

from records.inputs import verify_input_from_bytes  # noqa: E402
from records.texts import PreparedCache  # noqa: E402
from records.verify import verify_citations  # noqa: E402
from records.workspace import Workspace  # noqa: E402
from snap.config import Settings  # noqa: E402

GOAL = 0.9
START_TIMEOUT = 600.0  # seconds for snap serve to answer /healthz under callgrind


def callgrind(output: Path, *, threads: bool = False) -> list[str]:
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={output}"]
    return command + (["--separate-threads=yes"] if threads else [])


def counted(pid: int, option: str) -> None:
    """``callgrind_control -z`` (zero the counts) or ``-d`` (dump them) for process ``pid``."""
    subprocess.run(["callgrind_control", option, str(pid)], check=True, capture_output=True)


def total_of(dump: Path) -> int:
    """The instructions a callgrind dump counted."""
    with dump.open() as lines:
        for line in lines:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise SystemExit(f"no total in {dump}")


def dumps_after_zero(output: Path) -> list[Path]:
    """The dumps ``callgrind_control -d`` wrote (``<output>.1``, or ``<output>.1-NN`` one per
    thread), not the ones written at exit."""
    return sorted(output.parent.glob(f"{output.name}.1*"))


def server_instructions(
    env: dict[str, str], answers: list[bytes], warm: int, folder: Path
) -> dict[str, float]:
    """Instructions per answer in each thread of a ``snap serve`` under callgrind."""
    output = folder / "server.callgrind"
    with served(
        {**env, "PYTHONHASHSEED": "0"},
        under=callgrind(output, threads=True),
        request_timeout=600,
        start_timeout=START_TIMEOUT,
    ) as (port, pid):
        for body in answers[:warm]:
            assert post_or_get(port, "POST", "/v1/verify", body)[0] == 200
        counted(pid, "-z")
        for body in answers[warm:]:
            assert post_or_get(port, "POST", "/v1/verify", body)[0] == 200
        counted(pid, "-d")
    count = len(answers) - warm
    dumps = dumps_after_zero(output)
    per_thread = {dump.name.rsplit("-", 1)[-1]: total_of(dump) / count for dump in dumps}
    return {f"thread{name}": round(value / 1e6, 3) for name, value in per_thread.items()} | {
        "total": round(sum(per_thread.values()) / 1e6, 3)
    }


def in_process_instructions(
    env: dict[str, str], answers: list[bytes], warm: int, folder: Path
) -> float:
    """Instructions per answer verified in-process, in a child under callgrind."""
    output = folder / "in-process.callgrind"
    bodies = folder / "answers.json"
    bodies.write_text(json.dumps([body.decode() for body in answers]))
    child = [sys.executable, __file__, "--child", str(bodies), "--warm", str(warm)]
    subprocess.run(
        [*callgrind(output), *child],
        env={**env, "PYTHONHASHSEED": "0"},
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    (dump,) = dumps_after_zero(output)
    return round(total_of(dump) / (len(answers) - warm) / 1e6, 3)


def child(bodies: Path, warm: int) -> None:
    """The in-process side, run under callgrind: counts only the answers after the warm-up."""
    answers = [body.encode() for body in json.loads(bodies.read_text())]
    workspace = Workspace.open(Settings.from_env(dict(os.environ)))
    workspace.prepared = PreparedCache()
    for body in answers[:warm]:
        verify_citations(workspace, verify_input_from_bytes(body, "bench"))
    counted(os.getpid(), "-z")
    for body in answers[warm:]:
        verify_citations(workspace, verify_input_from_bytes(body, "bench"))
    counted(os.getpid(), "-d")
    workspace.close()


def measure(args: argparse.Namespace) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="snap-bench-instructions-") as name,
        contextlib.ExitStack() as stack,
    ):
        folder = Path(name)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SNAP_", "AWS_"))}
        env |= {"SNAP_HOME": str(folder / "home")} | database_env(args.database, stack)
        workspace = Workspace.open(Settings.from_env(env))
        pages = build_pages(workspace, folder, args.pages)
        workspace.close()
        answers = build_answers(pages, args.warm + args.answers, 10)
        server = server_instructions(env, answers, args.warm, folder)
        in_process = in_process_instructions(env, answers, args.warm, folder)
    ratio = in_process / server["total"]
    return {
        "database": args.database,
        "answers": args.answers,
        "warm": args.warm,
        "serverMPerAnswer": server,
        "inProcessMPerAnswer": in_process,
        "inProcessToServer": round(ratio, 3),
        "goals": {f"one server process >= {GOAL}x in-process (instructions)": ratio >= GOAL},
    }


def show(report: dict[str, Any]) -> None:
    server = report["serverMPerAnswer"]
    threads = ", ".join(f"{name} {value} M" for name, value in server.items() if name != "total")
    print(
        f"{report['database']}: {report['answers']} answers of 10 citations after"
        f" {report['warm']} warm, instructions per answer"
    )
    print(f"  server     {server['total']:9.3f} M  ({threads})")
    print(f"  in-process {report['inProcessMPerAnswer']:9.3f} M")
    print(f"  in-process / server: {report['inProcessToServer']}x")
    for goal, met in report["goals"].items():
        print(f"  goal {goal}: {'met' if met else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=60, help="answers counted")
    parser.add_argument("--warm", type=int, default=20, help="answers sent first, not counted")
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.warm)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("this bench needs valgrind (apt-get install valgrind)")
    report = measure(args)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        show(report)


if __name__ == "__main__":
    main()
