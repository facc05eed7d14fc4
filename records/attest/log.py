"""The verifiable log of records: every capture, extraction and verification, in the order
recorded, as the leaves of an RFC 9162 Merkle tree (records.attest.merkle), with signed and
timestamped checkpoints of its size and root.

A leaf is the RFC 8785 form of the record's own columns (``leaf_document``), so ``snap log
verify`` recomputes every leaf from the rows as they are now: a row changed, removed or added
without the log (append-only triggers dropped, a restored backup) is reported with its
position. The stored leaf hashes are checked against every checkpoint and each checkpoint's
consistency with the one before, so a rewritten log is found too.

Appends run in the transaction that records the rows (a record is never in the database
without its log entry); positions are handed out under a lock (PostgreSQL: an advisory
transaction lock; SQLite: the write transaction, which begins IMMEDIATE).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from records.attest import merkle
from records.tables import LOG_CHECKPOINTS, LOG_ENTRIES
from snapshotter.canonical_json import canonical_json

# The ORM classes are imported where a function is handed or gives back ORM objects: appending
# plain verification rows and making a checkpoint (every recording command) need only the
# tables, and a one-citation ``snap verify`` never builds the mappers.
if TYPE_CHECKING:
    from records.models import Capture, Extraction, LogCheckpoint, LogEntry, Verification

    LeafRow = Capture | Extraction | Verification

LOCK_KEY = 0x736E61706C6F67  # "snaplog": the advisory lock taken by appenders on PostgreSQL
CHECKPOINT_FORMAT = "snap-log-checkpoint/1"


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def leaf_document(row: LeafRow) -> dict[str, Any]:
    """The columns of a record that the log vouches for (JSON, strings and integers only)."""
    from records.models import Capture, Extraction  # loaded by whoever made the ORM object

    if isinstance(row, Capture):
        provenance = row.provenance or {}
        manifest = provenance.get("manifest") or {}
        timestamp = provenance.get("timestamp") or {}
        return {
            "kind": "capture",
            "id": row.id,
            "url": row.url,
            "finalUrl": row.final_url,
            "fetchedAt": _time(row.fetched_at),
            "httpStatus": row.http_status,
            "outcome": row.outcome,
            "error": row.error,
            "snapshotId": row.snapshot_id,
            "manifest": manifest.get("hash"),
            "timestamp": timestamp.get("hash"),
        }
    if isinstance(row, Extraction):
        entry = {
            "kind": "extraction",
            "id": row.id,
            "snapshotId": row.snapshot_id,
            "extractor": row.extractor,
            "decoding": row.decoding,
            "textHash": row.text_hash,
            "normHash": row.norm_hash,
            "textSize": row.text_size,
            "normalizer": row.normalizer,
            "createdAt": _time(row.created_at),
        }
        if row.code_hash is not None:  # only then: entries logged before keep their bytes
            entry["codeHash"] = row.code_hash
        return entry
    return verification_document(row)


# The columns of a verification that its leaf is made of (``verification_document``).
VERIFICATION_LEAF = (
    "id",
    "citation_id",
    "snapshot_id",
    "extraction_id",
    "run_id",
    "status",
    "span_start",
    "span_end",
    "matches",
    "reason",
    "verifier",
    "normalizer",
    "checked_at",
)


def verification_document(row: Any) -> dict[str, Any]:
    """A verification's leaf document, of the ORM object or of a row holding the
    ``VERIFICATION_LEAF`` columns (as an INSERT gives them back: ``append_verification_rows``)."""
    return {
        "kind": "verification",
        "id": row.id,
        "citationId": row.citation_id,
        "snapshotId": row.snapshot_id,
        "extractionId": row.extraction_id,
        "runId": row.run_id,
        "status": row.status,
        "spanStart": row.span_start,
        "spanEnd": row.span_end,
        "matches": row.matches,
        "reason": row.reason,
        "verifier": row.verifier,
        "normalizer": row.normalizer,
        "checkedAt": _time(row.checked_at),
    }


def leaf_bytes(row: LeafRow) -> bytes:
    return canonical_json(leaf_document(row))


def hex_digest(raw: bytes) -> str:
    return "sha256:" + raw.hex()


def raw_digest(text: str) -> bytes:
    return bytes.fromhex(text.removeprefix("sha256:"))


def kind_of(row: LeafRow) -> str:
    return str(leaf_document(row)["kind"])


# Core statements on the table, run on the session's connection: the ORM adds nothing to rows
# that are only inserted, and costs more than the statements themselves.
ENTRIES = LOG_ENTRIES
NEXT_POSITION = select(func.coalesce(func.max(ENTRIES.c.position) + 1, 0))
INSERT_ENTRIES = insert(ENTRIES)
LOCK = select(func.pg_advisory_xact_lock(LOCK_KEY))
# The closing checkpoint of every recording command reads and writes through these too: a
# query of the ORM classes would configure every mapper of the schema first, a cost a
# one-citation ``snap verify`` pays for nothing else.
CHECKPOINTS = LOG_CHECKPOINTS
ENTRY_COUNT = select(func.count()).select_from(ENTRIES)
LEAF_HASHES = select(ENTRIES.c.leaf_hash).order_by(ENTRIES.c.position)
LATEST_CHECKPOINT = (
    select(
        CHECKPOINTS.c.id,
        CHECKPOINTS.c.tree_size,
        CHECKPOINTS.c.root_hash,
        CHECKPOINTS.c.document,
        CHECKPOINTS.c.signature,
        CHECKPOINTS.c.timestamp,
    )
    .order_by(CHECKPOINTS.c.id.desc())
    .limit(1)
)
INSERT_CHECKPOINT = insert(CHECKPOINTS)


def append(session: Session, rows: Iterable[LeafRow], *, new: bool = False) -> list[int]:
    """Append ``rows`` (flushed, with ids) to the log, skipping any already in it (``new``:
    the caller has just inserted them, so none can be); their positions, in order."""
    documents = [(row, leaf_document(row)) for row in rows]
    leaves = [(str(doc["kind"]), str(row.id), canonical_json(doc)) for row, doc in documents]
    return append_leaves(session, leaves, new=new)


def append_verification_rows(session: Session, rows: Iterable[Any]) -> list[int]:
    """Append verifications just inserted, given as rows of the ``VERIFICATION_LEAF`` columns
    (what the INSERT gave back: the values as stored, without reading them again), in the
    order of their ids."""
    ordered = sorted(rows, key=lambda row: int(row.id))
    leaves = [
        ("verification", str(row.id), canonical_json(verification_document(row))) for row in ordered
    ]
    return append_leaves(session, leaves, new=True)


def append_leaves(
    session: Session, wanted: list[tuple[str, str, bytes]], *, new: bool = False
) -> list[int]:
    """Append (kind, record id, leaf bytes) entries, skipping any already in the log unless
    ``new``; their positions, in order."""
    if not wanted:
        return []
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        connection.execute(LOCK)
    present: set[tuple[str, str]] = set()
    if not new:
        query = select(ENTRIES.c.kind, ENTRIES.c.record_id).where(
            ENTRIES.c.kind.in_({kind for kind, _, _ in wanted}),
            ENTRIES.c.record_id.in_([rid for _, rid, _ in wanted]),
        )
        present = {(str(kind), str(record_id)) for kind, record_id in connection.execute(query)}
    start = connection.scalar(NEXT_POSITION) or 0
    values: list[dict[str, Any]] = []
    now = datetime.now(UTC)
    for kind, record_id, leaf_document_bytes in wanted:
        if (kind, record_id) in present:
            continue
        present.add((kind, record_id))
        leaf = hex_digest(merkle.leaf_hash(leaf_document_bytes))
        values.append(
            {
                "position": start + len(values),
                "kind": kind,
                "record_id": record_id,
                "leaf_hash": leaf,
                "appended_at": now,
            }
        )
    if values:
        connection.execute(INSERT_ENTRIES, values)
    return [value["position"] for value in values]


def entry_holds(session: Session, row: LeafRow) -> bool:
    """Whether the row's log entry is there and still matches the row as it is now (what
    ``snap log verify`` checks of every row, asked of one)."""
    from records.models import LogEntry

    query = select(LogEntry.leaf_hash).where(
        LogEntry.kind == kind_of(row), LogEntry.record_id == str(row.id)
    )
    return session.scalar(query) == hex_digest(merkle.leaf_hash(leaf_bytes(row)))


def stored_leaves(session: Session) -> list[LogEntry]:
    from records.models import LogEntry

    return list(session.scalars(select(LogEntry).order_by(LogEntry.position)))


def checkpoint_document(tree_size: int, root_hash: str, created_at: datetime) -> bytes:
    return canonical_json(
        {
            "format": CHECKPOINT_FORMAT,
            "treeSize": tree_size,
            "rootHash": root_hash,
            "createdAt": _time(created_at),
        }
    )


def tree_state_of(leaf_hashes: Sequence[str]) -> tuple[int, str]:
    """The size and root of the tree of these leaf hashes (``sha256:<hex>``), in log order."""
    leaves = [raw_digest(leaf_hash) for leaf_hash in leaf_hashes]
    return len(leaves), hex_digest(merkle.root(leaves))


def entry_count(session: Session) -> int:
    return int(session.connection().scalar(ENTRY_COUNT) or 0)


def leaf_hashes(session: Session, *, limit: int | None = None) -> list[str]:
    """Every entry's leaf hash in log order, or the first ``limit`` (Core: see
    ``CHECKPOINTS``)."""
    query = LEAF_HASHES if limit is None else LEAF_HASHES.limit(limit)
    return list(session.connection().scalars(query))


def latest_checkpoint_row(session: Session) -> Any | None:
    """The newest checkpoint's id, tree_size, root_hash, document, signature and timestamp, as
    a plain row (Core: see ``CHECKPOINTS``); None before the first."""
    return session.connection().execute(LATEST_CHECKPOINT).first()


def checkpoints(session: Session) -> list[LogCheckpoint]:
    from records.models import LogCheckpoint

    return list(session.scalars(select(LogCheckpoint).order_by(LogCheckpoint.id)))


def latest_checkpoint(session: Session) -> LogCheckpoint | None:
    from records.models import LogCheckpoint

    query = select(LogCheckpoint).order_by(LogCheckpoint.id.desc()).limit(1)
    return session.scalars(query).first()
