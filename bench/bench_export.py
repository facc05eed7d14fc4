"""Benchmark of ``snap export``: WARC and WACZ of N captured pages, against warcio alone.

Run: ``.venv/bin/python bench/bench_export.py [--pages N] [--json]``

Pages (about 20 KB each, gzip-encoded as servers send them) are captured from a loopback HTTP
server into an embedded snap home (SQLite + folder store). Then, in the same run:

* baseline: warcio writing one response record per page with the same stored bodies, read
  back through the same digest-checked store path (the least any WARC export has to do);
* ``snap export --format warc`` of every page (as one answer file citing them all): the
  selection query, the headers blob of each capture, request/response/metadata/conversion
  records with SHA-256 digests computed per record;
* ``snap export --format wacz``: the WARC plus its CDXJ index, pages and datapackage.

Each is timed three times; the best time is reported, with its ratio to the baseline.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from warcio.statusandheaders import StatusAndHeaders  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

from records.capture import capture_source  # noqa: E402
from records.exports.export import export  # noqa: E402
from records.exports.selection import select  # noqa: E402
from records.workspace import Workspace  # noqa: E402
from snap.config import Settings  # noqa: E402
from tests.http_fixtures import LoopbackServer  # noqa: E402

WORDS = ["cache", "origin", "request", "ratio", "latency", "edge", "purge", "header", "deploy"]


def page(number: int, rng: random.Random) -> bytes:
    paragraphs = "".join(
        "<p>" + " ".join(rng.choice(WORDS) for _ in range(60)) + ".</p>" for _ in range(50)
    )
    head = f"<html><head><title>Page {number}</title></head>"
    return f"{head}<body><main>{paragraphs}</main></body></html>".encode()


def best_of(runs: int, work: Any) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(7)
    folder = Path(tempfile.mkdtemp(prefix="snap-bench-export-"))
    settings = Settings.from_env({"SNAP_HOME": str(folder / "home"), "SNAP_ALLOW_PRIVATE": "1"})
    workspace = Workspace.open(settings)
    claims = []
    with LoopbackServer() as server:
        for number in range(args.pages):
            body = page(number, rng)
            server.route(
                f"/p{number}", body=gzip.compress(body), headers={"Content-Encoding": "gzip"}
            )
            url = server.url(f"/p{number}")
            capture_source(workspace, url)
            claims.append({"text": f"claim {number}", "url": url, "quote": "cache"})
    answer = folder / "answer.json"
    answer.write_text(json.dumps({"answerId": "bench", "claims": claims}), encoding="utf-8")
    selection = select(workspace, file=answer)
    assert len(selection.captures) == args.pages

    def baseline() -> None:
        with (folder / "baseline.warc.gz").open("wb") as out:
            writer = WARCWriter(out, gzip=True, warc_version="1.1")
            for capture in selection.captures:
                store = workspace.stores.store_for(capture.evidence)
                body = store.get("raw", capture.snapshot_id)
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], "HTTP/1.1")
                record = writer.create_warc_record(
                    capture.final_url,
                    "response",
                    payload=io.BytesIO(body),
                    length=len(body),
                    http_headers=http,
                )
                writer.write_record(record)

    def snap_export(fmt: str) -> None:
        out = folder / f"export.{fmt}"
        export(workspace, selection, fmt=fmt, out=out, force=True)

    results = {"pages": args.pages}
    results["baseline_s"] = best_of(3, baseline)
    results["warc_s"] = best_of(3, lambda: snap_export("warc"))
    results["wacz_s"] = best_of(3, lambda: snap_export("wacz"))
    results["warc_ratio"] = results["warc_s"] / results["baseline_s"]
    results["wacz_ratio"] = results["wacz_s"] / results["baseline_s"]
    results["warc_bytes"] = (folder / "export.warc").stat().st_size
    results["baseline_bytes"] = (folder / "baseline.warc.gz").stat().st_size
    workspace.close()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(
            f"{args.pages} pages: warcio baseline {results['baseline_s']:.3f} s;"
            f" snap export warc {results['warc_s']:.3f} s ({results['warc_ratio']:.2f}x);"
            f" wacz {results['wacz_s']:.3f} s ({results['wacz_ratio']:.2f}x);"
            f" sizes {results['warc_bytes']} vs {results['baseline_bytes']} bytes"
        )


if __name__ == "__main__":
    main()
