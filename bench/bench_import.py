"""Benchmark of ``snap import``: a crawler-style WARC of N small HTML pages (gzip per record,
chunked gzip bodies, a request and a metadata record beside each response).

Run: ``.venv/bin/python bench/bench_import.py [--json] [--pages N]``

Two baselines in the same run: warcio alone reading every record and decoding every payload
(``content_stream().read()``), the least any importer must do; and snap's own capture path fed
the decoded bodies directly (spool, extract, store raw and text write-once, record a capture per
page), which is what a fetch of the same pages costs without the network. Then ``snap import``
into an empty embedded home (SQLite + folder store), and the same archive imported again
(everything ``exists``: it re-reads, re-extracts and finds the rows).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from records.imports.warc import import_archive  # noqa: E402
from records.wire import import_report_json  # noqa: E402
from records.workspace import Workspace  # noqa: E402
from snap.config import Settings  # noqa: E402
from tests.imports.warcs import CrawlerWarc  # noqa: E402

PARAGRAPH = (
    "<p>Page {n}: a cache hit ratio of {n} percent means the origin serves fewer requests,"
    " and the edge answers the rest from memory within a few milliseconds.</p>"
)


def write_warc(path: Path, pages: int) -> None:
    warc = CrawlerWarc(path)
    for n in range(pages):
        url = f"http://example.test/page/{n}"
        body = "".join(PARAGRAPH.format(n=n + i) for i in range(20))
        html = f"<html><head><title>Page {n}</title></head><body><main>{body}</main></body></html>"
        warc.request(url)
        warc.response(url, html.encode(), date=f"2024-05-01T12:{n // 60 % 60:02d}:{n % 60:02d}Z")
        warc.metadata(url)
    warc.write()


def warcio_baseline(path: Path) -> float:
    from warcio.archiveiterator import ArchiveIterator

    start = time.perf_counter()
    with path.open("rb") as handle:
        for record in ArchiveIterator(handle):
            if record.rec_type == "response":
                record.content_stream().read()
    return time.perf_counter() - start


def capture_path_baseline(path: Path, home: Path) -> float:
    """The decoded bodies through spool, extract-and-store and record_snapshot, one per page."""
    from warcio.archiveiterator import ArchiveIterator

    from records.repository import record_snapshot
    from snapshotter.capture import extract_and_store
    from snapshotter.fetch import spool_body

    bodies = []
    with path.open("rb") as handle:
        for record in ArchiveIterator(handle):
            if record.rec_type == "response":
                url = record.rec_headers.get_header("WARC-Target-URI")
                date = record.rec_headers.get_header("WARC-Date")
                bodies.append((url, date, record.content_stream().read()))
    workspace = Workspace.open(settings(home))
    try:
        start = time.perf_counter()
        for url, date, body in bodies:
            provenance: dict[str, object] = {"fetchedAt": date}
            fetched = spool_body(
                [body],
                content_encoding="identity",
                max_bytes=10_000_000,
                url=url,
                status=200,
                content_type="text/html; charset=utf-8",
                provenance=provenance,
            )
            try:
                snapshot = extract_and_store(fetched, workspace.store)
            finally:
                fetched.cleanup()
            with workspace.db.session() as session:
                record_snapshot(session, snapshot)
        return time.perf_counter() - start
    finally:
        workspace.close()


def settings(home: Path) -> Settings:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SNAP_")}
    return Settings.from_env(env | {"SNAP_HOME": str(home)})


def timed_import(path: Path, home: Path) -> tuple[float, dict[str, Any]]:
    workspace = Workspace.open(settings(home))
    try:
        start = time.perf_counter()
        report = import_archive(workspace, path)
        return time.perf_counter() - start, import_report_json(report)["summary"]
    finally:
        workspace.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "crawl.warc.gz"
        write_warc(path, args.pages)
        warcio_baseline(path)  # warm the page cache and imports
        baseline = min(warcio_baseline(path) for _ in range(3))
        capture = capture_path_baseline(path, Path(folder) / "baseline-home")
        first, first_summary = timed_import(path, Path(folder) / "home")
        again, again_summary = timed_import(path, Path(folder) / "home")
        result = {
            "pages": args.pages,
            "warcBytes": path.stat().st_size,
            "seconds": {
                "warcioRead": baseline,
                "capturePath": capture,
                "import": first,
                "reimport": again,
            },
            "ratioToWarcio": {"import": first / baseline, "reimport": again / baseline},
            "ratioToCapturePath": {"import": first / capture, "reimport": again / capture},
            "pagesPerSecond": {"import": args.pages / first, "reimport": args.pages / again},
            "summaries": {"import": first_summary, "reimport": again_summary},
        }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.pages} pages, {result['warcBytes']} bytes of WARC")
    print(f"  warcio read + decode   {baseline * 1000:8.1f} ms   (baseline 1)")
    print(f"  snap's capture path    {capture * 1000:8.1f} ms   (baseline 2)")
    for name in ("import", "reimport"):
        seconds = result["seconds"][name]
        ratio = result["ratioToWarcio"][name]
        ratio2 = result["ratioToCapturePath"][name]
        rate = result["pagesPerSecond"][name]
        print(
            f"  snap {name:<17} {seconds * 1000:8.1f} ms   x{ratio:.0f} of 1,"
            f" x{ratio2:.2f} of 2, {rate:.0f} pages/s"
        )


if __name__ == "__main__":
    main()
