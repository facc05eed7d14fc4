"""Benchmark of offset conversion: prepared ``TextOffsets`` vs the two ways one would do it plainly.

Run: ``.venv/bin/python bench/bench_offsets.py [--json] [--calls N]``

On a 1 MB and a 10 MB text (mixed Latin, CJK, emoji and math letters), each contender converts
the same random code-point offsets to UTF-16 units and back, in the same run:

- ``encode prefix``: ``len(text[:cp].encode("utf-16-le")) // 2`` per call (what the one-shot
  functions did), O(N) per call;
- ``prefix table``: a full array of the UTF-16 offset of every code point, built once; O(1) per
  call to UTF-16 and a bisection back, but 8 bytes per code point;
- ``TextOffsets``: block checkpoints, built once; a bisection and at most one block per call.

Build time, time per call and the memory the prepared structure keeps (tracemalloc, in a pass of
its own, not while timing) are reported, with the ratio of ``TextOffsets`` per call to the
prefix-table floor.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tracemalloc
from array import array
from bisect import bisect_left
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verifier.offsets import TextOffsets

WORDS = ["cache", "origin", "naïve", "Straße", "缓存", "命中率", "😀", "𝑥", "ratio", "90%"]
SEED = 11


def make_text(size: int, rng: random.Random) -> str:
    words = rng.choices(WORDS, k=size // 5)
    return " ".join(words)[:size]


class PrefixTable:
    """The per-call floor: the UTF-16 offset of every code point; bisection for the way back."""

    def __init__(self, text: str) -> None:
        widths = (2 if ord(c) > 0xFFFF else 1 for c in text)
        self.units = array("q", accumulate(widths, initial=0))

    def to_utf16(self, cp: int) -> int:
        return self.units[cp]

    def to_codepoint(self, units: int) -> int:
        cp = bisect_left(self.units, units)
        if cp == len(self.units) or self.units[cp] != units:
            raise ValueError(f"UTF-16 offset {units} splits a surrogate pair")
        return cp


def encode_prefix_to_utf16(text: str, cp: int) -> int:
    return len(text[:cp].encode("utf-16-le", "surrogatepass")) // 2


def per_call_us(convert: Callable[[int], int], values: list[int]) -> float:
    started = time.perf_counter()
    for value in values:
        convert(value)
    return (time.perf_counter() - started) / len(values) * 1e6


def retained_mib(build: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        kept = build()
        kept.to_utf16(0)  # TextOffsets builds its table on first use
        return round(tracemalloc.get_traced_memory()[0] / 2**20, 2)
    finally:
        tracemalloc.stop()


def measure(size: int, calls: int, rng: random.Random) -> dict[str, Any]:
    text = make_text(size, rng)
    codepoints = [rng.randrange(len(text) + 1) for _ in range(calls)]
    started = time.perf_counter()
    prepared = TextOffsets(text)
    prepared.to_utf16(0)
    offsets_build = time.perf_counter() - started
    started = time.perf_counter()
    table = PrefixTable(text)
    table_build = time.perf_counter() - started
    units = [table.to_utf16(cp) for cp in codepoints]
    if [prepared.to_utf16(cp) for cp in codepoints] != units:
        raise SystemExit("TextOffsets disagrees with the prefix table")
    few = codepoints[: max(calls // 50, 5)]  # the O(N) contender is too slow for every call
    result = {
        "sizeMB": size / 1e6,
        "buildMs": {
            "textOffsets": round(offsets_build * 1000, 1),
            "prefixTable": round(table_build * 1000, 1),
        },
        "toUtf16Us": {
            "encodePrefix": round(per_call_us(lambda cp: encode_prefix_to_utf16(text, cp), few), 2),
            "prefixTable": round(per_call_us(table.to_utf16, codepoints), 2),
            "textOffsets": round(per_call_us(prepared.to_utf16, codepoints), 2),
        },
        "toCodepointUs": {
            "prefixTable": round(per_call_us(table.to_codepoint, units), 2),
            "textOffsets": round(per_call_us(prepared.to_codepoint, units), 2),
        },
        "retainedMiB": {
            "textOffsets": retained_mib(lambda: TextOffsets(text)),
            "prefixTable": retained_mib(lambda: PrefixTable(text)),
        },
    }
    result["ratioVsPrefixTable"] = {
        "toUtf16": round(
            result["toUtf16Us"]["textOffsets"] / result["toUtf16Us"]["prefixTable"], 1
        ),
        "toCodepoint": round(
            result["toCodepointUs"]["textOffsets"] / result["toCodepointUs"]["prefixTable"], 1
        ),
    }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    rng = random.Random(SEED)
    report = [measure(size, args.calls, rng) for size in (1_000_000, 10_000_000)]
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for row in report:
        print(f"{row['sizeMB']:.0f} MB text")
        for key in ("buildMs", "toUtf16Us", "toCodepointUs", "retainedMiB", "ratioVsPrefixTable"):
            print(f"  {key:<19} {row[key]}")


if __name__ == "__main__":
    main()
