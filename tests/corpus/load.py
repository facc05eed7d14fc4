"""Loader for the adversarial corpus of issue 7 (documents + labelled quotes).

The corpus is data, not code: ``documents/*.txt`` hold stored texts as an extractor would
store them (UTF-8, invisible characters included), and ``quotes.jsonl`` holds one labelled
quote per line. Labels follow the matching rules of issue 7 (docs/matching.md):
only the listed copy-noise equivalences are ignored, everything else is compared. Shared by
``tests/verifier/test_adversarial_corpus.py`` and ``bench/bench_corpus.py`` so both read the
same cases the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from verifier import CodeSpans

CORPUS_DIR = Path(__file__).resolve().parent
DOCUMENTS_DIR = CORPUS_DIR / "documents"
QUOTES_FILE = CORPUS_DIR / "quotes.jsonl"
TECHNICAL_DIR = CORPUS_DIR / "technical"
"""The technical corpus of issue 23 (format tables, pattern syntax, operator tables, signatures,
psql output), in the same layout: ``technical/documents/*.txt`` and ``technical/quotes.jsonl``."""
TECHNICAL_KINDS = (
    "format_table_case",
    "regex_punctuation",
    "code_punctuation",
    "index_not_reference",
    "operator_table",
    "psql_output",
    "format_spec",
    "prose_reference",
    "list_continuation",
    "wrapped_quote",
    "stand_in",
    "indic_joiner",
    "code_span",
)

FOUND = "found"
NOT_FOUND = "not_found"
COULD_NOT_CHECK = "could_not_check"
EXPECTED = (FOUND, NOT_FOUND, COULD_NOT_CHECK)

# Every kind the corpus must cover (issue 7), each with at least MIN_PER_KIND cases.
KINDS = (
    "operator_swap",
    "sign_after_letter",
    "truncated_number",
    "digit_separator",
    "superscript",
    "unit_case",
    "currency",
    "version_date",
    "numeric_form",
    "negation",
    "word_change",
    "cjk_thai_fragment",
    "ellipsis_edge",
    "ellipsis_inner",
    "emoji",
    "reference_mark",
    "copy_noise",
    "case_ordinary",
    "punctuation",
    "context_cut",
    "empty",
)
MIN_PER_KIND = 5


@dataclass(frozen=True)
class Case:
    """One labelled quote; ``line`` is its 1-based line in quotes.jsonl, for messages."""

    line: int
    doc: str
    quote: str
    expected: str
    kind: str
    note: str

    def describe(self) -> str:
        """One line a reader can act on: where the case is and what it says."""
        return (
            f"quotes.jsonl:{self.line} doc={self.doc} kind={self.kind} "
            f"expected={self.expected} quote={self.quote!r} ({self.note})"
        )


def load_documents(root: Path = CORPUS_DIR) -> dict[str, str]:
    """Documents by name (file stem). Bytes are decoded as-is: no newline translation. An HTML
    page (``*.html``) is its text as snap's HTML extractor makes it (see ``load_code``)."""
    documents = {
        path.stem: path.read_bytes().decode("utf-8")
        for path in sorted((root / "documents").glob("*.txt"))
    }
    documents |= {name: text for name, (text, _) in _html_documents(root).items()}
    return documents


def load_code(root: Path = CORPUS_DIR) -> dict[str, CodeSpans]:
    """The code spans the HTML extractor records for each HTML page (its ``<code>``,
    ``<pre>``, ``<kbd>``, ``<samp>``); a plain-text document has none."""
    return {name: code for name, (_, code) in _html_documents(root).items()}


def _html_documents(root: Path) -> dict[str, tuple[str, CodeSpans]]:
    from snapshotter.extract.html import html_text_and_code  # only for corpora with pages

    pages = {}
    for path in sorted((root / "documents").glob("*.html")):
        text, code = html_text_and_code(path.read_bytes(), "text/html; charset=utf-8")
        pages[path.stem] = (text, CodeSpans(code or ()))
    return pages


def load_cases(root: Path = CORPUS_DIR) -> list[Case]:
    """All labelled quotes, in file order; a malformed line raises with its line number."""
    cases = []
    lines = (root / "quotes.jsonl").read_bytes().decode("utf-8").split("\n")
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
            case = Case(number, row["doc"], row["quote"], row["expected"], row["kind"], row["note"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"quotes.jsonl:{number}: malformed case: {exc}") from exc
        cases.append(case)
    return cases
