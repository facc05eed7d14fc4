"""Benchmark of the verifier: prepared and one-off checks on small and large sources.

Run: ``.venv/bin/python bench/bench_verifier.py [--json] [--large BYTES] [--memory-sizes MB,...]``

Every ratio is against a baseline timed in the same run:

(a) prepared matching (``prepare(source).check``) per quote on a 2 KB and a 1 MB source, against
    the fastest reasonable floor for an exact token match: a key → positions index over the same
    normalized token stream with slice verification (what a careful implementation without
    snap's rules would write), and Python's ``re`` over the normalized text;
(b) one-off ``check_quote(quote, source)`` per call (tokenizes the source every time), against the
    JavaScript reference verifier (``../shared/reference/quote-check.mjs``) called in-process by
    node in the same run, on realistic 1-3 KB documents (median) and on the large source, in
    three alternating rounds (the best round of each); the medians of the copied and of the
    changed quotes are shown apart too, since the overall median falls between them;
(c) tokenizing throughput;
(d) memory of a prepared source (tracemalloc: retained and peak while preparing) per source
    byte, at each ``--memory-sizes``.

Half of the quotes are copied from the source, half have one word or number changed: the
changed ones must never be found.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verifier import QUOTE_FOUND, check_quote, prepare, token_keys, tokenize  # noqa: E402

SEED = 20240501
REFERENCE = next(
    (
        folder / "shared" / "reference" / "quote-check.mjs"
        for folder in ROOT.parents
        if (folder / "shared" / "reference" / "quote-check.mjs").exists()
    ),
    ROOT.parent / "shared" / "reference" / "quote-check.mjs",
)
"""The reference beside the checkout (``../shared``), or beside a folder above it (a worktree)."""
_FUNCTION_WORDS_TEXT = (
    "the of and to in a is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when if"
)
_SYLLABLES_TEXT = "ka ri to me sa lu ne po di fa ven tor al gen mi cro lat ure ment ion est ly"
FUNCTION_WORDS = _FUNCTION_WORDS_TEXT.split()
SYLLABLES = _SYLLABLES_TEXT.split()
PUNCTUATION = [", ", "; ", ": ", " — ", " (", ") "]


def make_vocabulary(rng: random.Random, size: int = 6_000) -> list[str]:
    words = {"".join(rng.choices(SYLLABLES, k=rng.randint(1, 4))) for _ in range(size)}
    return sorted(words)


def make_number(rng: random.Random) -> str:
    form = rng.random()
    if form < 0.4:
        return str(rng.randint(0, 999))
    if form < 0.6:
        return f"{rng.randint(0, 99)}.{rng.randint(0, 99)}"
    if form < 0.75:
        return f"{rng.randint(1, 99)},{rng.randint(0, 999):03d}"
    if form < 0.9:
        return f"{rng.randint(1, 99)}%"
    return f"\u2212{rng.randint(1, 50)}"


def make_sentence(rng: random.Random, vocabulary: list[str]) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(8, 28)):
        roll = rng.random()
        if roll < 0.45:
            parts.append(rng.choice(FUNCTION_WORDS))
        elif roll < 0.9:
            parts.append(rng.choice(vocabulary[: rng.choice((200, 1_000, len(vocabulary)))]))
        else:
            parts.append(make_number(rng))
        parts.append(rng.choice(PUNCTUATION) if rng.random() < 0.08 else " ")
    text = "".join(parts).strip().rstrip(",;:—(")
    text = text.replace("t", "t’", 1) if rng.random() < 0.1 else text
    return text[0].upper() + text[1:] + rng.choice([".", ".", ".", "?", "!"])


def make_source(size: int, rng: random.Random) -> str:
    vocabulary = make_vocabulary(rng)
    paragraphs: list[str] = []
    length = 0
    while length < size:
        paragraph = " ".join(make_sentence(rng, vocabulary) for _ in range(rng.randint(3, 8)))
        paragraphs.append(paragraph)
        length += len(paragraph) + 2
    return "\n\n".join(paragraphs)[:size]


def make_quotes(source: str, count: int, rng: random.Random) -> list[tuple[str, bool]]:
    """``count`` quotes of whole words and numbers: even ones copied, odd ones changed once."""
    tokens = tokenize(source)
    quotes: list[tuple[str, bool]] = []
    while len(quotes) < count:
        first = rng.randrange(max(len(tokens) - 30, 1))
        last = min(first + rng.randint(6, 20), len(tokens) - 1)
        window = tokens[first : last + 1]
        if any(t.kind not in (1, 3) or (t.glued and i) for i, t in enumerate(window)):
            continue
        quote = source[tokens[first].start : tokens[last].end]
        if len(quotes) % 2:
            target = window[rng.randrange(len(window))]
            quote = (
                source[tokens[first].start : target.start]
                + _changed(target.text, rng)
                + source[target.end : tokens[last].end]
            )
        quotes.append((quote, len(quotes) % 2 == 0))
    return quotes


def _changed(text: str, rng: random.Random) -> str:
    if text[-1].isdigit():
        return text[:-1] + str((int(text[-1]) + rng.randint(1, 9)) % 10)
    return text + rng.choice(SYLLABLES)


def best_time(function: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - began)
    return best


class IndexFloor:
    """The floor for prepared matching: a key index over the same normalized tokens, with
    candidates verified by slice comparison (no edge, case or side-item rules)."""

    def __init__(self, source: str) -> None:
        self.keys = token_keys(source)
        self.positions: dict[str, list[int]] = {}
        for index, key in enumerate(self.keys):
            self.positions.setdefault(key, []).append(index)

    def find(self, quote_keys: list[str]) -> list[int]:
        length = len(quote_keys)
        rarest = min(range(length), key=lambda j: len(self.positions.get(quote_keys[j], ())))
        keys = self.keys
        return [
            start
            for start in (i - rarest for i in self.positions.get(quote_keys[rarest], ()))
            if start >= 0 and keys[start : start + length] == quote_keys
        ]


def prepared_figures(source: str, quotes: list[tuple[str, bool]]) -> dict[str, float | int]:
    texts = [quote for quote, _ in quotes]
    prepared = prepare(source)
    results = [prepared.check(quote) for quote in texts]
    changed_found = sum(
        result.status == QUOTE_FOUND and not present
        for result, (_, present) in zip(results, quotes, strict=True)
    )
    present_found = sum(
        result.status == QUOTE_FOUND and present
        for result, (_, present) in zip(results, quotes, strict=True)
    )
    prepared_s = best_time(lambda: [prepared.check(quote) for quote in texts])

    floor = IndexFloor(source)
    quote_keys = [token_keys(quote) for quote in texts]
    index_s = best_time(lambda: [floor.find(token_keys(quote)) for quote in texts])
    normalized = " " + " ".join(floor.keys) + " "
    patterns = [re.compile(re.escape(" " + " ".join(keys) + " ")) for keys in quote_keys]
    re_s = best_time(
        lambda: [re.compile(re.escape(" " + " ".join(token_keys(q)) + " ")) for q in texts]
    ) + best_time(lambda: [pattern.search(normalized) for pattern in patterns])
    count = len(texts)
    return {
        "quotes": count,
        "present_found": present_found,
        "changed_found": changed_found,
        "prepared_us": prepared_s / count * 1e6,
        "index_floor_us": index_s / count * 1e6,
        "re_floor_us": re_s / count * 1e6,
    }


def one_off_python(documents: list[tuple[str, list[str]]]) -> list[float]:
    """Per-call microseconds of ``check_quote`` for every (document, quote)."""
    times: list[float] = []
    for source, quotes in documents:
        for quote in quotes:
            began = time.perf_counter()
            check_quote(quote, source)
            times.append((time.perf_counter() - began) * 1e6)
    return times


_NODE_RUNNER = """
import {checkQuote} from %s;
let input = '';
process.stdin.on('data', d => input += d);
process.stdin.on('end', () => {
  const documents = JSON.parse(input);
  for (const [source, quotes] of documents) for (const q of quotes) checkQuote(q, source);
  const times = [];
  for (const [source, quotes] of documents) for (const q of quotes) {
    const began = process.hrtime.bigint();
    checkQuote(q, source);
    times.push(Number(process.hrtime.bigint() - began) / 1000);
  }
  process.stdout.write(JSON.stringify(times));
});
"""


def one_off_reference(documents: list[tuple[str, list[str]]]) -> list[float] | None:
    """Per-call microseconds of the JavaScript reference, or None without node or the file."""
    node = shutil.which("node")
    if node is None or not REFERENCE.exists():
        return None
    script = _NODE_RUNNER % json.dumps(REFERENCE.as_uri())
    completed = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(documents),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    times: list[float] = json.loads(completed.stdout)
    return times


def one_off_rounds(
    documents: list[tuple[str, list[str]]], rounds: int = 3
) -> dict[str, float | None]:
    """Median per-call microseconds of snap and of the JavaScript reference, over all quotes and
    over the copied and the changed ones apart (each document's quotes alternate, copied first),
    measured in alternating rounds, the best round of each kept: this machine's speed drifts by
    tens of percent over minutes, and two contenders timed one after the other would see
    different machines."""
    python: list[dict[str, float]] = []
    reference: list[dict[str, float]] = []
    for _ in range(rounds):
        python.append(_medians(documents, one_off_python(documents)))
        times = one_off_reference(documents)
        if times is not None:
            reference.append(_medians(documents, times))
    best: dict[str, float | None] = {}
    for part in ("all", "copied", "changed"):
        best[f"python_{part}"] = min(medians[part] for medians in python)
        best[f"reference_{part}"] = min((m[part] for m in reference), default=None)
    return best


def _medians(documents: list[tuple[str, list[str]]], times: list[float]) -> dict[str, float]:
    copied = [index % 2 == 0 for _, quotes in documents for index in range(len(quotes))]
    return {
        "all": statistics.median(times),
        "copied": statistics.median(t for t, c in zip(times, copied, strict=True) if c),
        "changed": statistics.median(t for t, c in zip(times, copied, strict=True) if not c),
    }


def memory_figures(size_mb: int, rng: random.Random) -> dict[str, float]:
    """Memory of a prepared source with its index built (two checks), per UTF-8 source byte.

    The tokenizer's bounded, process-wide caches are warmed first by preparing the text once,
    so what is measured is what each further prepared source costs.
    """
    source = make_source(size_mb * 1_000_000, rng)
    source_bytes = len(source.encode("utf-8"))
    quote = " ".join(source.split()[100:108])
    prepare(source).check(quote)
    tracemalloc.start()
    prepared = prepare(source)
    prepared.check(quote)
    prepared.check(quote)
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del prepared
    return {
        "size_mb": size_mb,
        "retained_per_byte": retained / source_bytes,
        "peak_per_byte": peak / source_bytes,
    }


def run(large: int, memory_sizes: list[int]) -> dict[str, object]:
    rng = random.Random(SEED)
    small_docs = [make_source(rng.randint(1_000, 3_000), rng) for _ in range(30)]
    small_sets = [(doc, [q for q, _ in make_quotes(doc, 6, rng)]) for doc in small_docs]
    large_source = make_source(large, rng)
    large_quotes = make_quotes(large_source, 1_000, rng)
    small_prepared = prepared_figures(small_docs[0], make_quotes(small_docs[0], 200, rng))
    large_prepared = prepared_figures(large_source, large_quotes)
    large_one_off = (large_source, [q for q, _ in large_quotes[:5]])

    small_one_off = one_off_rounds(small_sets)
    large_one_off_us = one_off_rounds([large_one_off])
    megabytes = len(large_source.encode("utf-8")) / 1e6
    tokenize_s = best_time(lambda: tokenize(large_source), 1)
    return {
        "small": small_prepared,
        "large": large_prepared,
        "large_mb": round(megabytes, 3),
        "one_off_small_us": small_one_off,
        "one_off_large_us": large_one_off_us,
        "tokenize_mb_per_s": megabytes / tokenize_s,
        "memory": [memory_figures(size, rng) | rss_figures(size) for size in memory_sizes],
    }


RSS_CHILD = """
import random, sys
sys.path[:0] = [sys.argv[2], sys.argv[2] + "/bench"]
from bench_verifier import make_source
from verifier import prepare
from verifier.tokenizer import iter_columns

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

source = make_source(int(sys.argv[1]) * 1_000_000, random.Random(7))
size = len(source.encode("utf-8"))  # measured first: encoding is not preparing
quote = " ".join(source[:100_000].split()[100:108])
for _ in iter_columns(source, []):  # the tokenizer's bounded, process-wide caches, warmed
    pass  # batch by batch: nothing large is freed for preparing to reuse
prepare(quote).check(quote)
before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the high-water mark restarts here: making the source is not preparing it
prepared = prepare(source)
prepared.check(quote)
prepared.check(quote)
print(size, before, status("VmRSS"), status("VmHWM"))
"""


def rss_figures(size_mb: int) -> dict[str, float]:
    """Resident memory of preparing a source, in a process of its own (Linux /proc): growth of
    the resident set once prepared, and the high-water mark over it, per UTF-8 source byte.

    The high-water mark is reset (``/proc/self/clear_refs``) once the source is made, so the
    peak is that of preparing, not of the benchmark's own text generator."""
    completed = subprocess.run(
        [sys.executable, "-c", RSS_CHILD, str(size_mb), str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    size, before, after, peak = (int(value) for value in completed.stdout.split())
    return {
        "size_mb": size_mb,
        "rss_retained_per_byte": (after - before) / size,
        "rss_peak_per_byte": (peak - before) / size,
    }


def print_table(report: dict[str, object]) -> None:
    rows: list[tuple[str, str]] = []
    for label in ("small", "large"):
        figures = report[label]
        assert isinstance(figures, dict)
        rows += [
            (
                f"{label}: quotes / present found / changed found (must be 0)",
                f"{figures['quotes']} / {figures['present_found']} / {figures['changed_found']}",
            ),
            (f"{label}: prepared check", f"{figures['prepared_us']:.1f} µs/quote"),
            (
                f"{label}: index floor / re floor",
                f"{figures['index_floor_us']:.1f} / {figures['re_floor_us']:.1f} µs/quote",
            ),
            (
                f"{label}: prepared / index floor",
                f"{figures['prepared_us'] / figures['index_floor_us']:.2f}×",
            ),
        ]
    for label in ("small", "large"):
        medians = report[f"one_off_{label}_us"]
        assert isinstance(medians, dict)
        for part, name in (("all", "median"), ("copied", "copied quotes"), ("changed", "changed")):
            python_us, reference_us = medians[f"python_{part}"], medians[f"reference_{part}"]
            if isinstance(reference_us, float):
                verdict = (
                    f"{python_us / reference_us:.2f}× the JS reference ({reference_us:.0f} µs)"
                )
            else:
                verdict = "JS reference not run (node or ../shared missing)"
            rows.append(
                (f"check_quote one-off, {label} ({name})", f"{python_us:.0f} µs: {verdict}")
            )
    rows.append(("tokenize", f"{report['tokenize_mb_per_s']:.2f} MB/s"))
    memory = report["memory"]
    assert isinstance(memory, list)
    for item in memory:
        rows.append(
            (
                f"prepared memory, {item['size_mb']} MB source",
                f"{item['retained_per_byte']:.2f}× retained, {item['peak_per_byte']:.2f}× peak "
                f"(tracemalloc); RSS {item['rss_retained_per_byte']:.2f}× retained, "
                f"{item['rss_peak_per_byte']:.2f}× peak (goal ≤ 4×)",
            )
        )
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--large", type=int, default=1_000_000, help="large source, characters")
    parser.add_argument("--memory-sizes", default="1,10,50", help="MB sizes for the memory figures")
    args = parser.parse_args()
    sizes = [int(size) for size in args.memory_sizes.split(",") if size]
    report = run(args.large, sizes)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
