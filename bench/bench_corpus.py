"""Accuracy of the verifier on the adversarial corpora, per kind of change.

Run: ``.venv/bin/python bench/bench_corpus.py [--corpus prose|technical|both] [--json]``

``prose`` is the adversarial corpus of issue 7 (``tests/corpus/``), ``technical`` the corpus of
technical pages of issue 23 (``tests/corpus/technical/``: format tables, pattern syntax,
signatures, operator tables, psql output, and HTML pages whose code is in ``<code>``/``<pre>``,
whose code spans the HTML extractor records and the check is given); ``both`` (the default) runs
one after the other; ``--no-spans`` checks the HTML pages without their code spans, as before
the extractor recorded them.
For every labelled quote in the corpus's ``quotes.jsonl`` this runs snap's verifier
(``verifier.check_quote``) and, in the same run, a naive baseline: a lower-cased substring
search with whitespace collapsed, the check a careful engineer would write first. Per kind it
reports cases, correct, false passes and false alarms for both:

- correct: pass/fail agrees with the label (``could_not_check`` labels count as failing);
- false pass: labelled ``not_found`` or ``could_not_check`` but reported found;
- false alarm: labelled ``found`` but reported not found.

The naive baseline cannot say "could not check"; it simply passes or fails. The last line
counts how many ``could_not_check`` labels snap reports with exactly that status.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.corpus.load import (
    CORPUS_DIR,
    COULD_NOT_CHECK,
    FOUND,
    TECHNICAL_DIR,
    Case,
    load_cases,
    load_code,
    load_documents,
)
from verifier import COULD_NOT_CHECK as STATUS_COULD_NOT_CHECK
from verifier import check_quote


@dataclass
class Tally:
    """Counts for one kind (or the total) and one checker."""

    cases: int = 0
    correct: int = 0
    false_passes: int = 0
    false_alarms: int = 0
    failing_cases: list[int] = field(default_factory=list)

    def add(self, case: Case, found: bool) -> None:
        self.cases += 1
        should_pass = case.expected == FOUND
        if found == should_pass:
            self.correct += 1
            return
        self.failing_cases.append(case.line)
        if found:
            self.false_passes += 1
        else:
            self.false_alarms += 1


def collapse(text: str) -> str:
    """The naive baseline's normalization: lower case, whitespace runs as one space."""
    return " ".join(text.lower().split())


def naive_checker(documents: dict[str, str]) -> Callable[[Case], bool]:
    """Lower-cased substring search with whitespace collapsed (sources prepared once)."""
    prepared = {name: collapse(text) for name, text in documents.items()}
    return lambda case: collapse(case.quote) in prepared[case.doc]


CORPORA: dict[str, Path] = {"prose": CORPUS_DIR, "technical": TECHNICAL_DIR}


def run(root: Path = CORPUS_DIR, *, spans: bool = True) -> dict[str, object]:
    documents = load_documents(root)
    code = load_code(root) if spans else {}
    cases = load_cases(root)
    naive = naive_checker(documents)
    snap: dict[str, Tally] = {}
    baseline: dict[str, Tally] = {}
    status_right = status_total = 0
    for case in cases:
        result = check_quote(case.quote, documents[case.doc], code.get(case.doc))
        for kind in (case.kind, "TOTAL"):
            snap.setdefault(kind, Tally()).add(case, result.found)
            baseline.setdefault(kind, Tally()).add(case, naive(case))
        if case.expected == COULD_NOT_CHECK:
            status_total += 1
            status_right += result.status == STATUS_COULD_NOT_CHECK
    kinds = [*sorted(k for k in snap if k != "TOTAL"), "TOTAL"]
    return {
        "corpus": next(name for name, path in CORPORA.items() if path == root),
        "spans": spans,
        "cases": len(cases),
        "documents": len(documents),
        "kinds": {
            kind: {"snap": vars(snap[kind]), "naive": vars(baseline[kind])} for kind in kinds
        },
        "could_not_check_status": {"right": status_right, "of": status_total},
    }


def print_table(report: dict[str, object]) -> None:
    kinds = report["kinds"]
    assert isinstance(kinds, dict)
    header = (
        f"{'kind':<18} {'cases':>5} | {'snap ok':>7} {'FP':>4} {'FA':>4} "
        f"| {'naive ok':>8} {'FP':>4} {'FA':>4}"
    )
    spans = "" if report["spans"] else " (HTML pages checked without their code spans)"
    print(
        f"{report['corpus']} corpus: {report['cases']} quotes over {report['documents']}"
        f" documents{spans}"
    )
    print("FP = false passes (changed quote reported found), FA = false alarms")
    print(header)
    print("-" * len(header))
    for kind, row in kinds.items():
        s, n = row["snap"], row["naive"]
        if kind == "TOTAL":
            print("-" * len(header))
        print(
            f"{kind:<18} {s['cases']:>5} | {s['correct']:>7} {s['false_passes']:>4} "
            f"{s['false_alarms']:>4} | {n['correct']:>8} {n['false_passes']:>4} "
            f"{n['false_alarms']:>4}"
        )
    cnc = report["could_not_check_status"]
    assert isinstance(cnc, dict)
    print(f"could_not_check labels reported as could_not_check by snap: {cnc['right']}/{cnc['of']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--corpus", choices=[*CORPORA, "both"], default="both")
    parser.add_argument(
        "--no-spans", action="store_true", help="check HTML pages without their code spans"
    )
    args = parser.parse_args()
    names = list(CORPORA) if args.corpus == "both" else [args.corpus]
    reports = [run(CORPORA[name], spans=not args.no_spans) for name in names]
    if args.json:
        print(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2))
    else:
        for number, report in enumerate(reports):
            if number:
                print()
            print_table(report)


if __name__ == "__main__":
    main()
