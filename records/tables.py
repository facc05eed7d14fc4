"""The schema, as SQLAlchemy Core tables: captures, snapshots, citations and the append-only checks.

This is the one definition of every table: ``records.models`` maps its typed ORM classes onto
these (``__table__``), Alembic compares the migrations with this metadata, and the paths that
only read and write plain rows (a one-citation ``snap verify``: the snapshot and extraction
rows, the citation, the verification, the log and its checkpoint) use the tables directly, so
they never pay for building the ORM's mappers.

Every digest column is constrained to ``sha256:<64 lowercase hex>`` in the database itself, so
a malformed hash can never be recorded by any client; unique constraints make recording the
same capture or citation from two processes at once idempotent rather than duplicating.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    true,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from records.vocabulary import BatchKind, ExtractionSource, FailureKind, ItemState, Status

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
DIGEST_LENGTH = len("sha256:") + 64
METADATA = MetaData(naming_convention=NAMING_CONVENTION)


def digest_check(column: str) -> str:
    """SQL true when ``column`` is ``sha256:`` + 64 lowercase hex (portable: SQLite and PG)."""
    return (
        f"{column} IS NULL OR (length({column}) = {DIGEST_LENGTH}"
        f" AND substr({column}, 1, 7) = 'sha256:'"
        f" AND ltrim(substr({column}, 8), '0123456789abcdef') = '')"
    )


class UTCDateTime(TypeDecorator[datetime]):
    """Timestamps are stored as UTC and always come back timezone-aware (SQLite drops tz)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given; snap records only timezone-aware UTC times")
        try:
            return value.astimezone(UTC).replace(tzinfo=None)
        except OverflowError:  # 0001-01-01 at +00:01 is before any UTC time: a bound, not data
            return datetime.min if value.year == 1 else datetime.max

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


def digest(name: str, *, nullable: bool = True) -> Column[str]:
    """A ``sha256:<hex>`` column (each table checks its form with ``digest_check``)."""
    return Column(name, String(DIGEST_LENGTH), nullable=nullable)


def created(name: str) -> Column[datetime]:
    """When the row was written: set by snap (UTC), never by the database's clock."""
    return Column(name, UTCDateTime(), nullable=False, default=utcnow)


def reference(name: str, target: str, *, nullable: bool) -> Column[Any]:
    """A foreign key column; its type is the referenced column's."""
    return Column(name, ForeignKey(target), nullable=nullable)


SNAPSHOTS = Table(
    # One stored source: its raw bytes, addressed by their SHA-256, and the store holding them.
    # The text columns describe the snapshot's first extraction and are kept for old readers;
    # the texts themselves are the ``extractions`` rows.
    "snapshots",
    METADATA,
    Column("id", String(DIGEST_LENGTH), primary_key=True),
    digest("raw_hash", nullable=False),
    digest("text_hash"),
    digest("norm_hash"),
    Column("raw_size", Integer, nullable=False),
    Column("text_size", Integer),
    Column("content_type", Text, nullable=False),
    Column("extractor", String(300), nullable=False),
    Column("normalizer", String(100), nullable=False),
    Column("store_location", Text, nullable=False),
    Column("raw_version_id", String(1024)),
    Column("text_version_id", String(1024)),
    Column("lock_mode", String(20)),
    Column("retain_until", UTCDateTime()),
    Column("pages", JSON, nullable=False, default=list),
    Column("flags", JSON, nullable=False, default=list),
    created("created_at"),
    CheckConstraint(digest_check("id"), name="id_digest"),
    CheckConstraint("id = raw_hash", name="id_is_raw_hash"),
    CheckConstraint(digest_check("raw_hash"), name="raw_hash_digest"),
    CheckConstraint(digest_check("text_hash"), name="text_hash_digest"),
    CheckConstraint(digest_check("norm_hash"), name="norm_hash_digest"),
    CheckConstraint("raw_size >= 0", name="raw_size_nonnegative"),
)

EXTRACTION_SOURCES = tuple(source.value for source in ExtractionSource)
CAPTURE_METHODS = ("http", "browser", "file", "import")

EXTRACTIONS = Table(
    # One text made from a snapshot's raw bytes (``records.models.Extraction`` says why a
    # snapshot may have several, and why their key refuses a second text).
    "extractions",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    reference("snapshot_id", "snapshots.id", nullable=False),
    Column("extractor", String(300), nullable=False),
    Column("decoding", String(300), nullable=False),
    Column("content_type", Text, nullable=False),
    digest("text_hash"),
    digest("norm_hash"),
    Column("text_size", Integer),
    Column("normalizer", String(100), nullable=False),
    Column("text_version_id", String(1024)),
    Column("pages", JSON, nullable=False, default=list),
    Column("flags", JSON, nullable=False, default=list),
    # What the text was made from: the stored raw bytes ('raw', deterministic) or the page a
    # browser rendered in one capture ('rendered'; its decoding names that capture).
    Column("source", String(10), nullable=False, default="raw", server_default="raw"),
    # Where the text is code (a ``code`` blob, snapshotter.extract.code_spans): the matcher
    # compares it as code.  None: the extractor recorded no code in this text.
    digest("code_hash"),
    Column("code_version_id", String(1024)),
    created("created_at"),
    UniqueConstraint(
        "snapshot_id", "extractor", "decoding", name="uq_extractions_snapshot_extractor"
    ),
    CheckConstraint(digest_check("code_hash"), name="code_hash_digest"),
    CheckConstraint(
        "source IN (" + ", ".join(f"'{s}'" for s in EXTRACTION_SOURCES) + ")",
        name="source_known",
    ),
    CheckConstraint(digest_check("text_hash"), name="text_hash_digest"),
    CheckConstraint(digest_check("norm_hash"), name="norm_hash_digest"),
)

CAPTURES = Table(
    # One fetch attempt, stored or failed; a failed capture has no snapshot to check.
    "captures",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("url", Text, nullable=False),
    Column("final_url", Text),
    # records.urls.canonical_url of url and final_url: what lookups compare
    Column("url_key", Text),
    Column("final_url_key", Text),
    Column("fetched_at", UTCDateTime(), nullable=False),
    Column("http_status", Integer),
    Column("outcome", String(20), nullable=False),
    Column("error", Text),
    reference("snapshot_id", "snapshots.id", nullable=True),
    Column("provenance", JSON, nullable=False, default=dict),
    # http, browser (snapshotter.browser), file or import; NULL before it was recorded
    Column("method", String(10)),
    # May this capture be its URL's latest over the captures snap made itself? True for snap's
    # own; an import only with ``snap import --as-latest`` (records.repository.latest_capture).
    Column("as_latest", Boolean, nullable=False, default=True, server_default=true()),
    UniqueConstraint("url", "fetched_at", name="uq_captures_url_fetched_at"),
    CheckConstraint(
        "method IS NULL OR method IN (" + ", ".join(f"'{m}'" for m in CAPTURE_METHODS) + ")",
        name="method_known",
    ),
    Index("ix_captures_url_key", "url_key"),
    Index("ix_captures_final_url_key", "final_url_key"),
    CheckConstraint("outcome IN ('stored', 'failed')", name="outcome_known"),
    CheckConstraint("(outcome = 'stored') = (snapshot_id IS NOT NULL)", name="stored_has_snapshot"),
)

CITATIONS = Table(
    # A quote attributed to a source, as W3C selectors; its id is content-derived if not given.
    "citations",
    METADATA,
    Column("id", String(200), primary_key=True),
    digest("fingerprint", nullable=False),
    Column("url", Text),  # exactly as given
    Column("url_key", Text),  # records.urls.canonical_url(url)
    reference("snapshot_id", "snapshots.id", nullable=True),
    # No foreign key, here and on verifications: SQLite can add and drop a plain column in
    # place, but a referencing one only by rebuilding tables that carry the append-only
    # triggers. Only snap writes these ids, always from a row it has just read.
    Column("extraction_id", Integer),
    Column("claimed_snapshot", String(200)),
    Column("claimed_hashes", JSON),
    Column("exact", Text, nullable=False),
    Column("prefix", Text, nullable=False, default=""),
    Column("suffix", Text, nullable=False, default=""),
    Column("position_start", Integer),
    Column("position_end", Integer),
    Column("position_unit", String(10)),
    Column("page", String(100)),
    Column("claim_text", Text),
    Column("answer_id", String(200)),
    created("created_at"),
    CheckConstraint(digest_check("fingerprint"), name="fingerprint_digest"),
    CheckConstraint(
        "position_unit IS NULL OR position_unit IN ('codepoint', 'utf16')", name="unit_known"
    ),
    CheckConstraint(
        "position_start IS NULL OR (position_start >= 0 AND position_end >= position_start)",
        name="position_ordered",
    ),
    Index("ix_citations_url", "url"),
    Index("ix_citations_url_key", "url_key"),
    Index("ix_citations_snapshot_id", "snapshot_id"),
    Index("ix_citations_extraction_id", "extraction_id"),
)

VERIFICATIONS = Table(
    # One check of one citation against one snapshot. Append-only: never updated or deleted.
    "verifications",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    reference("citation_id", "citations.id", nullable=False),
    reference("snapshot_id", "snapshots.id", nullable=True),
    Column("extraction_id", Integer),
    Column("run_id", String(64)),
    # sha256 of (citation, snapshot, extraction, run): a retried batch inserts nothing twice.
    digest("idempotency_key"),
    Column("status", String(30), nullable=False),
    Column("span_start", Integer),
    Column("span_end", Integer),
    Column("matches", Integer, nullable=False, default=0),
    Column("closest_text", Text),
    Column("closest_score", Float),
    Column("reason", Text),
    Column("details", JSON, nullable=False, default=dict),
    Column("verifier", String(100), nullable=False),
    Column("normalizer", String(100), nullable=False),
    created("checked_at"),
    CheckConstraint(
        "status IN (" + ", ".join(f"'{status.value}'" for status in Status) + ")",
        name="status_known",
    ),
    Index("ix_verifications_citation_id", "citation_id"),
    Index("ix_verifications_idempotency_key", "idempotency_key", unique=True),
    Index("ix_verifications_run_id", "run_id"),
)

BATCHES = Table(
    # A piece of bulk work split into items for workers (records.models.Batch says more).
    "batches",
    METADATA,
    Column("id", String(32), primary_key=True),  # uuid4 hex; reverify run id
    Column("kind", String(20), nullable=False),
    Column("params", JSON, nullable=False, default=dict),
    Column("total", Integer, nullable=False),
    created("created_at"),
    CheckConstraint(
        "kind IN (" + ", ".join(f"'{kind.value}'" for kind in BatchKind) + ")",
        name="kind_known",
    ),
    CheckConstraint("total >= 0", name="total_nonnegative"),
)

BATCH_ITEMS = Table(
    # One task of a batch (records.models.BatchItem says how its state moves).
    "batch_items",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    reference("batch_id", "batches.id", nullable=False),
    Column("key", Text, nullable=False),
    Column("payload", JSON, nullable=False, default=dict),
    Column("state", String(10), nullable=False, default=ItemState.PENDING.value),
    Column("attempts", Integer, nullable=False, default=0),
    # 'transient' (worth another try: snap jobs --resume re-queues it) or 'permanent'
    Column("error_kind", String(10)),
    Column("last_error", Text),
    # what a done item did, in the text form of its kind (records.item_results): a snapshot
    # id, a sentence of counts, or extraction ids as a JSON list
    Column("result", Text),
    created("updated_at"),
    UniqueConstraint("batch_id", "key", name="uq_batch_items_batch_id_key"),
    Index("ix_batch_items_batch_id_state", "batch_id", "state"),
    CheckConstraint(
        "state IN (" + ", ".join(f"'{state.value}'" for state in ItemState) + ")",
        name="state_known",
    ),
    CheckConstraint(
        "error_kind IS NULL OR error_kind IN ("
        + ", ".join(f"'{kind.value}'" for kind in FailureKind)
        + ")",
        name="error_kind_known",
    ),
)

LOG_KINDS = ("capture", "extraction", "verification")

LOG_ENTRIES = Table(
    # One record in the verifiable log (records.attest.log), in the order it was recorded:
    # ``position`` is its leaf index in the Merkle tree, ``leaf_hash`` the RFC 9162 leaf hash of
    # the record's canonical form when it was appended. Append-only, like verifications.
    "log_entries",
    METADATA,
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("kind", String(20), nullable=False),
    Column("record_id", String(200), nullable=False),
    digest("leaf_hash", nullable=False),
    created("appended_at"),
    UniqueConstraint("kind", "record_id", name="uq_log_entries_kind_record"),
    CheckConstraint(digest_check("leaf_hash"), name="leaf_hash_digest"),
    CheckConstraint(
        "kind IN (" + ", ".join(f"'{kind}'" for kind in LOG_KINDS) + ")", name="kind_known"
    ),
    CheckConstraint("position >= 0", name="position_nonnegative"),
)

LOG_CHECKPOINTS = Table(
    # A signed, timestamped statement of the log's size and root: ``document`` is its
    # canonical JSON (what is signed and stamped), ``signature`` and ``timestamp`` as a
    # capture's manifest records them (records.attest.seal).
    "log_checkpoints",
    METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tree_size", Integer, nullable=False),
    digest("root_hash", nullable=False),
    Column("document", Text, nullable=False),
    Column("signature", JSON, nullable=False, default=dict),
    Column("timestamp", JSON, nullable=False, default=dict),
    created("created_at"),
    CheckConstraint(digest_check("root_hash"), name="root_hash_digest"),
    CheckConstraint("tree_size >= 0", name="tree_size_nonnegative"),
)
