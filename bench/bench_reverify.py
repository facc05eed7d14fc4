"""Benchmark of batch re-verification: 10,000 citations over 100 snapshots of 20–100 KB.

Run: ``.venv/bin/python bench/bench_reverify.py [--json] [--citations N] [--snapshots N]
[--database sqlite|postgresql|both]``

Reports, per database, from one run (ratios against baselines timed in the same run):
- per-citation cost of ``records.reverify.reverify`` (each snapshot read, digest-checked and
  tokenized once per run) against three loops over the citations:
  * the fair naive loop: it caches prepared sources, as any loop would, and records each check
    in a transaction of its own (``cachedRowByRow``);
  * the same loop with one batched write at the end, the floor for a loop without grouping
    (``cachedBatched``);
  (``--fair-limit N`` times them on the first N citations only, whole snapshots, for 100,000)
  * a loop that reads, checks and tokenizes the snapshot again for every citation (timed on a
    sample, reported per citation: ``naive``), as the first benchmark did;
- total time of the re-verification; the peak memory reverify itself allocates (tracemalloc, in
  a second run of it) and the peak resident memory of the whole process, set-up included.

Each database runs in a child process so its peak memory is its own.  PostgreSQL uses a
throwaway database on the local server ($SNAP_TEST_DATABASE_URL, as the tests do).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_verifier import make_source  # noqa: E402

from records.db import Database  # noqa: E402
from records.evidence import Evidence  # noqa: E402
from records.models import Citation, Snapshot  # noqa: E402
from records.repository import (  # noqa: E402
    choose_extraction,
    idempotency_key,
    record_snapshot,
    record_verifications,
)
from records.reverify import recheck, reverify  # noqa: E402
from records.texts import SnapshotTexts  # noqa: E402
from records.verify import verification_values  # noqa: E402
from records.workspace import Workspace  # noqa: E402
from snap.config import Settings  # noqa: E402
from snapshotter.capture import capture  # noqa: E402
from snapshotter.store import FolderStore  # noqa: E402
from verifier import tokenize  # noqa: E402

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


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def child(
    database: str, snapshots: int, citations: int, sample: int, fair_limit: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/bench.db"
        context = None
        if database == "postgresql":
            from tests.db_support import throwaway_postgres

            context = throwaway_postgres()
            url = context.__enter__()
        try:
            return measure(Path(folder), url, snapshots, citations, sample, fair_limit)
        finally:
            if context is not None:
                context.__exit__(None, None, None)


def measure(
    folder: Path, url: str, snapshots: int, count: int, sample: int, fair_limit: int
) -> dict[str, Any]:
    settings = Settings.from_env({"SNAP_HOME": str(folder), "SNAP_DATABASE_URL": url})
    workspace = Workspace(
        settings.workspace_options(), Database(url, auto_migrate=True), FolderStore(folder / "s")
    )
    build(workspace, folder, snapshots, count)
    with workspace.db.reading() as session:
        citations = list(session.query(Citation).order_by(Citation.id))
    started = time.perf_counter()
    report = reverify(workspace, citations)
    grouped = time.perf_counter() - started
    tracemalloc.start()  # a second, traced run: the memory reverify itself allocates
    reverify(workspace, citations)
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    picks = random.Random(SEED).sample(citations, min(sample, len(citations)))
    started = time.perf_counter()
    naive(workspace, picks)
    per_naive = (time.perf_counter() - started) / len(picks)
    fair = citations[:fair_limit] if fair_limit else citations  # whole snapshots, in id order
    rows_s = timed(lambda: naive_cached(workspace, fair, batched=False)) / len(fair)
    batch_s = timed(lambda: naive_cached(workspace, fair, batched=True)) / len(fair)
    found = report.summary()["byStatus"].get("quote_found", 0)
    workspace.close()
    per_reverify = grouped / len(citations)
    return {
        "citations": len(citations),
        "snapshots": snapshots,
        "quoteFound": found,
        "reverifySeconds": round(grouped, 3),
        "reverifyMsPerCitation": round(grouped / len(citations) * 1000, 4),
        "naiveMsPerCitation": round(per_naive * 1000, 4),
        "naiveOverReverify": round(per_naive / per_reverify, 1),
        "fairLoopCitations": len(fair),
        "cachedRowByRowMsPerCitation": round(rows_s * 1000, 4),
        "cachedRowByRowOverReverify": round(rows_s / per_reverify, 1),
        "cachedBatchedMsPerCitation": round(batch_s * 1000, 4),
        "cachedBatchedOverReverify": round(batch_s / per_reverify, 1),
        "reverifyPeakTracedMiB": round(traced_peak / 2**20, 1),
        "processPeakRssMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--citations", type=int, default=10_000)
    parser.add_argument("--snapshots", type=int, default=100)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument(
        "--fair-limit",
        type=int,
        default=0,
        help="time the fair loops on the first N citations (whole snapshots); 0: all",
    )
    parser.add_argument("--database", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(
            json.dumps(
                child(args.database, args.snapshots, args.citations, args.sample, args.fair_limit)
            )
        )
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
        ]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results[database] = json.loads(output)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for database, result in results.items():
        print(f"{database:10}  " + "  ".join(f"{key}={value}" for key, value in result.items()))


if __name__ == "__main__":
    main()
