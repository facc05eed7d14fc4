"""The adversarial corpus of issue 7, run through ``verifier.check_quote``.

Each labelled quote in ``tests/corpus/quotes.jsonl`` is checked against its document. A false
pass (a changed quote, or one that cannot be checked, reported as found) is the failure that
matters most; a false alarm (a real quote reported as not found) breaks the promise the other
way. Failures list every failing case with its line, document, kind, quote and label, so a
change to the matcher shows exactly which cases it fixes or breaks. ``bench/bench_corpus.py``
prints the per-kind counts, beside a naive lower-cased substring search.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.corpus.load import (
    COULD_NOT_CHECK,
    EXPECTED,
    FOUND,
    KINDS,
    MIN_PER_KIND,
    Case,
    load_cases,
    load_documents,
)
from verifier import COULD_NOT_CHECK as STATUS_COULD_NOT_CHECK
from verifier import QuoteCheck, check_quote

CASES = load_cases()
DOCUMENTS = load_documents()


@pytest.fixture(scope="module")
def outcomes() -> list[tuple[Case, QuoteCheck]]:
    """Every case checked once; the tests below look at the results from different sides."""
    return [(case, check_quote(case.quote, DOCUMENTS[case.doc])) for case in CASES]


def _fail_listing(title: str, failing: list[tuple[Case, QuoteCheck]]) -> None:
    """Fail with one line per failing case (no traceback noise), or do nothing."""
    if failing:
        lines = [f"{len(failing)} {title}:"]
        lines += [f"  got={result.status}: {case.describe()}" for case, result in failing]
        pytest.fail("\n".join(lines), pytrace=False)


def test_corpus_is_large_and_covers_every_kind() -> None:
    assert len(CASES) >= 300
    assert len(DOCUMENTS) >= 10
    per_kind = Counter(case.kind for case in CASES)
    thin = {kind: per_kind[kind] for kind in KINDS if per_kind[kind] < MIN_PER_KIND}
    assert not thin, f"kinds with fewer than {MIN_PER_KIND} cases: {thin}"
    assert set(per_kind) <= set(KINDS), f"unknown kinds: {set(per_kind) - set(KINDS)}"


def test_every_case_is_well_formed() -> None:
    unknown_doc = [case.describe() for case in CASES if case.doc not in DOCUMENTS]
    assert not unknown_doc, "cases naming no document:\n" + "\n".join(unknown_doc)
    bad_label = [case.describe() for case in CASES if case.expected not in EXPECTED]
    assert not bad_label, "cases with an unknown label:\n" + "\n".join(bad_label)
    # could_not_check is only for an ellipsis inside the quote or a quote with nothing in it.
    misused = [
        case.describe()
        for case in CASES
        if case.expected == COULD_NOT_CHECK and case.kind not in ("ellipsis_inner", "empty")
    ]
    assert not misused, "could_not_check outside its two kinds:\n" + "\n".join(misused)
    pairs = Counter((case.doc, case.quote) for case in CASES)
    duplicates = [pair for pair, count in pairs.items() if count > 1]
    assert not duplicates, f"duplicate cases: {duplicates}"
    assert set(DOCUMENTS) == {case.doc for case in CASES}, "a document without cases"


def test_corpus_is_balanced_between_real_and_changed_quotes() -> None:
    found = sum(case.expected == FOUND for case in CASES)
    assert 0.35 <= found / len(CASES) <= 0.65


def test_no_false_passes(outcomes: list[tuple[Case, QuoteCheck]]) -> None:
    false_passes = [(c, r) for c, r in outcomes if c.expected != FOUND and r.found]
    _fail_listing("false passes (labelled failing, got found)", false_passes)
    assert all(not r.found for c, r in outcomes if c.expected != FOUND)


def test_no_false_alarms(outcomes: list[tuple[Case, QuoteCheck]]) -> None:
    false_alarms = [(c, r) for c, r in outcomes if c.expected == FOUND and not r.found]
    _fail_listing("false alarms (labelled found, got failing)", false_alarms)
    assert all(r.found for c, r in outcomes if c.expected == FOUND)


def test_quotes_that_cannot_be_checked_say_so(outcomes: list[tuple[Case, QuoteCheck]]) -> None:
    wrong = [
        (c, r)
        for c, r in outcomes
        if c.expected == COULD_NOT_CHECK and r.status != STATUS_COULD_NOT_CHECK
    ]
    _fail_listing("cases labelled could_not_check with another status", wrong)
    assert not wrong


def test_found_quotes_name_their_span(outcomes: list[tuple[Case, QuoteCheck]]) -> None:
    """A pass must point at the stored text it matched, so a reader can look it up."""
    unanchored = [
        (c, r)
        for c, r in outcomes
        if r.found
        and (r.start is None or r.end is None or r.original != DOCUMENTS[c.doc][r.start : r.end])
    ]
    _fail_listing("found without a span equal to `original`", unanchored)
    assert not unanchored
