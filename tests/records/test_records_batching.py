"""Recording a batch costs a fixed number of statements, not a few per citation: ``snap verify``
of a thousand citations of one source must not make a thousand round trips to the database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, func, select

from records.capture import capture_source
from records.citation_input import parse_document
from records.models import Citation, Verification
from records.verify import verify_citations
from records.workspace import Workspace

WORDS = ["the origin serves only 1 request in 10", "Raise the ratio to 99 percent"]


@contextmanager
def counted_statements(workspace: Workspace) -> Iterator[list[str]]:
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    event.listen(workspace.db.engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(workspace.db.engine, "before_cursor_execute", count)


def verify_many(workspace: Workspace, snapshot_id: str, count: int, tag: str) -> list[str]:
    citations = [
        {"citationId": f"{tag}-{n}", "snapshotId": snapshot_id, "quote": WORDS[n % 2]}
        for n in range(count)
    ]
    with counted_statements(workspace) as statements:
        report = verify_citations(workspace, parse_document(citations))
    assert [r.to_json()["status"] for r in report.results] == ["quote_found"] * count
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
    assert [r.to_json()["status"] for r in report.results] == ["quote_found"] * 2
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
