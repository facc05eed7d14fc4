"""Issue 25's verifier goals on real pages and on synthetic text, against the JavaScript reference.

Run: ``.venv/bin/python bench/bench_realtext.py [--rounds 5] [--clock wall|cpu] [--json]``
     ``.venv/bin/python bench/bench_realtext.py --differential``

The real pages are the corpus ``bench/real_corpus.py`` builds from Debian's documentation packages
(it says what to install when they are missing); the synthetic text is ``bench_verifier``'s.
Every figure is a ratio against a baseline timed in the same run, in ``--rounds`` rounds that
interleave snap and node (their order alternates), reported as the min and the median over the
rounds, with the load average before and after.  ``--clock cpu`` times both sides in CPU time
(``time.thread_time``, node's ``process.cpuUsage``, which also counts V8's helper threads) for a
machine too loaded for wall time; the default is wall time, for a quiet machine:

1. one-off ``check_quote(quote, source)`` per call against the reference's ``checkQuote`` (which
   tokenizes the source on every call, as a one-off check must), the ratio of the medians and
   of the 90th percentiles of the per-call times (goal ≤ 1×), on 1 MB real pages (each manual's
   pages joined), on small real documents (1-3 KB), and on the synthetic sets; the quotes are an
   even mix of copied and changed ones (one word changed, dropped or added, a number changed);
2. preparing (``prepare(source)``) against the reference's tokenizing of the same text
   (``checkQuote("", source)`` returns right after tokenizing it): throughput ratio, goal ≥ 1×,
   in bytes and per token each side makes (the proposed goal: snap makes a token of every
   symbol run and CJK character, the reference fewer; the reference's tokenizer is imported for
   counting only, its own call is what is timed);
   beside it a floor, ``regex.findall`` of words and symbol runs over the same text; linearity
   (preparing a 4 MB page ÷ preparing its four quarters one by one: the same text, so content
   cannot move the ratio, only size); and on each 1 MB page the prepared check's per-quote p99
   and maximum over its median (goals ≤ 5× and ≤ 20×), of the even mix and of each kind of
   answer (found, not found) over its own median.

``--differential`` checks instead that the fast paths give the full check's answers on the whole
real corpus: the one-off check against ``prepare(source).check`` (status, matches, spans, the
closest passage) for quotes drawn from every page and page joined, and the tokens of every text
read piece by piece (the twin where it can) against the scanner's alone.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import regex

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import real_corpus  # noqa: E402
from bench_verifier import REFERENCE, make_quotes, make_source  # noqa: E402
from real_corpus import CorpusMissing, draw_quotes  # noqa: E402

from verifier import Status, check_quote, prepare  # noqa: E402
from verifier import tokenizer as tokenizer_module  # noqa: E402
from verifier.tokenizer import scan_text  # noqa: E402

SEED = 25
SMALL_DOCUMENTS = 60
QUOTES_PER_SMALL = 6
QUOTES_PER_LARGE = 8
QUOTES_PER_PREPARED = 400
FLOOR = regex.compile(r"\w+|[^\w\s]+")

Calls = list[tuple[str, list[str]]]
"""(source, quotes) pairs: what one set of one-off calls checks."""


def one_off_sets(corpus: real_corpus.Corpus, rng: random.Random) -> dict[str, Calls]:
    """The sets of one-off calls, real and synthetic, small and 1 MB."""
    documents = rng.sample(corpus.documents(), min(SMALL_DOCUMENTS, len(corpus.documents())))
    small = [
        (page.text, _texts(draw_quotes(page.text, QUOTES_PER_SMALL, rng))) for page in documents
    ]
    large = [
        (text, _texts(draw_quotes(text, QUOTES_PER_LARGE, rng))) for text in corpus.books().values()
    ]
    synthetic_small = []
    for _ in range(30):
        source = make_source(rng.randint(1_000, 3_000), rng)
        synthetic_small.append((source, [q for q, _ in make_quotes(source, 6, rng)]))
    synthetic = make_source(1_000_000, rng)
    return {
        "real 1 MB pages": large,
        "real small documents": small,
        "synthetic 1 MB": [
            (synthetic, [q for q, _ in make_quotes(synthetic, QUOTES_PER_LARGE, rng)])
        ],
        "synthetic small": synthetic_small,
    }


def _texts(quotes: list[real_corpus.Quote]) -> list[str]:
    return [quote.text for quote in quotes]


CLOCK = {"wall": time.perf_counter, "cpu": time.thread_time}
clock = CLOCK["wall"]


def quote_floor(calls: Calls) -> list[float]:
    """Per-call seconds of the least a one-off check can do in snap: tokenize the quote, and a
    window of the source as long as the quote (the quote itself stands in for it)."""
    times = []
    for _, quotes in calls:
        for quote in quotes:
            began = clock()
            scan_text(quote)
            prepare(quote)
            times.append(clock() - began)
    return times


def python_one_off(calls: Calls) -> list[float]:
    """Per-call seconds of ``check_quote`` over ``calls``."""
    times = []
    for source, quotes in calls:
        for quote in quotes:
            began = clock()
            check_quote(quote, source)
            times.append(clock() - began)
    return times


_NODE = """
import {checkQuote} from %s;
import {readFileSync} from 'node:fs';
// The reference exports checkQuote alone; its tokenizer is reached, for counting tokens only,
// by importing the same file's text with an export of it appended.
const source = readFileSync(new URL(%s), 'utf8') + '\\nexport {tokenize};';
const {tokenize} = await import('data:text/javascript,' + encodeURIComponent(source));
let input = '';
process.stdin.on('data', d => input += d);
process.stdin.on('end', () => {
  const {sets, texts, warm, cpu} = JSON.parse(input);
  const used = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
  const seconds = cpu ? (f) => { const b = used(); f(); return used() - b; }
                      : (f) => { const b = process.hrtime.bigint(); f();
                                 return Number(process.hrtime.bigint() - b) / 1e9; };
  if (warm) for (const calls of Object.values(sets))
    for (const [source, quotes] of calls) for (const q of quotes) checkQuote(q, source);
  const out = {calls: {}, tokenize: {}};
  for (const [name, calls] of Object.entries(sets)) {
    out.calls[name] = [];
    for (const [source, quotes] of calls)
      for (const q of quotes) out.calls[name].push(seconds(() => checkQuote(q, source)));
  }
  out.tokens = {};
  for (const [name, text] of Object.entries(texts)) {
    out.tokenize[name] = seconds(() => checkQuote('', text));
    out.tokens[name] = tokenize(text).length;
  }
  process.stdout.write(JSON.stringify(out));
});
"""


def node_round(sets: dict[str, Calls], texts: dict[str, str], warm: bool) -> dict[str, Any]:
    """One round of the JavaScript reference, in node: per-call seconds of every set, and the
    seconds it takes to tokenize each text."""
    node = shutil.which("node")
    if node is None or not REFERENCE.exists():
        raise SystemExit(f"the JavaScript reference needs node and {REFERENCE}")
    completed = subprocess.run(
        [node, "--input-type=module", "-e", _NODE % ((json.dumps(REFERENCE.as_uri()),) * 2)],
        input=json.dumps(
            {"sets": sets, "texts": texts, "warm": warm, "cpu": clock is CLOCK["cpu"]}
        ),
        capture_output=True,
        text=True,
        check=True,
        timeout=3_600,
    )
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)]


def _quarters(text: str) -> list[str]:
    """``text`` cut in four pieces of equal length (a cut may split a word: each piece is
    tokenized as a text of its own, and the few tokens at the cuts do not move the ratio)."""
    return [text[index * len(text) // 4 : (index + 1) * len(text) // 4] for index in range(4)]


def seconds(function: Callable[[], object]) -> float:
    began = clock()
    function()
    return clock() - began


def prepared_spread(text: str, quotes: list[str]) -> dict[str, float]:
    """The prepared check's per-quote seconds on ``text``: p99 and maximum over the median, of
    the whole even mix and of each kind of answer (found, not found) over its own median.

    The whole mix's median sits between two kinds of work (a found quote is settled by its
    occurrences, a quote not found needs the closest passage, about three times as long), so it
    moves with the mix and with whichever kind gets faster; within a kind the ratio says how
    far the slow quotes are from the usual ones."""
    prepared = prepare(text)
    prepared.check(quotes[0])
    prepared.check(quotes[0])  # the key index is built on the second check
    times: list[float] = []
    by_kind: dict[str, list[float]] = {"found": [], "not_found": []}
    for quote in quotes:
        began = clock()
        result = prepared.check(quote)
        spent = clock() - began
        times.append(spent)
        kind = _KINDS.get(result.status)
        if kind is not None:  # a quote that could not be checked counts in the mix alone
            by_kind[kind].append(spent)
    spread = _spread(times)
    for kind, kind_times in by_kind.items():
        for key, value in _spread(kind_times).items():
            spread[f"{kind}_{key}"] = value
    return spread


_KINDS = {Status.QUOTE_FOUND: "found", Status.NOT_FOUND: "not_found"}


def _spread(times: list[float]) -> dict[str, float]:
    median = statistics.median(times)
    return {
        "median_us": median * 1e6,
        "p99_us": percentile(times, 0.99) * 1e6,
        "max_us": max(times) * 1e6,
        "p99_over_median": percentile(times, 0.99) / median,
        "max_over_median": max(times) / median,
    }


def run(rounds: int) -> dict[str, Any]:
    corpus = real_corpus.load()
    rng = random.Random(SEED)
    sets = one_off_sets(corpus, rng)
    books = corpus.books()
    texts = {**books, "synthetic": sets["synthetic 1 MB"][0][0]}
    first = next(iter(books))
    long_text = corpus.books(4 * real_corpus.BOOK_SIZE).get(first)
    spread_quotes = {
        name: _texts(draw_quotes(text, QUOTES_PER_PREPARED, rng)) for name, text in texts.items()
    }
    tokens = {name: len(prepare(text)) for name, text in texts.items()}
    gc.collect()
    gc.freeze()  # the corpus and the quote sets are the bench's, not a checker's: not traversed
    load_before = os.getloadavg()
    python_one_off([(source, quotes[:1]) for calls in sets.values() for source, quotes in calls])
    rows: list[dict[str, Any]] = []
    for number in range(rounds):
        row: dict[str, Any] = {"one_off": {}, "prepare": {}, "spread": {}}
        node_first = number % 2 == 1
        js = node_round(sets, texts, warm=number == 0) if node_first else None
        snap = {name: python_one_off(calls) for name, calls in sets.items()}
        floors = {name: quote_floor(calls) for name, calls in sets.items()}
        preparing = {name: seconds(lambda text=text: prepare(text)) for name, text in texts.items()}
        floor = {
            name: seconds(lambda text=text: FLOOR.findall(text)) for name, text in texts.items()
        }
        if js is None:
            js = node_round(sets, texts, warm=number == 0)
        for name, times in snap.items():
            reference = js["calls"][name]
            row["one_off"][name] = {
                "median": statistics.median(times) / statistics.median(reference),
                "p90": percentile(times, 0.9) / percentile(reference, 0.9),
                "snap_median_us": statistics.median(times) * 1e6,
                "js_median_us": statistics.median(reference) * 1e6,
                "floor_median": statistics.median(floors[name]) / statistics.median(reference),
            }
        for name, text in texts.items():
            megabytes = len(text.encode("utf-8")) / 1e6
            row["prepare"][name] = {
                "throughput_vs_js": js["tokenize"][name] / preparing[name],
                # the same ratio per token each side makes (the proposed goal)
                "per_token_vs_js": (tokens[name] / preparing[name])
                / (js["tokens"][name] / js["tokenize"][name]),
                "js_tokens": js["tokens"][name],
                "snap_mb_s": megabytes / preparing[name],
                "js_mb_s": megabytes / js["tokenize"][name],
                "floor_mb_s": megabytes / floor[name],
            }
        if long_text is not None:
            row["linearity"] = seconds(lambda: prepare(long_text)) / seconds(
                lambda: [prepare(quarter) for quarter in _quarters(long_text)]
            )
        for name, text in texts.items():
            spread = prepared_spread(text, spread_quotes[name])
            for key in ("p99", "max"):  # the proposed goal: against what a kept source saves
                spread[f"{key}_over_prepare"] = spread[f"{key}_us"] / 1e6 / preparing[name]
            row["spread"][name] = spread
        rows.append(row)
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    return {
        "rounds": rows,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "sizes": {
            name: [len(calls), sum(len(q) for _, q in calls)] for name, calls in sets.items()
        },
        "books": list(books),
        "tokens": tokens,
        "tokens_per_mb": {
            name: tokens[name] / (len(text.encode("utf-8")) / 1e6) for name, text in texts.items()
        },
        "clock": "cpu" if clock is CLOCK["cpu"] else "wall",
        "missing": corpus.missing,
    }


def _min_median(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f}"


def print_report(report: dict[str, Any]) -> None:
    rows = report["rounds"]
    print(
        f"rounds: {len(rows)} (snap and node interleaved), {report['clock']} time; figures are"
        " min / median over rounds"
    )
    print(f"load average before {report['load_before']}, after {report['load_after']}")
    print(f"1 MB real pages: {', '.join(report['books'])}")
    if report["missing"]:
        print(f"manuals left out (not installed): {', '.join(report['missing'])}")
    print("\nGoal 1: one-off check_quote ÷ the JS reference, per call (≤ 1×)")
    print(
        f"  {'set (documents, calls)':<38} {'median ratio':>14} {'p90 ratio':>14}"
        "   snap / JS median; snap's floor ÷ JS"
    )
    for name, (documents, calls) in report["sizes"].items():
        figures = [row["one_off"][name] for row in rows]
        medians = _min_median([f["median"] for f in figures])
        p90s = _min_median([f["p90"] for f in figures])
        snap_us = statistics.median(f["snap_median_us"] for f in figures)
        js_us = statistics.median(f["js_median_us"] for f in figures)
        floor = statistics.median(f["floor_median"] for f in figures)
        label = f"{name} ({documents}, {calls})"
        print(
            f"  {label:<38} {medians:>14} {p90s:>14}   {snap_us:,.0f} / {js_us:,.0f} µs;"
            f" {floor:.2f}"
        )
    print(
        "  (snap's floor: tokenizing only the quote and a window as long as it, the least a"
        " one-off check reads)"
    )
    print("\nGoal 2: preparing ÷ the JS reference's tokenizing, throughput (≥ 1×)")
    print(
        f"  {'text':<22} {'ratio':>12} {'per token':>12}   snap / JS / regex floor MB/s"
        " (medians); tokens per MB, snap / JS"
    )
    for name in rows[0]["prepare"]:
        figures = [row["prepare"][name] for row in rows]
        ratio = _min_median([f["throughput_vs_js"] for f in figures])
        rates = " / ".join(
            f"{statistics.median(f[key] for f in figures):.2f}"
            for key in ("snap_mb_s", "js_mb_s", "floor_mb_s")
        )
        per_token = _min_median([f["per_token_vs_js"] for f in figures])
        per_mb = report["tokens_per_mb"][name]
        js_per_mb = figures[0]["js_tokens"] * per_mb / report["tokens"][name]
        counts = f"{per_mb:,.0f} / {js_per_mb:,.0f}"
        print(f"  {name:<22} {ratio:>12} {per_token:>12}   {rates}; {counts}")
    if "linearity" in rows[0]:
        linearity = _min_median([row["linearity"] for row in rows])
        print(f"  linearity, 4 MB ÷ its four quarters prepared apart (≈ 1): {linearity}")
    print("\nGoal 2: prepared check per quote on 1 MB (p99 ≤ 5× median, max ≤ 20×)")
    print("  the even mix, then each kind of answer over its own median")
    for name in rows[0]["spread"]:
        figures = [row["spread"][name] for row in rows]
        line = [f"  {name:<22}"]
        for label, prefix in (("mix", ""), ("found", "found_"), ("not found", "not_found_")):
            p99 = _min_median([f[f"{prefix}p99_over_median"] for f in figures])
            most = _min_median([f[f"{prefix}max_over_median"] for f in figures])
            median = statistics.median(f[f"{prefix}median_us"] for f in figures)
            line.append(f"{label}: p99 {p99}×, max {most}×, median {median:.0f} µs")
        p99 = _min_median([100 * f["p99_over_prepare"] for f in figures])
        most = _min_median([100 * f["max_over_prepare"] for f in figures])
        line.append(f"÷ preparing the page (proposed: p99 ≤ 1%, max ≤ 5%): p99 {p99}%, max {most}%")
        print("\n    ".join(line))


# Differential ------------------------------------------------------------------------------


def differential(quotes_per_page: int) -> dict[str, int]:
    """The one-off check against the prepared check, and the tokens read piece by piece against
    the scanner's alone, over every page of the corpus and every 1 MB page."""
    corpus = real_corpus.load()
    rng = random.Random(SEED)
    texts = [page.text for page in corpus.pages] + list(corpus.books().values())
    counts = {"texts": len(texts), "characters": sum(map(len, texts)), "quotes": 0}
    counts |= {"found": 0, "answer_differences": 0, "token_differences": 0}
    for number, text in enumerate(texts):
        prepared = prepare(text)
        for quote in draw_quotes(text, quotes_per_page, rng):
            one_off = check_quote(quote.text, text)
            counts["quotes"] += 1
            counts["found"] += one_off.found
            if one_off != prepared.check(quote.text):
                counts["answer_differences"] += 1
                print(f"answer differs: {quote.text!r} in text {number}", file=sys.stderr)
        if _pieces_differ(text):
            counts["token_differences"] += 1
            print(f"tokens differ in text {number}", file=sys.stderr)
    return counts


def _pieces_differ(text: str) -> bool:
    """Do the tokens of ``text`` read piece by piece (the twin where it can) differ from the
    scanner's alone?"""
    rows = []
    for scanner in (tokenizer_module._twin(True), tokenizer_module._SCANNER):
        side: list[tokenizer_module.SideItem] = []
        with mock.patch.object(tokenizer_module, "_scanner_for", return_value=scanner):
            batches = tokenizer_module.iter_columns(text, side)
            rows.append(([row for batch in batches for row in batch.rows()], side))
    return rows[0] != rows[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--differential", action="store_true")
    parser.add_argument("--quotes-per-page", type=int, default=8)
    args = parser.parse_args()
    global clock  # one clock for the whole run, chosen on the command line
    clock = CLOCK[args.clock]
    try:
        if args.differential:
            counts = differential(args.quotes_per_page)
            print(json.dumps(counts) if args.json else counts)
            if counts["answer_differences"] or counts["token_differences"]:
                raise SystemExit(1)
            return
        report = run(args.rounds)
    except CorpusMissing as missing:
        raise SystemExit(str(missing)) from None
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()
