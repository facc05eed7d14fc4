"""Recording a batch costs a fixed number of statements, not a few per citation: ``snap verify``
of a thousand citations of one source must not make a thousand round trips to the database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, func, select
from sqlalchemy.engine import Engine

from records.capture import capture_source
from records.citation_input import parse_document
from records.models import Citation, Verification
from records.verify import verify_citations
from records.wire import citation_result_json
from records.workspace import Workspace

WORDS = ["the origin serves only 1 request in 10", "Raise the ratio to 99 percent"]


@contextmanager
def counted_statements(workspace: Workspace) -> Iterator[list[str]]:
    """Every statement sent meanwhile, by any engine: on PostgreSQL the tests' sessions run on
    the connection of a transaction rolled back at the end, not on ``workspace.db.engine``."""
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    event.listen(Engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(Engine, "before_cursor_execute", count)


def verify_many(workspace: Workspace, snapshot_id: str, count: int, tag: str) -> list[str]:
    citations = [
        {"citationId": f"{tag}-{n}", "snapshotId": snapshot_id, "quote": WORDS[n % 2]}
        for n in range(count)
    ]
    with counted_statements(workspace) as statements:
        report = verify_citations(workspace, parse_document(citations))
    assert [citation_result_json(r)["status"] for r in report.results] == ["quote_found"] * count
    return statements


def test_statements_do_not_grow_with_the_number_of_citations(
    workspace: Workspace, example_page: Path
) -> None:
    snapshot_id = capture_source(workspace, str(example_page)).snapshot_id
    few = verify_many(workspace, snapshot_id, 4, "few")
    many = verify_many(workspace, snapshot_id, 400, "many")
    assert len(many) <= len(few) + 4, many  # a chunk of 500 ids is one statement
    with workspace.db.reading() as session:
        assert session.scalar(select(func.count()).select_from(Citation)) == 404
        assert session.scalar(select(func.count()).select_from(Verification)) == 404


def test_a_citation_twice_in_one_batch_is_recorded_once_and_checked_twice(
    workspace: Workspace, example_page: Path
) -> None:
    snapshot_id = capture_source(workspace, str(example_page)).snapshot_id
    same = {"citationId": "c-same", "snapshotId": snapshot_id, "quote": WORDS[0]}
    report = verify_citations(workspace, parse_document([same, same]))
    assert [citation_result_json(r)["status"] for r in report.results] == ["quote_found"] * 2
    with workspace.db.reading() as session:
        citation = session.get(Citation, "c-same")
        assert citation is not None
        assert citation.snapshot_id == snapshot_id
        assert citation.extraction_id is not None
        assert session.scalar(select(func.count()).select_from(Verification)) == 2


def test_statements_do_not_grow_with_mixed_rows(workspace: Workspace, example_page: Path) -> None:
    """Checks that fail carry a closest passage and a reason, and citations may leave out what
    others give (a page): rows that leave different columns empty must share statements too."""
    snapshot_id = capture_source(workspace, str(example_page)).snapshot_id

    def verify(count: int, tag: str) -> list[str]:
        citations = [
            {"citationId": f"{tag}-{n}-{changed}", "snapshotId": snapshot_id, "quote": quote}
            | ({"page": "3"} if changed else {})
            for n in range(count)
            for changed, quote in enumerate((WORDS[0], WORDS[0].replace("10", str(11 + n))))
        ]
        with counted_statements(workspace) as statements:
            verify_citations(workspace, parse_document(citations))
        return statements

    few, many = verify(2, "few"), verify(200, "many")
    assert len(many) <= len(few) + 4, many


def test_batch_inserts_on_postgresql_have_one_shape_whatever_the_batch_size(
    workspace: Workspace, example_page: Path
) -> None:
    """psycopg parses a statement once only when it is short and has few parameters: the batch
    INSERTs of citations and verifications must be one text, with one parameter a column, for 3
    rows as for 300 (SQLite, which has no such limit, takes multi-row VALUES)."""
    snapshot_id = capture_source(workspace, str(example_page)).snapshot_id
    few = verify_many(workspace, snapshot_id, 3, "few")
    many = verify_many(workspace, snapshot_id, 300, "many")
    inserts = [
        [s for s in statements if s.startswith(("INSERT INTO citations", "INSERT INTO verif"))]
        for statements in (few, many)
    ]
    assert len(inserts[0]) == len(inserts[1]) == 2
    if workspace.db.dialect == "postgresql":
        assert inserts[0] == inserts[1]
        assert all(len(s) < 4096 and s.count("%(") <= 50 for s in inserts[0]), inserts[0]
    else:
        assert inserts[0] != inserts[1]  # the control: SQLite's rows are in the text


def test_planning_an_answer_reads_each_cited_url_once(workspace: Workspace, tmp_path: Path) -> None:
    """Ten claims over two URLs: the recorded citations in one read, then each URL's latest
    capture, its snapshot and its extractions once."""
    pages = []
    for number in range(2):
        page = tmp_path / f"page{number}.txt"
        page.write_text(f"Page {number}: the origin serves only 1 request in 10.")
        capture_source(workspace, str(page))
        pages.append(page.as_uri())
    claims = [
        {"url": pages[n % 2], "quote": "the origin serves only 1 request", "text": f"claim {n}"}
        for n in range(10)
    ]
    with counted_statements(workspace) as statements:
        report = verify_citations(workspace, parse_document({"answerId": "a", "claims": claims}))
    assert [r.status for r in report.results] == ["quote_found"] * 10
    reads = [s for s in statements if s.lstrip().startswith("SELECT") and "log_entries" not in s]
    assert len([s for s in reads if "FROM captures" in s]) == 2, reads
    assert len([s for s in reads if "FROM snapshots" in s]) == 2, reads
    assert len([s for s in reads if "FROM extractions" in s]) == 2, reads
    assert len([s for s in reads if "FROM citations" in s]) == 1, reads
    assert not [s for s in reads if "FROM verifications" in s], reads  # the log needs no read
