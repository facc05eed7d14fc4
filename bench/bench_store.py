"""Hashing through the store's read path vs ``sha256sum`` on the same file.

Every read of a blob re-hashes it, so the verified read path should cost little more than
hashing the file at all.  This stores one large file (200 MiB by default) in a FolderStore,
then times ``read_into`` a null sink against ``sha256sum`` on the stored file, best of N runs
each (page cache warm for both), and prints the ratio.  The goal is a ratio within 1.25.

    .venv/bin/python bench/bench_store.py [--size-mib 200] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from snapshotter.store import FolderStore
from snapshotter.store.hashing import CHUNK_SIZE, NullSink

GOAL_RATIO = 1.25
MIB = 1024 * 1024


def write_random_file(path: Path, size: int) -> str:
    """Incompressible content, written in 1 MiB chunks; returns its digest."""
    hasher = hashlib.sha256()
    with path.open("wb") as out:
        remaining = size
        while remaining:
            chunk = os.urandom(min(CHUNK_SIZE, remaining))
            hasher.update(chunk)
            out.write(chunk)
            remaining -= len(chunk)
    return "sha256:" + hasher.hexdigest()


def best_of(repeat: int, action: Callable[[], object]) -> float:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return min(timings)


def run_sha256sum(path: Path, digest: str) -> None:
    output = subprocess.run(
        ["sha256sum", str(path)], check=True, capture_output=True, text=True
    ).stdout
    if output.split()[0] != digest.removeprefix("sha256:"):
        raise SystemExit(f"sha256sum disagrees with the store's digest for {path}")


def measure(folder: Path, size: int, repeat: int) -> dict[str, float]:
    source = folder / "source.bin"
    digest = write_random_file(source, size)
    store = FolderStore(folder / "store")
    store.put("raw", digest, source, tags={})
    source.unlink()
    stored = store.path_of("raw", digest)

    def store_read() -> None:
        if store.read_into("raw", digest, NullSink()) != size:
            raise SystemExit("read_into returned the wrong size")

    store_read()  # warm the page cache for both contenders
    store_seconds = best_of(repeat, store_read)
    sha256sum_seconds = best_of(repeat, lambda: run_sha256sum(stored, digest))
    return {
        "size_mib": size / MIB,
        "store_read_seconds": store_seconds,
        "sha256sum_seconds": sha256sum_seconds,
        "store_read_mib_per_s": size / MIB / store_seconds,
        "sha256sum_mib_per_s": size / MIB / sha256sum_seconds,
        "ratio": store_seconds / sha256sum_seconds,
        "goal_ratio": GOAL_RATIO,
    }


def print_table(result: dict[str, float], repeat: int) -> None:
    print(f"SHA-256 of a {result['size_mib']:.0f} MiB file, best of {repeat} (warm page cache)")
    print(f"{'path':<32} {'seconds':>9} {'MiB/s':>9}")
    rows = [
        ("FolderStore.read_into(NullSink)", "store_read"),
        ("sha256sum", "sha256sum"),
    ]
    for label, name in rows:
        seconds, rate = result[f"{name}_seconds"], result[f"{name}_mib_per_s"]
        print(f"{label:<32} {seconds:>9.3f} {rate:>9.0f}")
    verdict = "within" if result["ratio"] <= GOAL_RATIO else "OUTSIDE"
    print(f"ratio store/sha256sum: {result['ratio']:.3f} ({verdict} the {GOAL_RATIO}x goal)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None, help="scratch folder (default: tmp)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if shutil.which("sha256sum") is None:
        print("sha256sum not found on PATH", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-store-") as scratch:
        result = measure(Path(scratch), args.size_mib * MIB, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
