"""Why one-off ``check_quote`` on small real documents is not ≤ 1× the JavaScript reference.

Run: ``.venv/bin/python bench/bench_small_floor.py [--rounds 5]``

On ``bench_realtext``'s set of small real documents (1-3 KB pages, an even mix of copied and
changed quotes), each round times, in CPU time and interleaved with one round of the reference in
node, per call: ``check_quote``; the parts of it no one-off check can skip (tokenizing the quote;
tokenizing it and a window as long as it, the bench's floor); and the whole-source work a changed
quote's closest passage needs (``prepare(source)``, ``prepare(source).check``, ``scan_text``).
Each is reported as the ratio of its median and 90th percentile to the reference's whole call,
min / median over the rounds, and for the copied and changed quotes apart.  When preparing the
source alone is about 1× the reference's whole call, a call that must read most of the source
(the closest passage of a changed quote on a page this small) cannot be ≤ 1×.

``--instructions`` counts instead, under callgrind, the instructions a call of ``check_quote``
and of the full check ``prepare(source).check(quote)`` executes, for the copied and the changed
quotes apart (three passes minus one, so loading and warming cancel): the proposed goal reads
changed quotes against snap's own full check, which load does not move.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import bench_realtext  # noqa: E402
import real_corpus  # noqa: E402

from verifier import check_quote, prepare  # noqa: E402
from verifier.tokenizer import scan_text  # noqa: E402

PARTS: dict[str, Callable[[str, str], object]] = {
    "check_quote": check_quote,
    "tokenize the quote": lambda quote, source: scan_text(quote),
    "the quote and a window as long (floor)": lambda quote, source: (
        scan_text(quote),
        prepare(quote),
    ),
    "prepare(source)": lambda quote, source: prepare(source),
    "prepare(source).check(quote)": lambda quote, source: prepare(source).check(quote),
    "scan_text(source)": lambda quote, source: scan_text(source),
}


COUNTED = {"check_quote": "check_quote", "full check": "prepare(source).check(quote)"}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--instructions", action="store_true", help="count under callgrind")
    parser.add_argument("--passes", nargs=4, help=argparse.SUPPRESS)  # a child: see run_passes
    arguments = parser.parse_args()
    if arguments.passes:
        part, kind, passes, calls_file = arguments.passes
        run_passes(PARTS[part], kind == "copied", int(passes), Path(calls_file))
    elif arguments.instructions:
        count_instructions()
    else:
        time_rounds(arguments.rounds)


def small_calls() -> tuple[list[tuple[str, str]], list[bool]]:
    """The bench's calls on small real documents, and whether each quote is found."""
    corpus = real_corpus.load()
    sets = bench_realtext.one_off_sets(corpus, random.Random(bench_realtext.SEED))
    calls = [(s, q) for s, quotes in sets["real small documents"] for q in quotes]
    return calls, [prepare(source).check(quote).found for source, quote in calls]


def run_passes(
    part: Callable[[str, str], object], copied: bool, passes: int, calls_file: Path
) -> None:
    """The child under callgrind: one warm pass over every call, then ``passes`` over the
    calls of one kind. The calls come from ``calls_file`` (JSON), written by the parent: drawing
    them takes longer under callgrind than the passes."""
    listed = json.loads(calls_file.read_text(encoding="utf-8"))
    calls = [(source, quote) for source, quote, _found in listed]
    found = [was_found for _source, _quote, was_found in listed]
    chosen = [call for call, was_found in zip(calls, found, strict=True) if was_found == copied]
    for source, quote in calls:
        part(quote, source)
    for _ in range(passes):
        for source, quote in chosen:
            part(quote, source)
    print(len(chosen))


def count_instructions() -> None:
    from bench_startup import instructions

    env = {**os.environ, "PYTHONHASHSEED": "0"}
    calls, found = small_calls()
    sizes = {"copied": sum(found), "changed": len(found) - sum(found)}
    print("instructions a call (callgrind, PYTHONHASHSEED=0, three passes minus one), millions")
    per_call: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory() as folder:
        calls_file = Path(folder) / "calls.json"
        listed = [[s, q, f] for (s, q), f in zip(calls, found, strict=True)]
        calls_file.write_text(json.dumps(listed), encoding="utf-8")
        for kind in ("copied", "changed"):
            for name, part in COUNTED.items():
                counts = []
                for passes in (1, 3):
                    argv = [sys.executable, __file__, "--passes", part, kind, str(passes)]
                    counts.append(instructions([*argv, str(calls_file)], env))
                per_call[(kind, name)] = (counts[1] - counts[0]) / 2
    for kind in ("copied", "changed"):
        one_off = per_call[(kind, "check_quote")] / sizes[kind]
        full = per_call[(kind, "full check")] / sizes[kind]
        print(
            f"  {kind:<8} ({sizes[kind]} calls): check_quote {one_off / 1e6:.3f} M,"
            f" full check {full / 1e6:.3f} M, ratio {one_off / full:.3f}"
        )


def time_rounds(rounds: int) -> None:
    bench_realtext.clock = bench_realtext.CLOCK["cpu"]
    corpus = real_corpus.load()
    sets = bench_realtext.one_off_sets(corpus, random.Random(bench_realtext.SEED))
    small = sets["real small documents"]
    calls = [(source, quote) for source, quotes in small for quote in quotes]
    found = [prepare(source).check(quote).found for source, quote in calls]
    gc.collect()
    gc.freeze()
    for source, quote in calls:  # warm: the twin earned, the description caches filled
        for part in PARTS.values():
            part(quote, source)
    load_before = os.getloadavg()
    times: dict[str, list[list[float]]] = {name: [] for name in [*PARTS, "js"]}
    for number in range(rounds):
        times["js"].append(bench_realtext.node_round({"small": small}, {}, True)["calls"]["small"])
        for name, part in PARTS.items():
            row = []
            for source, quote in calls:
                began = bench_realtext.clock()
                part(quote, source)
                row.append(bench_realtext.clock() - began)
            times[name].append(row)
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    print(f"{len(calls)} calls over {len(small)} documents, CPU time, {rounds} rounds")
    print(f"load average before {load_before}, after {os.getloadavg()}")
    print("ratios to the reference's whole call, min / median over rounds")
    for name in PARTS:
        print(f"  {name:<40} {_ratios(times[name], times['js'], found)}")
    js_us = statistics.median(statistics.median(row) for row in times["js"]) * 1e6
    print(f"  (the reference's median call: {js_us:.0f} µs)")


def _ratios(rows: list[list[float]], js: list[list[float]], found: list[bool]) -> str:
    def ratio(pick: Callable[[list[float]], float], keep: Callable[[bool], bool]) -> list[float]:
        return [
            pick([t for t, f in zip(row, found, strict=True) if keep(f)])
            / pick([t for t, f in zip(ref, found, strict=True) if keep(f)])
            for row, ref in zip(rows, js, strict=True)
        ]

    def p90(values: list[float]) -> float:
        return bench_realtext.percentile(values, 0.9)

    def either(_: bool) -> bool:
        return True

    def copied(f: bool) -> bool:
        return f

    def changed(f: bool) -> bool:
        return not f

    figures = {
        "median": ratio(statistics.median, either),
        "p90": ratio(p90, either),
        "copied": ratio(statistics.median, copied),
        "changed": ratio(statistics.median, changed),
    }
    return ", ".join(
        f"{name} {min(values):.2f} / {statistics.median(values):.2f}"
        for name, values in figures.items()
    )


if __name__ == "__main__":
    main()
