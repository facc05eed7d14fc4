"""Benchmark of recording: ``snap verify`` of 1,000 citations against one 1 MB snapshot.

Run: ``.venv/bin/python bench/bench_record.py [--json] [--citations N] [--size BYTES]``

What a user pays per citation, end to end, in one run:

- ``snap verify FILE`` as a process (SQLite, folder store), for a file of N citations of one
  1 MB text snapshot (half copied quotes, half changed ones, so half need a closest passage),
  and for a file of one citation: the difference is what N citations cost on top of start-up;
- the same use case in-process (``records.verify.verify``) once the process is warm;
- the baseline: the fastest reasonable alternative that records nothing: one prepared source
  and ``check`` per quote, with the closest passage for the changed ones.

The goal is at most 0.5 ms per citation end to end for N = 1,000 (the whole process, divided by
N).  Everything stays on loopback: the snapshot is a local file, captured with ``snap fetch``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_verifier import make_quotes, make_source  # noqa: E402

from verifier import prepare  # noqa: E402

GOAL_MS_PER_CITATION = 0.5
SNAP = [sys.executable, "-m", "snap"]


def snap(home: Path, *args: str) -> tuple[float, str]:
    """Wall seconds and stdout of one ``snap`` process on the embedded default under ``home``."""
    env = {**os.environ, "SNAP_HOME": str(home)}
    env.pop("SNAP_DATABASE_URL", None)
    env.pop("SNAP_STORE_URL", None)
    started = time.perf_counter()
    done = subprocess.run([*SNAP, *args], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"snap {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return wall, done.stdout


def citations_file(folder: Path, snapshot_id: str, quotes: list[str], name: str) -> Path:
    records = [{"snapshotId": snapshot_id, "quote": quote} for quote in quotes]
    path = folder / name
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def baseline_seconds(source: str, quotes: list[str]) -> float:
    """Prepare once, check every quote (closest passage included), record nothing."""
    started = time.perf_counter()
    prepared = prepare(source)
    for quote in quotes:
        prepared.check(quote)
    return time.perf_counter() - started


def measure(count: int, size: int) -> dict[str, Any]:
    rng = random.Random(20261130)
    source = make_source(size, rng)
    quotes = [quote for quote, _ in make_quotes(source, count, rng)]
    with tempfile.TemporaryDirectory(prefix="snap-bench-record-") as temporary:
        folder = Path(temporary)
        home = folder / "home"
        page = folder / "source.txt"
        page.write_text(source, encoding="utf-8")
        _, fetched = snap(home, "fetch", str(page), "--json")
        snapshot_id = json.loads(fetched)["snapshotId"]
        many = citations_file(folder, snapshot_id, quotes, "many.json")
        one = citations_file(folder, snapshot_id, quotes[:1], "one.json")
        snap(home, "verify", str(one), "--json")  # warm the OS caches and the database file
        one_s = min(snap(home, "verify", str(one), "--json")[0] for _ in range(3))
        many_s, output = snap(home, "verify", str(many), "--json")
        results = json.loads(output)
        base_s = min(baseline_seconds(source, quotes) for _ in range(2))
    statuses: dict[str, int] = {}
    for result in results.get("results", []):
        statuses[result["status"]] = statuses.get(result["status"], 0) + 1
    return {
        "citations": count,
        "source_bytes": len(source.encode("utf-8")),
        "process_one_s": one_s,
        "process_many_s": many_s,
        "ms_per_citation_end_to_end": many_s / count * 1e3,
        "ms_per_citation_marginal": (many_s - one_s) / max(count - 1, 1) * 1e3,
        "baseline_ms_per_citation": base_s / count * 1e3,
        "statuses": statuses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--citations", type=int, default=1_000)
    parser.add_argument("--size", type=int, default=1_000_000, help="source size, characters")
    args = parser.parse_args()
    report = measure(args.citations, args.size)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    end_to_end = report["ms_per_citation_end_to_end"]
    print(
        f"snap verify of {report['citations']:,} citations against one "
        f"{report['source_bytes'] / 1e6:.1f} MB snapshot: {report['process_many_s']:.2f} s "
        f"({end_to_end:.3f} ms per citation end to end; one citation: "
        f"{report['process_one_s']:.2f} s)"
    )
    print(
        f"  marginal cost per citation {report['ms_per_citation_marginal']:.3f} ms; baseline "
        f"(prepare once, check each, record nothing) {report['baseline_ms_per_citation']:.3f} ms "
        f"-> {report['ms_per_citation_marginal'] / report['baseline_ms_per_citation']:.1f}x"
    )
    print(f"  statuses: {report['statuses']}")
    verdict = "met" if end_to_end <= GOAL_MS_PER_CITATION else "NOT met"
    print(f"goal <= {GOAL_MS_PER_CITATION} ms per citation end to end: {verdict}")


if __name__ == "__main__":
    main()
