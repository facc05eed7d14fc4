"""Queries of the ORM's objects and race-safe inserts (the plain rows of the verify path are
``records.rows``).

Snapshots are inserted with ``ON CONFLICT DO NOTHING`` and read back, so two
processes recording the same thing at once both succeed and leave one row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, or_, select
from sqlalchemy.orm import Session

from records.attest import log
from records.errors import ExtractionConflict
from records.models import Capture, Citation, Extraction, Snapshot, Verification, utcnow
from records.rows import by_url_or_untracked, chosen_extraction, latest_capture_query
from records.urls import canonical_url, lookup_keys
from records.vocabulary import CaptureOutcome
from snapshotter.errors import CaptureError
from snapshotter.times import parse_time

if TYPE_CHECKING:  # the capture module is loaded by what records captures, not by every reader
    from snapshotter.capture import SnapshotRecord


def dialect_insert(session: Session) -> Callable[..., Any]:
    """The ``insert`` that knows ON CONFLICT DO NOTHING, for SQLite and PostgreSQL alike.

    Each dialect's module is imported here, not at the top: a SQLite user never loads the
    PostgreSQL dialect."""
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert


def insert_if_absent(session: Session, model: type[Any], values: dict[str, Any]) -> None:
    """INSERT … ON CONFLICT DO NOTHING on SQLite and PostgreSQL alike."""
    insert = dialect_insert(session)
    session.execute(insert(model).values(**values).on_conflict_do_nothing())


def record_snapshot(session: Session, record: SnapshotRecord) -> Capture:
    """The snapshot row (once per content), its extraction (once per extractor and decoding:
    a different text of the same bytes is a new extraction, never dropped) and a capture row
    (once per fetch)."""
    insert_if_absent(session, Snapshot, snapshot_values(record))
    extraction = record_extraction(session, extraction_values(record), logged=False)
    extractions = [extraction]
    if record.rendered is not None:  # after the raw one: the newest, read by default
        extractions.append(record_extraction(session, rendered_values(record), logged=False))
    capture = Capture(**capture_values(record))
    session.add(capture)
    session.flush()
    log.append(session, [*extractions, capture])  # one append: the extractions may be logged
    return capture


def capture_values(record: SnapshotRecord) -> dict[str, Any]:
    return {
        "url": record.url,
        "final_url": record.final_url,
        "url_key": canonical_url(record.url),
        "final_url_key": canonical_url(record.final_url) if record.final_url else None,
        "fetched_at": parse_time(record.fetched_at) if record.fetched_at else utcnow(),
        "http_status": record.status,
        "outcome": CaptureOutcome.STORED,
        "snapshot_id": record.snapshot_id,
        "provenance": record.provenance,
        "method": record.capture_method,
    }


def record_snapshot_once(
    session: Session, record: SnapshotRecord, *, as_latest: bool = False
) -> tuple[Capture, bool]:
    """``record_snapshot`` for a capture that has its own time (a record of a web archive):
    recording it again finds the capture already there (the unique URL and time) instead of
    adding a second one. Returns the capture and whether it was added now; the caller decides
    whether an existing capture is the same record or another one at the same URL and time.
    ``as_latest``: whether it may become the URL's latest over snap's own captures."""
    insert_if_absent(session, Snapshot, snapshot_values(record))
    record_extraction(session, extraction_values(record))
    values = capture_values(record) | {"as_latest": as_latest}
    insert = dialect_insert(session)
    statement = insert(Capture).values(**values).on_conflict_do_nothing().returning(Capture.id)
    inserted = session.execute(statement).first()  # RETURNING: a row only when inserted
    query = select(Capture).where(
        Capture.url == values["url"], Capture.fetched_at == values["fetched_at"]
    )
    capture = session.scalars(query).one()
    log.append(session, [capture])
    return capture, inserted is not None


def record_extraction(
    session: Session, values: dict[str, Any], *, logged: bool = True
) -> Extraction:
    """Insert the extraction unless its key is recorded; the same key with another text is a
    non-deterministic extractor or tampering, and is refused loudly. ``logged``: append it to
    the log here (else the caller appends it with the capture, in one go)."""
    insert_if_absent(session, Extraction, values)
    query = select(Extraction).where(
        Extraction.snapshot_id == values["snapshot_id"],
        Extraction.extractor == values["extractor"],
        Extraction.decoding == values["decoding"],
    )
    extraction = session.scalars(query).one()
    if extraction.text_hash != values["text_hash"]:
        raise ExtractionConflict(
            f"snapshot {values['snapshot_id']} extracted by {values['extractor']}"
            f" ({values['decoding']}) gave text {values['text_hash']}, but extraction"
            f" {extraction.id} with the same key recorded {extraction.text_hash}: the extractor"
            " is not deterministic or a stored text was replaced; nothing was recorded"
        )
    if logged:
        log.append(session, [extraction])
    return extraction


def extraction_values(record: SnapshotRecord) -> dict[str, Any]:
    from snapshotter.capture import page_json

    return {
        "snapshot_id": record.snapshot_id,
        "extractor": record.extractor,
        "decoding": record.decoding,
        "content_type": record.content_type,
        "text_hash": record.text_hash,
        "norm_hash": record.norm_hash,
        "text_size": record.text_size,
        "normalizer": record.normalizer,
        "text_version_id": record.text_blob.version_id if record.text_blob else None,
        "pages": [page_json(page) for page in record.pages],
        "flags": list(record.flags),
        "code_hash": record.code_hash,
        "code_version_id": record.code_blob.version_id if record.code_blob else None,
        "created_at": utcnow(),
    }


def rendered_values(record: SnapshotRecord) -> dict[str, Any]:
    """The extraction row of a browser capture's rendered text (``source`` 'rendered')."""
    rendered = record.rendered
    assert rendered is not None
    return {
        "snapshot_id": record.snapshot_id,
        "extractor": rendered.extractor,
        "decoding": rendered.decoding,
        "content_type": rendered.content_type,
        "text_hash": rendered.text_hash,
        "norm_hash": rendered.norm_hash,
        "text_size": rendered.text_size,
        "normalizer": record.normalizer,
        "text_version_id": rendered.text_blob.version_id,
        "pages": [],
        "flags": [],
        "source": "rendered",
        "created_at": utcnow(),
    }


def extractions_of(session: Session, snapshot_id: str) -> Sequence[Extraction]:
    """Oldest first, by the database's own sequence."""
    query = select(Extraction).where(Extraction.snapshot_id == snapshot_id)
    return session.scalars(query.order_by(Extraction.id)).all()


def choose_extraction(
    session: Session,
    snapshot_id: str,
    *,
    pinned: int | None = None,
    text_hash: str | None = None,
) -> Extraction | None:
    """The extraction a check reads: the one the citation is pinned to, else the one whose text
    the citation names, else the newest."""
    return chosen_extraction(extractions_of(session, snapshot_id), pinned, text_hash)


def snapshot_values(record: SnapshotRecord) -> dict[str, Any]:
    from snapshotter.capture import page_json

    return {
        "id": record.snapshot_id,
        "raw_hash": record.raw_hash,
        "text_hash": record.text_hash,
        "norm_hash": record.norm_hash,
        "raw_size": record.raw_size,
        "text_size": record.text_size,
        "content_type": record.content_type,
        "extractor": record.extractor,
        "normalizer": record.normalizer,
        "store_location": record.store,
        "raw_version_id": record.raw_blob.version_id,
        "text_version_id": record.text_blob.version_id if record.text_blob else None,
        "lock_mode": record.lock_mode,
        "retain_until": record.retain_until,
        "pages": [page_json(page) for page in record.pages],
        "flags": list(record.flags),
        "created_at": utcnow(),
    }


def record_failed_capture(session: Session, target: str, error: CaptureError) -> Capture:
    capture = failed_capture(target, error)
    session.add(capture)
    session.flush()
    log.append(session, [capture], new=True)
    return capture


def failed_capture(target: str, error: CaptureError) -> Capture:
    """The capture row of a failed attempt (not yet added to a session)."""
    fetched_at = error.provenance.get("fetchedAt")
    return Capture(
        url=error.url or target,
        final_url=error.final_url,
        url_key=canonical_url(error.url or target),
        final_url_key=canonical_url(error.final_url) if error.final_url else None,
        fetched_at=parse_time(str(fetched_at)) if fetched_at else utcnow(),
        http_status=error.status,
        outcome=CaptureOutcome.FAILED,
        error=error.message,
        provenance=dict(error.provenance),
        method=failed_capture_method(error.provenance),
    )


def failed_capture_method(provenance: dict[str, object]) -> str:
    """How a failed capture was being made: a browser capture says so in its provenance."""
    method = provenance.get("captureMethod")
    if method in ("browser", "http"):
        return str(method)
    return "file" if provenance.get("source") == "file" else "http"


def get_snapshot(session: Session, snapshot_id: str) -> Snapshot | None:
    return session.get(Snapshot, snapshot_id)


def latest_capture(session: Session, url: str) -> Capture | None:
    """The newest stored capture of ``url`` (asked for, or reached by redirect), compared in
    canonical form: ``…#section`` names the captured page. A URL with tracking parameters
    (``utm_source=openai``) and no capture of its own names the page without them.

    snap's own captures (and imports made ``--as-latest``) come first, newest by the database's
    sequence, not by clocks of other machines. A capture imported from an archive never hides
    them, however late it was imported: it is the latest only for a URL snap never captured
    itself, and then by the archive's own capture time."""
    return by_url_or_untracked(url, lambda keys: _latest_capture_of_keys(session, keys))


def _latest_capture_of_keys(session: Session, keys: list[str]) -> Capture | None:
    return session.scalars(_orm_latest_capture_query(), {"keys": keys}).first()


@cache
def _orm_latest_capture_query() -> Select[Any]:
    return latest_capture_query(Capture, [Capture])


def captures_of(session: Session, url: str) -> Sequence[Capture]:
    keys = lookup_keys(url)
    query = (
        select(Capture)
        .where(or_(Capture.url_key.in_(keys), Capture.final_url_key.in_(keys)))
        .order_by(Capture.id)
    )
    return session.scalars(query).all()


def newest_stored_capture(session: Session, snapshot_id: str) -> Capture | None:
    """The snapshot's newest stored capture, by the database's sequence: the capture a check
    of the snapshot, named by its id, reads it through (its seal is checked with the blobs)."""
    query = (
        select(Capture)
        .where(Capture.snapshot_id == snapshot_id, Capture.outcome == CaptureOutcome.STORED)
        .order_by(Capture.id.desc())
        .limit(1)
    )
    return session.scalars(query).first()


def captures_of_snapshot(session: Session, snapshot_id: str) -> Sequence[Capture]:
    query = select(Capture).where(Capture.snapshot_id == snapshot_id).order_by(Capture.id)
    return session.scalars(query).all()


def capture_time(session: Session, snapshot_id: str, url: str | None = None) -> datetime | None:
    """When the snapshot was first captured, from ``url`` if it was (else from anywhere)."""
    captures = captures_of_snapshot(session, snapshot_id)
    keys = set(lookup_keys(url)) if url else set()
    of_url = [c for c in captures if keys & {c.url_key, c.final_url_key}] or captures
    return of_url[0].fetched_at if of_url else None


def url_of_snapshot(session: Session, snapshot_id: str) -> str | None:
    captures = captures_of_snapshot(session, snapshot_id)
    return captures[0].url if captures else None


def verifications_of(session: Session, citation_id: str) -> Sequence[Verification]:
    query = (
        select(Verification)
        .where(Verification.citation_id == citation_id)
        .order_by(Verification.checked_at, Verification.id)
    )
    return session.scalars(query).all()


def citations_matching(
    session: Session,
    *,
    url: str | None = None,
    since: datetime | None = None,
    snapshot_id: str | None = None,
) -> Sequence[Citation]:
    query = select(Citation).order_by(Citation.created_at, Citation.id)
    if url is not None:
        query = query.where(Citation.url_key.in_(lookup_keys(url)))
    if since is not None:
        query = query.where(Citation.created_at >= since)
    if snapshot_id is not None:
        query = query.where(Citation.snapshot_id == snapshot_id)
    return session.scalars(query).all()


def citation_keys_matching(
    session: Session, *, url: str | None = None, since: datetime | None = None
) -> Sequence[tuple[str, str | None, str | None]]:
    """(id, url, snapshot id) of the citations ``citations_matching`` gives, in its order:
    a few hundred bytes a citation instead of a whole mapped object."""
    query = select(Citation.id, Citation.url, Citation.snapshot_id)
    query = query.order_by(Citation.created_at, Citation.id)
    if url is not None:
        query = query.where(Citation.url_key.in_(lookup_keys(url)))
    if since is not None:
        query = query.where(Citation.created_at >= since)
    return [(row.id, row.url, row.snapshot_id) for row in session.execute(query)]


IDS_PER_QUERY = 1000  # ids in one IN list, well under every driver's limit on parameters


def citations_by_id(session: Session, ids: Sequence[str]) -> list[Citation]:
    """The citations with these ids, in the order given (those that exist)."""
    found: dict[str, Citation] = {}
    for start in range(0, len(ids), IDS_PER_QUERY):
        part = ids[start : start + IDS_PER_QUERY]
        found.update(
            (c.id, c) for c in session.scalars(select(Citation).where(Citation.id.in_(part)))
        )
    return [found[i] for i in ids if i in found]


def all_snapshots(session: Session) -> Iterable[Snapshot]:
    return session.scalars(select(Snapshot).order_by(Snapshot.created_at)).all()


ExtractionKey = tuple[str, str, str]  # snapshot id, extractor, decoding


FailedAttempt = tuple[str, CaptureError]  # the target as given, and why its capture failed


def record_capture_batch(
    session: Session, outcomes: Sequence[SnapshotRecord | FailedAttempt]
) -> list[Capture | ExtractionConflict]:
    """Record a batch capture's stored and failed captures in one transaction: what
    ``record_snapshot`` and ``record_failed_capture`` record one by one, in a few multi-row
    statements and one log append (the log's positions follow the batch's order).

    A stored capture whose extraction key is already recorded with another text is not
    recorded; its place in the result holds the ExtractionConflict instead (the others are
    recorded: one non-deterministic extraction does not cost the batch)."""
    from snapshotter.capture import SnapshotRecord

    stored = [outcome for outcome in outcomes if isinstance(outcome, SnapshotRecord)]
    existing = _extractions_of(session, [record.snapshot_id for record in stored])
    seen = {key: row.text_hash for key, row in existing.items()}
    results: list[Capture | ExtractionConflict | None] = []
    snapshots: dict[str, dict[str, Any]] = {}
    extractions: dict[ExtractionKey, dict[str, Any]] = {}
    for outcome in outcomes:
        if not isinstance(outcome, SnapshotRecord):
            results.append(None)
            continue
        values = _extraction_rows(outcome)
        conflict = _conflict(values, seen, existing)
        if conflict is not None:
            results.append(conflict)
            continue
        for row in values:
            key = _key(row)
            seen[key] = row["text_hash"]
            extractions.setdefault(key, row)
        snapshots.setdefault(outcome.snapshot_id, snapshot_values(outcome))
        results.append(None)
    insert = dialect_insert(session)
    # Core statements executed with many parameter sets: compiled once and cached, sent in
    # multi-row batches by the driver layer (a multi-row VALUES is compiled afresh each time).
    if snapshots:
        statement = insert(Snapshot.__table__).on_conflict_do_nothing()
        session.execute(statement, list(snapshots.values()))
    if extractions:
        statement = insert(Extraction.__table__).on_conflict_do_nothing()
        session.execute(statement, _same_columns(list(extractions.values()), Extraction))
    recorded = _extractions_of(session, list(snapshots))
    leaves: list[Any] = []
    captures: list[Capture] = []
    for index, outcome in enumerate(outcomes):
        if results[index] is not None:
            continue
        if isinstance(outcome, SnapshotRecord):
            rows = _extraction_rows(outcome)
            for row in rows:
                _require_same_text(recorded[_key(row)], row)
            leaves += [recorded[_key(row)] for row in rows]
            capture = Capture(**capture_values(outcome))
        else:
            capture = failed_capture(*outcome)
        leaves.append(capture)
        captures.append(capture)
        results[index] = capture
    session.add_all(captures)
    session.flush()
    log.append(session, leaves)
    return [result for result in results if result is not None]


def _extraction_rows(record: SnapshotRecord) -> list[dict[str, Any]]:
    """The extraction rows of one capture (raw, then rendered), with every column named, so
    rows of several captures go in one multi-row INSERT."""
    rows = [extraction_values(record) | {"source": "raw"}]
    if record.rendered is not None:
        rows.append(rendered_values(record))
    return rows


def _same_columns(rows: list[dict[str, Any]], model: type[Any]) -> list[dict[str, Any]]:
    """Rows that all name the same columns (one statement runs with all of them): a column a
    row leaves out (a rendered text has no code spans) gets the column's default, else NULL."""
    names = {name for row in rows for name in row}
    filled = []
    for row in rows:
        missing = {name: _default(model, name) for name in names - row.keys()}
        filled.append(row | missing)
    return filled


def _default(model: type[Any], name: str) -> Any:
    default = model.__table__.c[name].default
    if default is None:
        return None
    return default.arg(None) if callable(default.arg) else default.arg


def _key(values: dict[str, Any]) -> ExtractionKey:
    return (values["snapshot_id"], values["extractor"], values["decoding"])


def _extractions_of(session: Session, snapshot_ids: list[str]) -> dict[ExtractionKey, Extraction]:
    found: dict[ExtractionKey, Extraction] = {}
    wanted = sorted(set(snapshot_ids))
    for start in range(0, len(wanted), 500):
        query = select(Extraction).where(Extraction.snapshot_id.in_(wanted[start : start + 500]))
        for row in session.scalars(query):
            found[(row.snapshot_id, row.extractor, row.decoding)] = row
    return found


def _conflict(
    rows: list[dict[str, Any]],
    seen: dict[ExtractionKey, str | None],
    existing: dict[ExtractionKey, Extraction],
) -> ExtractionConflict | None:
    for row in rows:
        key = _key(row)
        if key in seen and seen[key] != row["text_hash"]:
            known = existing.get(key)
            return _conflict_error(row, known.id if known is not None else None, seen[key])
    return None


def _require_same_text(recorded: Extraction, values: dict[str, Any]) -> None:
    """Another process recorded the key between the check and the insert, with another text."""
    if recorded.text_hash != values["text_hash"]:
        raise _conflict_error(values, recorded.id, recorded.text_hash)


def _conflict_error(
    values: dict[str, Any], extraction_id: int | None, text_hash: str | None
) -> ExtractionConflict:
    where = f"extraction {extraction_id}" if extraction_id is not None else "this batch"
    return ExtractionConflict(
        f"snapshot {values['snapshot_id']} extracted by {values['extractor']}"
        f" ({values['decoding']}) gave text {values['text_hash']}, but {where} with the same"
        f" key recorded {text_hash}: the extractor is not deterministic or a stored text was"
        " replaced; this capture was not recorded"
    )
