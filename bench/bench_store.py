"""Hashing through the store's read path vs the fastest plain SHA-256 of the same file.

Every read of a blob re-hashes it, so the verified read path should cost little more than
hashing the file at all.  This stores one large file (200 MiB by default) in a FolderStore,
then times ``read_into`` a null sink against two baselines on the stored file, best of N runs
each (page cache warm for all), and prints the ratios:

- ``hashlib.file_digest(file, "sha256")`` in the same process: what a careful Python engineer
  would write, on the same OpenSSL SHA-256 (with the CPU's SHA instructions) snap uses;
- ``openssl dgst -sha256``, the command-line tool on the same library.

(coreutils ``sha256sum`` is not a baseline: it does not use the SHA instructions, so it is about
4x slower here and flatters any contender.)  The goal is a ratio within 1.25 of hashlib.

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


def seconds_of(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def run_hashlib(path: Path, digest: str) -> None:
    with path.open("rb") as handle:
        found = hashlib.file_digest(handle, "sha256").hexdigest()
    if found != digest.removeprefix("sha256:"):
        raise SystemExit(f"hashlib disagrees with the store's digest for {path}")


def run_openssl(path: Path, digest: str) -> None:
    output = subprocess.run(
        ["openssl", "dgst", "-sha256", "-r", str(path)], check=True, capture_output=True, text=True
    ).stdout
    if output.split()[0] != digest.removeprefix("sha256:"):
        raise SystemExit(f"openssl disagrees with the store's digest for {path}")


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

    store_read()  # warm the page cache for every contender
    contenders: dict[str, Callable[[], object]] = {
        "store_read": store_read,
        "hashlib": lambda: run_hashlib(stored, digest),
        "openssl": lambda: run_openssl(stored, digest),
    }
    timings: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):  # interleaved, so load on a shared machine hits all alike
        for name, action in contenders.items():
            timings[name].append(seconds_of(action))
    result: dict[str, float] = {"size_mib": size / MIB, "goal_ratio": GOAL_RATIO}
    for name, values in timings.items():
        result[f"{name}_seconds"] = min(values)
        result[f"{name}_mib_per_s"] = size / MIB / min(values)
    result["ratio_vs_hashlib"] = result["store_read_seconds"] / result["hashlib_seconds"]
    result["ratio_vs_openssl"] = result["store_read_seconds"] / result["openssl_seconds"]
    return result


def print_table(result: dict[str, float], repeat: int) -> None:
    print(f"SHA-256 of a {result['size_mib']:.0f} MiB file, best of {repeat} (warm page cache)")
    print(f"{'path':<32} {'seconds':>9} {'MiB/s':>9}")
    rows = [
        ("FolderStore.read_into(NullSink)", "store_read"),
        ("hashlib.file_digest (in process)", "hashlib"),
        ("openssl dgst -sha256", "openssl"),
    ]
    for label, name in rows:
        seconds, rate = result[f"{name}_seconds"], result[f"{name}_mib_per_s"]
        print(f"{label:<32} {seconds:>9.3f} {rate:>9.0f}")
    ratio = result["ratio_vs_hashlib"]
    verdict = "within" if ratio <= GOAL_RATIO else "OUTSIDE"
    print(f"ratio store/hashlib: {ratio:.3f} ({verdict} the {GOAL_RATIO}x goal)")
    print(f"ratio store/openssl: {result['ratio_vs_openssl']:.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None, help="scratch folder (default: tmp)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if shutil.which("openssl") is None:
        print("openssl not found on PATH", file=sys.stderr)
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
