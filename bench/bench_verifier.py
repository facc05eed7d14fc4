"""Benchmark of the verifier on a 1 MB generated source and 1,000 quotes.

Run: ``.venv/bin/python bench/bench_verifier.py [--json] [--size BYTES] [--quotes N]``

Reports, from one run (every ratio is against a baseline timed in the same run):

(a) prepared matching (``prepare(source).check``) vs ``check_quote`` per quote, which
    re-tokenizes the source every time (timed on a sample and reported per quote);
(b) prepared matching vs ``str.find`` of the normalized quote in the normalized source, the
    floor of a plain substring search -- goal: ratio <= 2;
(c) tokenizing throughput (MB/s), for tokenizing alone and for ``prepare`` (with the index);
(d) peak traced memory (tracemalloc) of ``prepare`` and of checking all quotes.

Half of the quotes are present; the other half have one word or number changed, so they go
through the closest-passage search too.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verifier import COULD_NOT_CHECK, QUOTE_FOUND, check_quote, prepare, tokenize
from verifier.tokenizer import scan_text as scan

SEED = 20240501
# Whitespace-separated word lists, split once: easier to read than long list literals.
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
    """``count`` quotes: even ones copied from the source, odd ones with one token changed."""
    tokens = tokenize(source)
    quotes: list[tuple[str, bool]] = []
    while len(quotes) < count:
        first = rng.randrange(len(tokens) - 30)
        last = first + rng.randint(6, 20)
        if any(t.kind != "word" and t.kind != "number" for t in tokens[first : last + 1]):
            continue
        quote = source[tokens[first].start : tokens[last].end]
        if len(quotes) % 2:
            target = tokens[rng.randint(first, last)]
            replacement = _changed(target.text, rng)
            quote = (
                source[tokens[first].start : target.start]
                + replacement
                + source[target.end : tokens[last].end]
            )
        quotes.append((quote, len(quotes) % 2 == 0))
    return quotes


def _changed(text: str, rng: random.Random) -> str:
    if text[-1].isdigit():
        return text[:-1] + str((int(text[-1]) + rng.randint(1, 9)) % 10)
    return text + rng.choice(SYLLABLES)


def timed(function: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - began)
    return best


def peak_memory(function: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def run(size: int, count: int, sample: int) -> dict[str, float | int]:
    rng = random.Random(SEED)
    source = make_source(size, rng)
    quotes = make_quotes(source, count, rng)
    megabytes = len(source.encode("utf-8")) / 1e6

    tokenize_s = timed(lambda: list(scan(source)))
    prepare_s = timed(lambda: prepare(source))
    prepared = prepare(source)

    texts = [quote for quote, _ in quotes]
    results = [prepared.check(quote) for quote in texts]
    outcomes = [
        (present, result.status) for result, (_, present) in zip(results, quotes, strict=True)
    ]
    prepared_s = timed(lambda: [prepared.check(quote) for quote in texts])

    normalized_source = " " + " ".join(prepared.keys) + " "
    needles = [" " + " ".join(t.key for t in tokenize(quote)) + " " for quote in texts]
    find_s = timed(lambda: [normalized_source.find(needle) for needle in needles])

    unprepared_s = timed(lambda: [check_quote(quote, source) for quote in texts[:sample]], 1)

    return {
        "source_mb": round(megabytes, 3),
        "tokens": len(prepared.keys),
        "quotes": count,
        "present_found": outcomes.count((True, QUOTE_FOUND)),
        "present_refused_by_context_guard": outcomes.count((True, COULD_NOT_CHECK)),
        "changed_found": sum(present is False and found for present, found in _found(outcomes)),
        "prepared_us_per_quote": prepared_s / count * 1e6,
        "check_quote_us_per_quote": unprepared_s / sample * 1e6,
        "find_us_per_quote": find_s / count * 1e6,
        "ratio_a_check_quote_over_prepared": (unprepared_s / sample) / (prepared_s / count),
        "ratio_b_prepared_over_find": prepared_s / find_s,
        "tokenize_mb_per_s": megabytes / tokenize_s,
        "prepare_mb_per_s": megabytes / prepare_s,
        "peak_prepare_mb": peak_memory(lambda: prepare(source)) / 1e6,
        "peak_check_all_mb": peak_memory(lambda: [prepared.check(q) for q in texts]) / 1e6,
    }


def _found(outcomes: list[tuple[bool, str]]) -> list[tuple[bool, bool]]:
    return [(present, status == QUOTE_FOUND) for present, status in outcomes]


def print_table(report: dict[str, float | int]) -> None:
    goal = "met" if report["ratio_b_prepared_over_find"] <= 2 else "MISSED"
    rows = [
        ("source", f"{report['source_mb']} MB, {report['tokens']:,} tokens"),
        ("quotes (half changed)", f"{report['quotes']:,}"),
        ("present: found", f"{report['present_found']}"),
        ("present: numeric context", f"{report['present_refused_by_context_guard']}"),
        ("changed: found (must be 0)", f"{report['changed_found']}"),
        ("prepared check", f"{report['prepared_us_per_quote']:.1f} µs/quote"),
        ("check_quote (re-tokenizes)", f"{report['check_quote_us_per_quote']:.0f} µs/quote"),
        ("str.find floor", f"{report['find_us_per_quote']:.1f} µs/quote"),
        ("(a) check_quote / prepared", f"{report['ratio_a_check_quote_over_prepared']:.0f}×"),
        (
            "(b) prepared / str.find",
            f"{report['ratio_b_prepared_over_find']:.2f}× (goal ≤ 2×: {goal})",
        ),
        ("(c) tokenize", f"{report['tokenize_mb_per_s']:.2f} MB/s"),
        ("(c) prepare (tokenize+index)", f"{report['prepare_mb_per_s']:.2f} MB/s"),
        ("(d) peak memory, prepare", f"{report['peak_prepare_mb']:.1f} MB"),
        ("(d) peak memory, check all", f"{report['peak_check_all_mb']:.2f} MB"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--size", type=int, default=1_000_000, help="source size in characters")
    parser.add_argument("--quotes", type=int, default=1_000, help="number of quotes")
    parser.add_argument("--sample", type=int, default=10, help="quotes timed with check_quote")
    args = parser.parse_args()
    report = run(args.size, args.quotes, min(args.sample, args.quotes))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
