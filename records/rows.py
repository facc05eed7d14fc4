"""Plain rows read and written with Core statements: the path every check takes.

Planning a check and recording it (the latest capture of a URL, the snapshot and its
extractions, the citations, the verifications) reads and writes rows of ``records.tables``
with statements built once: loading and flushing ORM objects cost several times what the
statements themselves cost, these rows are read once and never changed, and a process that
only verifies never imports ``records.models`` nor builds its mappers (``snap verify`` of one
citation: issue 25's start-up). ``records.repository`` holds the ORM's queries and re-uses
these rules.

Citations and verifications are inserted with ``ON CONFLICT DO NOTHING`` and read back, so two
processes recording the same thing at once both succeed and leave one row.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from sqlalchemy import (
    JSON,
    BindParameter,
    Connection,
    Insert,
    Select,
    Table,
    bindparam,
    case,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from records.attest import log
from records.tables import CAPTURES, CITATIONS, EXTRACTIONS, SNAPSHOTS, VERIFICATIONS, utcnow
from records.urls import canonical_url, lookup_keys, without_tracking
from records.vocabulary import CaptureOutcome
from snapshotter.errors import InputError


@dataclass(frozen=True)
class CaptureRow:
    id: int
    url: str
    url_key: str | None
    final_url_key: str | None
    outcome: str
    snapshot_id: str | None
    provenance: dict[str, Any]


@dataclass(frozen=True)
class SnapshotRow:
    id: str
    raw_hash: str
    raw_version_id: str | None
    store_location: str
    extractor: str
    normalizer: str
    text_hash: str | None
    norm_hash: str | None
    text_version_id: str | None
    pages: list[Any]
    flags: list[Any]


@dataclass(frozen=True)
class ExtractionRow:
    id: int
    extractor: str
    normalizer: str
    text_hash: str | None
    norm_hash: str | None
    text_version_id: str | None
    pages: list[Any]
    flags: list[Any]
    code_hash: str | None
    code_version_id: str | None


@dataclass(frozen=True)
class CitationRow:
    """What recording a check needs of a citation: its identity and its pins."""

    id: str
    url: str | None
    snapshot_id: str | None
    extraction_id: int | None
    claimed_snapshot: str | None
    exact: str
    page: str | None


if TYPE_CHECKING:  # for the type checker only: a Protocol class costs its creation at import

    class ExtractionLike(Protocol):
        """What choosing among a snapshot's extractions reads: an ``ExtractionRow`` or the
        ORM's ``Extraction``."""

        @property
        def id(self) -> int: ...

        @property
        def text_hash(self) -> str | None: ...


AnyExtraction = TypeVar("AnyExtraction", bound="ExtractionLike")


CAPTURE_COLUMNS = tuple(CaptureRow.__dataclass_fields__)


SNAPSHOT_COLUMNS = tuple(SnapshotRow.__dataclass_fields__)


EXTRACTION_COLUMNS = tuple(ExtractionRow.__dataclass_fields__)


CITATION_COLUMNS = tuple(CitationRow.__dataclass_fields__)


@cache
def _statements() -> dict[str, Select[Any]]:
    """The reads of the verify path, built and compiled once per process (on first use, not at
    import: commands that never verify do not pay for them)."""
    return {
        "latest": latest_capture_query(CAPTURES.c),
        "snapshot": select(*[SNAPSHOTS.c[n] for n in SNAPSHOT_COLUMNS]).where(
            SNAPSHOTS.c.id == bindparam("id")
        ),
        "extractions": select(*[EXTRACTIONS.c[n] for n in EXTRACTION_COLUMNS])
        .where(EXTRACTIONS.c.snapshot_id == bindparam("id"))
        .order_by(EXTRACTIONS.c.id),
        "captures": select(*[CAPTURES.c[n] for n in CAPTURE_COLUMNS])
        .where(CAPTURES.c.snapshot_id == bindparam("id"))
        .order_by(CAPTURES.c.id),
        "citations": select(*[CITATIONS.c[n] for n in CITATION_COLUMNS]).where(
            CITATIONS.c.id.in_(bindparam("ids", expanding=True))
        ),
    }


def latest_capture_row(connection: Connection, url: str) -> CaptureRow | None:
    """``latest_capture`` as a plain row."""
    return by_url_or_untracked(url, lambda keys: _latest_capture_row_of_keys(connection, keys))


def _latest_capture_row_of_keys(connection: Connection, keys: list[str]) -> CaptureRow | None:
    row = connection.execute(_statements()["latest"], {"keys": keys}).first()
    return None if row is None else CaptureRow(*row)


def snapshot_row(connection: Connection, snapshot_id: str) -> SnapshotRow | None:
    row = connection.execute(_statements()["snapshot"], {"id": snapshot_id}).first()
    return None if row is None else SnapshotRow(*row)


def extraction_rows(connection: Connection, snapshot_id: str) -> list[ExtractionRow]:
    """Oldest first, by the database's own sequence (as ``extractions_of``)."""
    return [
        ExtractionRow(*r)
        for r in connection.execute(_statements()["extractions"], {"id": snapshot_id})
    ]


def capture_rows_of_snapshot(connection: Connection, snapshot_id: str) -> list[CaptureRow]:
    """``captures_of_snapshot`` as plain rows."""
    return [
        CaptureRow(*r) for r in connection.execute(_statements()["captures"], {"id": snapshot_id})
    ]


def citation_rows(connection: Connection, ids: Iterable[str]) -> dict[str, CitationRow]:
    """The recorded citations among ``ids``, by id (500 ids a statement)."""
    wanted = sorted(set(ids))
    found: dict[str, CitationRow] = {}
    for start in range(0, len(wanted), IDS_PER_IN):
        chunk = wanted[start : start + IDS_PER_IN]
        rows = connection.execute(_statements()["citations"], {"ids": chunk})
        found |= {row.id: CitationRow(*row) for row in rows}
    return found


IDS_PER_IN = 500  # far below SQLite's and PostgreSQL's bound parameter limits


def chosen_extraction(
    extractions: Sequence[AnyExtraction], pinned: int | None, text_hash: str | None
) -> AnyExtraction | None:
    """``choose_extraction``'s choice among a snapshot's extractions, oldest first."""
    for wanted in (
        [e for e in extractions if e.id == pinned],
        [e for e in extractions if text_hash is not None and e.text_hash == text_hash],
        list(reversed(extractions)),
    ):
        if wanted:
            return wanted[0]
    return None


Found = TypeVar("Found")


def by_url_or_untracked(url: str, lookup: Callable[[list[str]], Found | None]) -> Found | None:
    """``lookup`` of ``url``'s keys (``records.urls.lookup_keys``), else of the keys without
    its tracking parameters (one rule for the ORM read and the plain-row read of the latest
    capture)."""
    found = lookup(lookup_keys(url))
    untracked = without_tracking(url) if found is None else None
    if untracked is not None:
        found = lookup(lookup_keys(untracked))
    return found


def latest_capture_query(columns: Any, selected: Sequence[Any] | None = None) -> Select[Any]:
    """The newest stored capture under one of the bound ``keys``, as ``latest_capture`` orders
    them: of the table's columns (``CAPTURES.c``, a plain row), or ``selected`` (the ORM class,
    whose attributes are then the ``columns``)."""
    keys: BindParameter[Any] = bindparam("keys", expanding=True)
    if selected is None:
        selected = [columns[name] for name in CAPTURE_COLUMNS]
    return (
        select(*selected)
        .where(
            columns.outcome == CaptureOutcome.STORED,
            or_(columns.url_key.in_(keys), columns.final_url_key.in_(keys)),
        )
        .order_by(
            columns.as_latest.desc(),
            case((columns.as_latest, columns.id), else_=0).desc(),
            columns.fetched_at.desc(),
            columns.id.desc(),
        )
        .limit(1)
    )


def citation_fingerprint(asserted: dict[str, Any]) -> str:
    """A digest of what the input asserts: these words, at this URL and/or in this snapshot, on
    this page, for this claim of this answer. Only the input counts, never what the database
    resolved it to, so the same citation gets the same id before and after its source is
    captured."""
    keys = ("url", "snapshotId", "exact", "page", "answerId", "claim")
    canonical = json.dumps([asserted.get(key) for key in keys], ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def citation_id_for(given: str | None, asserted: dict[str, Any]) -> str:
    """The id given in the input, else one derived from what the input asserts."""
    return given or "c-" + citation_fingerprint(asserted).removeprefix("sha256:")[:16]


def citation_conflict(existing: CitationRow, asserted: dict[str, Any]) -> str | None:
    """Why an explicit citation id that is already recorded cannot name this citation, if it
    cannot. Fuller selectors, or a URL or snapshot the first record lacked, are no conflict."""
    quote = asserted["exact"]
    if quote != existing.exact and _words_of(quote) != _words_of(existing.exact):
        return "a different quote"  # equal but for emoji or reference marks is the same quote
    if asserted.get("page") != existing.page:
        return "a different page"
    if asserted.get("url") and existing.url and asserted["url"] != existing.url:
        return "a different URL"
    recorded_snapshot = existing.snapshot_id or existing.claimed_snapshot
    snapshot = asserted.get("snapshotId")
    if snapshot and recorded_snapshot and snapshot != recorded_snapshot:
        return "a different snapshot"
    return None


def _words_of(quote: str) -> list[str]:
    """The quote's tokens after the verifier's normalization, without its emoji and reference
    marks (``verifier.word_keys``): the span snap finds, which ``verify --emit`` writes, leaves
    out the ones at its edges, so a quote equal to the recorded one but for such marks is the
    same citation, not another one reusing its id."""
    from verifier import word_keys  # the tokenizer: only for a quote that differs

    return word_keys(quote)


def record_citations(
    session: Session, items: Sequence[tuple[dict[str, Any], dict[str, Any]]]
) -> list[CitationRow]:
    """Insert each citation unless present (an id reused for a different citation is refused):
    one INSERT … ON CONFLICT DO NOTHING of every row (``insert_returning``), which gives back
    the rows it inserted, and one SELECT of those it did not (ids recorded before); each is
    then checked as alone (the first row of an id reused within ``items`` is the one
    recorded)."""
    if not items:
        return []
    connection = session.connection()
    rows = [citation_row(values, asserted) for values, asserted in items]
    recorded: dict[str, CitationRow] = {}
    for start in range(0, len(rows), ROWS_PER_INSERT):
        inserted = insert_returning(
            connection, CITATIONS, rows[start : start + ROWS_PER_INSERT], CITATION_COLUMNS
        )
        recorded |= {row.id: CitationRow(*row) for row in inserted}
    recorded |= citation_rows(connection, {row["id"] for row in rows} - recorded.keys())
    citations = []
    for row, (_, asserted) in zip(rows, items, strict=True):
        citation = recorded[row["id"]]
        conflict = citation_conflict(citation, asserted)
        if conflict is not None:
            raise InputError(
                f"citation id {row['id']!r} is already recorded for {conflict};"
                " give this citation a new citationId"
            )
        citations.append(citation)
    return citations


def insert_returning(
    connection: Connection, table: Table, rows: list[dict[str, Any]], returning: Sequence[str]
) -> list[Any]:
    """INSERT … ON CONFLICT DO NOTHING of ``rows`` (dicts with the same keys), giving back the
    ``returning`` columns of the rows inserted now, in one round trip.

    SQLite: one multi-row INSERT (SQLAlchemy's "insertmanyvalues"). PostgreSQL: one INSERT …
    SELECT FROM unnest() of one array per column, a statement of the same text and one
    parameter a column whatever the number of rows: psycopg parses a statement once only when
    it is under 4,096 characters and 50 parameters, so a multi-row VALUES of hundreds of
    parameters was parsed again on every batch (13.6% of reverify's time); this one is parsed
    once and, after a few executions, prepared by the server."""
    if not rows:
        return []
    names = tuple(rows[0])
    postgresql = connection.dialect.name == "postgresql"
    statement = _insert_statement(table, names, tuple(returning), postgresql)
    if postgresql:
        return list(connection.execute(statement, {n: [row[n] for row in rows] for n in names}))
    return list(connection.execute(statement, rows))


@cache
def _insert_statement(
    table: Table, names: tuple[str, ...], returning: tuple[str, ...], postgresql: bool
) -> Insert:
    """Built once per table, columns and dialect (each dialect's module is imported here, not
    at the top: a SQLite user never loads the PostgreSQL dialect)."""
    columns = [table.c[name] for name in returning]
    if not postgresql:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table).on_conflict_do_nothing().returning(*columns)
    from sqlalchemy.dialects.postgresql import insert as pg_insert

    source = select(*(_column_of_rows(table, n) for n in names))  # run in step (PostgreSQL 10+)
    return (
        pg_insert(table)
        .from_select(list(names), source)
        .on_conflict_do_nothing()
        .returning(*columns)
    )


def _column_of_rows(table: Table, name: str) -> Any:
    """One column of an INSERT … SELECT's rows, given as one parameter: an array unnested, or
    for a JSON column one JSON array of the values, split by the server.  psycopg writes an
    array of JSON documents as text, escaping every quote in them with a regular expression
    (a verification's details carry its capture's seal: 15% of a profiled reverify run on
    PostgreSQL); one document is made by the C encoder and written as it is.  A value of None
    is stored as JSON null either way (SQLAlchemy's JSON type writes None as null)."""
    from sqlalchemy.dialects.postgresql import ARRAY

    column_type = table.c[name].type
    if isinstance(column_type, JSON):
        return func.json_array_elements(bindparam(name, type_=column_type))
    return func.unnest(bindparam(name, type_=ARRAY(column_type)))


def citation_row(values: dict[str, Any], asserted: dict[str, Any]) -> dict[str, Any]:
    url = values.get("url")
    return {
        **values,
        "id": citation_id_for(values.get("id"), asserted),
        "fingerprint": citation_fingerprint(asserted),
        "url_key": canonical_url(url) if url else None,
        "created_at": utcnow(),
    }


def pin_first_snapshot(
    session: Session,
    citation: CitationRow,
    snapshot_id: str | None,
    extraction_id: int | None = None,
) -> CitationRow:
    """A citation recorded before its source was captured is pinned to the first snapshot (and
    extraction) it is checked against, as one recorded after the capture is from the start:
    only then can a later change of the source be told from a quote that was never there. Set
    once, never moved (the WHERE makes a race harmless). Returns the citation as recorded."""
    if citation.claimed_snapshot or snapshot_id is None:
        return citation
    connection = session.connection()
    unpinned = citation.snapshot_id is None
    if unpinned:
        connection.execute(
            update(CITATIONS)
            .where(CITATIONS.c.id == citation.id, CITATIONS.c.snapshot_id.is_(None))
            .values(snapshot_id=snapshot_id)
        )
    no_extraction = extraction_id is not None and citation.extraction_id is None
    if no_extraction:
        connection.execute(
            update(CITATIONS)
            .where(
                CITATIONS.c.id == citation.id,
                CITATIONS.c.snapshot_id == snapshot_id,
                CITATIONS.c.extraction_id.is_(None),
            )
            .values(extraction_id=extraction_id)
        )
    if unpinned or no_extraction:  # read back what the WHERE let through (a race may have won)
        return citation_rows(connection, [citation.id])[citation.id]
    return citation


def idempotency_key(
    citation_id: str, snapshot_id: str | None, extraction_id: int | None, run_id: str, item: int
) -> str:
    """One check of one citation in one run: the same batch written twice leaves one row."""
    parts = json.dumps([citation_id, snapshot_id, extraction_id, run_id, item])
    return "sha256:" + hashlib.sha256(parts.encode("utf-8")).hexdigest()


ROWS_PER_INSERT = 500  # 18 bound values a row stays far below SQLite's variable limit


def record_verifications(session: Session, rows: list[dict[str, Any]]) -> dict[str, int]:
    """INSERT … ON CONFLICT DO NOTHING for a batch of checks (500 rows a round trip); each row
    carries an ``idempotency_key``. Returns the row id of every key, inserted now or by an
    earlier try of the same batch. The rows inserted now come back with the columns the log
    vouches for, so they are appended to it without being read again."""
    now = utcnow()
    connection = session.connection()
    ids: dict[str, int] = {}
    inserted_now: list[Any] = []
    for start in range(0, len(rows), ROWS_PER_INSERT):
        chunk = rows[start : start + ROWS_PER_INSERT]
        values = [{**row, "checked_at": now} for row in chunk]
        inserted = insert_returning(
            connection, VERIFICATIONS, values, ("idempotency_key", *log.VERIFICATION_LEAF)
        )
        ids.update({str(row.idempotency_key): int(row.id) for row in inserted})
        inserted_now += inserted
        earlier = [row["idempotency_key"] for row in chunk if row["idempotency_key"] not in ids]
        if earlier:  # inserted by an earlier try of the same batch: read back
            found = connection.execute(
                select(VERIFICATIONS.c.idempotency_key, VERIFICATIONS.c.id).where(
                    VERIFICATIONS.c.idempotency_key.in_(earlier)
                )
            )
            ids.update({str(key): int(row_id) for key, row_id in found})
    log.append_verification_rows(session, inserted_now)  # an earlier try logged its own
    return ids
