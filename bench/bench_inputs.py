"""Benchmark of the one input reader on a large provider response.

Run: ``.venv/bin/python bench/bench_inputs.py [--json] [--citations N]``

Baseline: ``json.loads`` of the file's bytes, the fastest reasonable way to read JSON in
Python (what snap did before the reader). Measured in the same run: the reader
(``load_json_input``: bounded read, decode, number hooks, the depth and storable-text walk)
and reader plus the Anthropic adapter (``parse_document``). Reports the median of five runs of
each and the ratios to the baseline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from records.inputs import parse_document
from records.inputs.reader import load_json_input

RUNS = 5


def response(citations: int) -> dict[str, Any]:
    """A Claude message with ``citations`` cited text blocks over two URL documents."""
    content: list[dict[str, Any]] = []
    for n in range(citations):
        content.append({"type": "text", "text": f"Claim number {n} says something. "})
        content.append(
            {
                "type": "text",
                "text": f"the ratio was {n % 100}.5 percent in 202{n % 10}",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": f"https://127.0.0.1:9/page/{n % 50}",
                        "title": f"Page {n % 50}",
                        "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm" * 2,
                        "cited_text": f"In 202{n % 10} the ratio was {n % 100}.5 percent. " * 3,
                    }
                ],
            }
        )
    return {"id": "msg_bench", "type": "message", "role": "assistant", "content": content}


def median_seconds(work: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--citations", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "response.json"
        path.write_text(json.dumps(response(args.citations)), encoding="utf-8")
        size = path.stat().st_size
        baseline = median_seconds(lambda: json.loads(path.read_bytes()))
        reader = median_seconds(lambda: load_json_input(path))
        adapter = median_seconds(lambda: parse_document(load_json_input(path)))
    result = {
        "bytes": size,
        "citations": args.citations,
        "baselineJsonLoadsSeconds": round(baseline, 4),
        "readerSeconds": round(reader, 4),
        "readerAndAdapterSeconds": round(adapter, 4),
        "readerRatio": round(reader / baseline, 2),
        "readerAndAdapterRatio": round(adapter / baseline, 2),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{size / 1e6:.1f} MB response, {args.citations} citations (median of {RUNS} runs)")
    print(f"  json.loads (baseline)   {baseline:.3f} s")
    print(f"  reader                  {reader:.3f} s  ({result['readerRatio']}x)")
    print(f"  reader + adapter        {adapter:.3f} s  ({result['readerAndAdapterRatio']}x)")


if __name__ == "__main__":
    main()
