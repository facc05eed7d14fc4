"""Benchmark of capture throughput: fetch → extract → store for 200 small HTML pages.

Run: ``.venv/bin/python bench/bench_capture.py [--json] [--pages N] [--s3-endpoint URL]``

Pages come from a loopback HTTP server started here.  Each store is filled twice with the same
pages: the first run writes every blob, the second must write nothing new (content addressing
makes a re-capture of unchanged pages free of writes), which the report shows as counts.
The baseline in the same run is fetch alone (no extraction, no store), so the ratios say what
extraction and storage cost on top of the network read.  Timed runs go without tracemalloc (it
slows allocation-heavy code such as extraction about twofold); peak memory comes from a separate
pass with tracemalloc on, filling fresh stores once more.

The S3 store needs an S3 API over HTTP (``bash localstack/start.sh``; default endpoint
``http://127.0.0.1:4566``, or ``$SNAP_TEST_S3_ENDPOINT``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from snapshotter.capture import capture  # noqa: E402
from snapshotter.fetch import FetchOptions, fetch  # noqa: E402
from snapshotter.store import BlobStore, FolderStore  # noqa: E402
from tests.http_fixtures import LoopbackServer  # noqa: E402
from tests.s3_support import new_s3_store  # noqa: E402

WORDS = [
    "cache",
    "origin",
    "request",
    "ratio",
    "latency",
    "edge",
    "purge",
    "header",
    "cookie",
    "path",
    "deploy",
    "percent",
    "key",
    "value",
    "entry",
    "reader",
    "response",
    "network",
]


def page(n: int, rng: random.Random) -> bytes:
    paragraphs = "".join(
        "<p>" + " ".join(rng.choice(WORDS) for _ in range(60)) + f" {rng.randint(0, 999)}.</p>"
        for _ in range(6)
    )
    return (
        f"<!DOCTYPE html><html><head><title>Page {n}</title></head><body><nav>Home Blog"
        f"</nav><article><h1>Article {n}</h1>{paragraphs}</article>"
        f"<footer>© 2026</footer></body></html>"
    ).encode()


def timed_run(urls: list[str], work: Any) -> dict[str, Any]:
    started = time.perf_counter()
    written = sum(work(url) for url in urls)
    seconds = time.perf_counter() - started
    return {"pagesPerSecond": round(len(urls) / seconds, 1), "blobsWritten": written}


def peak_mib(urls: list[str], work: Any) -> float:
    """tracemalloc's peak over a run that is not timed."""
    tracemalloc.start()
    try:
        for url in urls:
            work(url)
        return round(tracemalloc.get_traced_memory()[1] / 2**20, 2)
    finally:
        tracemalloc.stop()


def fresh_stores(folder: Path, endpoint: str) -> dict[str, BlobStore]:
    return {"folder": FolderStore(folder / "store"), "s3": new_s3_store(endpoint)}


def capture_into(store: BlobStore, options: FetchOptions) -> Any:
    def work(url: str) -> int:
        record = capture(url, store, options)
        blobs = [record.raw_blob, record.text_blob]
        return sum(1 for blob in blobs if blob is not None and blob.created)

    return work


def fetch_only(options: FetchOptions) -> Any:
    def work(url: str) -> int:
        fetch(url, options).cleanup()
        return 0

    return work


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument(
        "--s3-endpoint", default=os.environ.get("SNAP_TEST_S3_ENDPOINT", "http://127.0.0.1:4566")
    )
    args = parser.parse_args()
    rng = random.Random(3)
    options = FetchOptions(max_bytes=50 * 2**20, timeout=10, max_redirects=5, allow_private=True)
    report: dict[str, Any] = {}
    with LoopbackServer() as server, tempfile.TemporaryDirectory() as folder:
        for n in range(args.pages):
            server.route(f"/p{n}", body=page(n, rng))
        urls = [server.url(f"/p{n}") for n in range(args.pages)]
        # Warm up: the first capture imports the HTML extractor, a one-off per process.
        capture(urls[0], FolderStore(Path(folder) / "warm-up"), options)
        report["fetchOnly"] = timed_run(urls, fetch_only(options))
        for name, store in fresh_stores(Path(folder) / "timed", args.s3_endpoint).items():
            first = timed_run(urls, capture_into(store, options))
            second = timed_run(urls, capture_into(store, options))
            first["slowdownVsFetchOnly"] = round(
                report["fetchOnly"]["pagesPerSecond"] / first["pagesPerSecond"], 2
            )
            report[name] = {"firstRun": first, "secondRun": second}
        report["fetchOnly"]["peakMiB"] = peak_mib(urls, fetch_only(options))
        for name, store in fresh_stores(Path(folder) / "traced", args.s3_endpoint).items():
            report[name]["firstRun"]["peakMiB"] = peak_mib(urls, capture_into(store, options))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"fetch only: {report['fetchOnly']}")
    for name in ("folder", "s3"):
        print(f"{name:7} first:  {report[name]['firstRun']}")
        print(f"{name:7} second: {report[name]['secondRun']}")


if __name__ == "__main__":
    main()
