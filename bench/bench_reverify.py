"""Benchmark of batch re-verification: 10,000 citations over 100 snapshots of 20–100 KB.

Run: ``.venv/bin/python bench/bench_reverify.py [--json] [--citations N] [--snapshots N]
[--rounds N] [--database sqlite|postgresql|both]``

Reports, per database, from one run (ratios against baselines timed in the same run):
- ``snap reverify`` as a user runs it, in a process of its own each time (select the citations,
  re-verify them: CPU time, wall time and the process's peak resident memory), in three ways
  that take turns over ``--rounds`` rounds (min and median reported, with the load average):
  * ``off``: how reverify ran before the prepared-source folder existed: no folder
    (``SNAP_PREPARED_CACHE=off``), every text tokenized, every citation loaded at once;
  * ``cold``: the folder empty at the start, so every text is tokenized and written to it
    (and the citations loaded a chunk at a time, ``records.reverify.reverify_in_chunks``);
  * ``warm``: the folder as ``cold`` left it, every text loaded (the goal: ≥ 1.5× ``off``);
  and the bound on that goal: preparing every source text once (CPU), which is all a folder
  can save, so ``off ÷ (off − preparing)`` is what a folder read at no cost would give
  (``warmBound``), and ``warmShareOfBound`` how much of it ``warm`` reaches;
- the per-citation cost of ``reverify`` against three loops over the citations:
  * the fair naive loop: it caches prepared sources, as any loop would, and records each check
    in a transaction of its own (``cachedRowByRow``);
  * the same loop with one batched write at the end, the floor for a loop without grouping
    (``cachedBatched``);
  (``--fair-limit N`` times them on the first N citations only, whole snapshots, for 100,000)
  * a loop that reads, checks and tokenizes the snapshot again for every citation (timed on a
    sample, reported per citation: ``naive``), as the first benchmark did.

Each database runs in a child process; PostgreSQL uses a throwaway database on the local server
($SNAP_TEST_DATABASE_URL, as the tests do).  Every reverify run records its checks, so the
table grows over the rounds; the ways take turns so that each meets it as large.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_verifier import make_source  # noqa: E402

from records.db import Database  # noqa: E402
from records.evidence import Evidence  # noqa: E402
from records.models import Citation, Snapshot  # noqa: E402
from records.repository import choose_extraction, record_snapshot  # noqa: E402
from records.reverify import (  # noqa: E402
    recheck,
    reverify,
    reverify_in_chunks,
    select_citation_keys,
    select_citations,
)
from records.rows import idempotency_key, record_verifications  # noqa: E402
from records.texts import SnapshotTexts  # noqa: E402
from records.verify import verification_values  # noqa: E402
from records.workspace import Workspace  # noqa: E402
from snap.config import Settings  # noqa: E402
from snapshotter.capture import capture  # noqa: E402
from snapshotter.store import FolderStore  # noqa: E402
from verifier import Status, prepare, tokenize  # noqa: E402

SEED = 7


def build(workspace: Workspace, folder: Path, snapshots: int, citations: int) -> list[str]:
    """Capture generated text files and cite whole-token slices of them."""
    rng = random.Random(SEED)
    options = workspace.fetch_options
    per_snapshot = citations // snapshots
    rows = []
    for n in range(snapshots):
        text = make_source(rng.randint(20_000, 100_000), rng)
        path = folder / f"source-{n}.txt"
        path.write_text(text, encoding="utf-8")
        record = capture(str(path), workspace.store, options)
        with workspace.db.session() as session:
            record_snapshot(session, record)
        tokens = tokenize(text)
        for k in range(per_snapshot):
            first = rng.randrange(0, len(tokens) - 12)
            exact = text[tokens[first].start : tokens[first + rng.randint(5, 11)].end]
            rows.append(
                Citation(
                    id=f"c-{n}-{k}",
                    fingerprint="sha256:" + "0" * 64,
                    url=record.url,
                    snapshot_id=record.snapshot_id,
                    exact=exact,
                )
            )
    with workspace.db.session() as session:
        session.add_all(rows)
    return [row.id for row in rows]


def naive(workspace: Workspace, citations: list[Citation]) -> None:
    """The baseline: no grouping, no cache: read, verify and tokenize per citation. Its
    transactions are shaped like reverify's (one read, checks outside it, one batched write),
    so the ratio measures grouping and caching only."""
    with workspace.db.reading() as session:
        planned = []
        for citation in citations:
            snapshot = session.get(Snapshot, citation.snapshot_id)
            assert snapshot is not None
            planned.append(
                (citation, Evidence.of(snapshot, choose_extraction(session, snapshot.id)))
            )
    rows = []
    for citation, evidence in planned:
        texts = SnapshotTexts(workspace.stores)
        outcome, _, _ = recheck(texts, citation, evidence, evidence, {})
        key = idempotency_key(citation.id, outcome.snapshot_id, evidence.extraction_id, "naive", 0)
        rows.append(verification_values(citation.id, outcome, evidence.extraction_id, "naive", key))
    with workspace.db.session() as session:
        record_verifications(session, rows)


def naive_cached(workspace: Workspace, citations: list[Citation], *, batched: bool) -> None:
    """The fair baselines: a plain loop over the citations that caches prepared sources (one
    ``SnapshotTexts`` for the whole loop, as any loop would), with one short read per citation
    and either one write per citation (``batched=False``: how a straightforward loop records)
    or one batched write at the end (the floor for a loop without grouping)."""
    texts = SnapshotTexts(workspace.stores)
    run_id = "naive-batch" if batched else "naive-rows"
    rows = []
    for citation in citations:
        with workspace.db.reading() as session:
            snapshot = session.get(Snapshot, citation.snapshot_id)
            assert snapshot is not None
            evidence = Evidence.of(snapshot, choose_extraction(session, snapshot.id))
        outcome, _, _ = recheck(texts, citation, evidence, evidence, {})
        key = idempotency_key(citation.id, outcome.snapshot_id, evidence.extraction_id, run_id, 0)
        row = verification_values(citation.id, outcome, evidence.extraction_id, run_id, key)
        if batched:
            rows.append(row)
            continue
        with workspace.db.session() as session:
            record_verifications(session, [row])
    if rows:
        with workspace.db.session() as session:
            record_verifications(session, rows)


def preparing_every_text(folder: Path) -> float:
    """CPU seconds to prepare every source text once, as ``off`` does: the most a folder of
    prepared sources can take off reverify (Amdahl's bound on the goal)."""
    texts = [path.read_text(encoding="utf-8") for path in sorted(folder.glob("source-*.txt"))]
    began = time.process_time()
    for text in texts:
        prepare(text)
    return time.process_time() - began


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


WAYS = ("off", "cold", "warm")


def child(
    database: str, snapshots: int, citations: int, sample: int, fair_limit: int, rounds: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/bench.db"
        context = None
        if database == "postgresql":
            from tests.db_support import throwaway_postgres

            context = throwaway_postgres()
            url = context.__enter__()
        try:
            return measure(Path(folder), url, snapshots, citations, sample, fair_limit, rounds)
        finally:
            if context is not None:
                context.__exit__(None, None, None)


def settings_env(folder: Path, url: str, cache: str) -> dict[str, str]:
    return {"SNAP_HOME": str(folder), "SNAP_DATABASE_URL": url, "SNAP_PREPARED_CACHE": cache}


def open_workspace(folder: Path, url: str, cache: str = "off") -> Workspace:
    settings = Settings.from_env(settings_env(folder, url, cache))
    return Workspace(
        settings.workspace_options(), Database(url, auto_migrate=True), FolderStore(folder / "s")
    )


def reverify_process(folder: Path, url: str, way: str) -> dict[str, float]:
    """One ``snap reverify`` in a process of its own (``--reverify``): its times and peak RSS."""
    cache = folder / "prepared"
    if way == "cold":
        shutil.rmtree(cache, ignore_errors=True)
    command = [sys.executable, __file__, "--reverify", str(folder), url]
    command.append("off" if way == "off" else str(cache))
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output)  # type: ignore[no-any-return]


def reverify_here(folder: Path, url: str, cache: str) -> dict[str, float]:
    """What ``snap reverify`` does, timed: select every citation's key, re-verify them a chunk at
    a time; with the folder ``off``, as it did before either existed (every citation loaded,
    then re-verified at once)."""
    workspace = open_workspace(folder, url, cache)
    cpu, wall = time.process_time(), time.perf_counter()
    if cache == "off":  # as before the folder and the chunks: every citation loaded at once
        report = reverify(workspace, select_citations(workspace))
    else:
        report = reverify_in_chunks(workspace, select_citation_keys(workspace))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    workspace.close()
    return {
        "cpuSeconds": cpu,
        "wallSeconds": wall,
        "peakRssMiB": peak_rss_mib(),
        "found": report.by_status.get(Status.QUOTE_FOUND, 0),
    }


def peak_rss_mib() -> float:
    """This process's own peak resident memory. Not ``getrusage``'s ``ru_maxrss``: on Linux a
    process started by fork and exec inherits its parent's peak there (the kernel folds the
    parent's high-water mark in at exec), so a reverify started by this bench, whose parent
    holds the whole corpus, reported the parent's size; ``VmHWM`` is the new process's own."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:  # not Linux: ru_maxrss is kilobytes on Linux, bytes on macOS
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return int(status.split("VmHWM:")[1].split()[0]) / 1024


def summary(runs: list[dict[str, float]], key: str) -> dict[str, float]:
    values = [run[key] for run in runs]
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3)}


def measure(
    folder: Path,
    url: str,
    snapshots: int,
    count: int,
    sample: int,
    fair_limit: int,
    rounds: int,
) -> dict[str, Any]:
    workspace = open_workspace(folder, url)
    build(workspace, folder, snapshots, count)
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, float]]] = {way: [] for way in WAYS}
    for round_ in range(rounds):
        order = WAYS if round_ % 2 == 0 else ("cold", "warm", "off")  # off first, then last
        for way in order:
            runs[way].append(reverify_process(folder, url, way))
    with workspace.db.reading() as session:  # for the loops, loaded after the reverify runs
        citations = list(session.query(Citation).order_by(Citation.id))
    founds = {run["found"] for way_runs in runs.values() for run in way_runs}
    assert len(founds) == 1, f"the ways disagree on what is found: {founds}"
    ways = {
        way: {
            "cpuSeconds": summary(way_runs, "cpuSeconds"),
            "wallSeconds": summary(way_runs, "wallSeconds"),
            "peakRssMiB": summary(way_runs, "peakRssMiB"),
        }
        for way, way_runs in runs.items()
    }
    off_cpu = ways["off"]["cpuSeconds"]
    speedups = {
        f"{way}OverOff": {
            stat: round(off_cpu[stat] / ways[way]["cpuSeconds"][stat], 2)
            for stat in ("min", "median")
        }
        for way in ("cold", "warm")
    }
    preparing = preparing_every_text(folder)
    bound = {  # what a folder that cost nothing to read could give: off less all preparing
        stat: round(off_cpu[stat] / (off_cpu[stat] - preparing), 2) for stat in ("min", "median")
    }
    cache_bytes = sum(path.stat().st_size for path in (folder / "prepared").rglob("*.prep"))
    per_reverify = ways["off"]["wallSeconds"]["min"] / len(citations)
    picks = random.Random(SEED).sample(citations, min(sample, len(citations)))
    started = time.perf_counter()
    naive(workspace, picks)
    per_naive = (time.perf_counter() - started) / len(picks)
    fair = citations[:fair_limit] if fair_limit else citations  # whole snapshots, in id order
    rows_s = timed(lambda: naive_cached(workspace, fair, batched=False)) / len(fair)
    batch_s = timed(lambda: naive_cached(workspace, fair, batched=True)) / len(fair)
    workspace.close()
    return {
        "citations": len(citations),
        "snapshots": snapshots,
        "quoteFound": founds.pop(),
        "rounds": rounds,
        "reverify": ways,
        "cpuSpeedup": speedups,
        "cacheMiB": round(cache_bytes / 2**20, 1),
        "loadBefore": [round(load, 2) for load in load_before],
        "loadAfter": [round(load, 2) for load in os.getloadavg()],
        "preparingCpuSeconds": round(preparing, 3),
        "warmBound": bound,
        "warmShareOfBound": {
            stat: round(speedups["warmOverOff"][stat] / bound[stat], 3)
            for stat in ("min", "median")
        },
        "offWallMsPerCitation": round(per_reverify * 1000, 4),
        "naiveMsPerCitation": round(per_naive * 1000, 4),
        "naiveOverReverify": round(per_naive / per_reverify, 1),
        "fairLoopCitations": len(fair),
        "cachedRowByRowMsPerCitation": round(rows_s * 1000, 4),
        "cachedRowByRowOverReverify": round(rows_s / per_reverify, 1),
        "cachedBatchedMsPerCitation": round(batch_s * 1000, 4),
        "cachedBatchedOverReverify": round(batch_s / per_reverify, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--citations", type=int, default=10_000)
    parser.add_argument("--snapshots", type=int, default=100)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of off, cold and warm")
    parser.add_argument("--reverify", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument(
        "--fair-limit",
        type=int,
        default=0,
        help="time the fair loops on the first N citations (whole snapshots); 0: all",
    )
    parser.add_argument("--database", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reverify:
        folder, url, cache = args.reverify
        print(json.dumps(reverify_here(Path(folder), url, cache)))
        return
    if args.child:
        measured = child(
            args.database,
            args.snapshots,
            args.citations,
            args.sample,
            args.fair_limit,
            args.rounds,
        )
        print(json.dumps(measured))
        return
    databases = ["sqlite", "postgresql"] if args.database == "both" else [args.database]
    results = {}
    for database in databases:
        command = [
            sys.executable,
            __file__,
            "--child",
            "--database",
            database,
            "--citations",
            str(args.citations),
            "--snapshots",
            str(args.snapshots),
            "--sample",
            str(args.sample),
            "--fair-limit",
            str(args.fair_limit),
            "--rounds",
            str(args.rounds),
        ]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results[database] = json.loads(output)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for database, result in results.items():
        print(f"{database:10}  " + "  ".join(f"{key}={value}" for key, value in result.items()))
        for way, figures in result["reverify"].items():
            print(f"  {way:5} " + "  ".join(f"{key}={value}" for key, value in figures.items()))


if __name__ == "__main__":
    main()
