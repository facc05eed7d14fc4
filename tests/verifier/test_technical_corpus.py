"""The technical corpus of issue 23, run through ``verifier.check_quote``.

``tests/corpus/technical/`` holds pages written for this corpus in the shape of technical
manuals (format tables, pattern syntax, operator tables, signatures, psql output, release
notes), each with faithful quotes and quotes changed in one character of code, a case, an
index, or a list.  The bar: no false pass at all, and at least 99% of the labels met.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.corpus.load import (
    EXPECTED,
    FOUND,
    MIN_PER_KIND,
    TECHNICAL_DIR,
    TECHNICAL_KINDS,
    Case,
    load_cases,
    load_code,
    load_documents,
)
from verifier import QuoteCheck, check_quote

CASES = load_cases(TECHNICAL_DIR)
DOCUMENTS = load_documents(TECHNICAL_DIR)
CODE = load_code(TECHNICAL_DIR)


@pytest.fixture(scope="module")
def outcomes() -> list[tuple[Case, QuoteCheck]]:
    return [
        (case, check_quote(case.quote, DOCUMENTS[case.doc], CODE.get(case.doc))) for case in CASES
    ]


def _listing(title: str, failing: list[tuple[Case, QuoteCheck]]) -> str:
    lines = [f"{len(failing)} {title}:"]
    lines += [
        f"  got={result.status} {result.reason}: {case.describe()}" for case, result in failing
    ]
    return "\n".join(lines)


def test_the_corpus_is_large_well_formed_and_covers_every_kind() -> None:
    assert len(CASES) >= 300
    per_kind = Counter(case.kind for case in CASES)
    assert set(per_kind) == set(TECHNICAL_KINDS)
    assert min(per_kind.values()) >= MIN_PER_KIND, per_kind
    assert all(case.doc in DOCUMENTS and case.expected in EXPECTED for case in CASES)
    pairs = Counter((case.doc, case.quote) for case in CASES)
    assert [pair for pair, count in pairs.items() if count > 1] == []
    found = sum(case.expected == FOUND for case in CASES)
    assert 0.35 <= found / len(CASES) <= 0.65


def test_no_changed_quote_passes(outcomes: list[tuple[Case, QuoteCheck]]) -> None:
    false_passes = [(c, r) for c, r in outcomes if c.expected != FOUND and r.found]
    assert not false_passes, _listing("false passes", false_passes)


def test_at_least_99_percent_of_the_labels_are_met(
    outcomes: list[tuple[Case, QuoteCheck]],
) -> None:
    wrong = [(c, r) for c, r in outcomes if (c.expected == FOUND) != r.found]
    assert len(wrong) <= len(CASES) // 100, _listing("cases not as labelled", wrong)


def test_found_quotes_name_their_span(outcomes: list[tuple[Case, QuoteCheck]]) -> None:
    for case, result in outcomes:
        if result.found:
            assert result.start is not None
            assert result.end is not None
            assert result.original == DOCUMENTS[case.doc][result.start : result.end]
