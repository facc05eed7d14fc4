"""SQLAlchemy 2.x typed models: captures, snapshots, citations and the append-only checks.

Every digest column is constrained to ``sha256:<64 lowercase hex>`` in the database itself, so
a malformed hash can never be recorded by any client; unique constraints make recording the
same capture or citation from two processes at once idempotent rather than duplicating.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    true,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from records.vocabulary import BatchKind, FailureKind, ItemState, Status

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
DIGEST_LENGTH = len("sha256:") + 64


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


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON,
        list[Any]: JSON,
    }


class Snapshot(Base):
    """One stored source: its raw bytes, addressed by their SHA-256, and the store holding them.

    The text columns describe the snapshot's first extraction and are kept for old readers;
    the texts themselves are the ``extractions`` rows."""

    __tablename__ = "snapshots"

    id: Mapped[str] = mapped_column(String(DIGEST_LENGTH), primary_key=True)
    raw_hash: Mapped[str] = mapped_column(String(DIGEST_LENGTH))
    text_hash: Mapped[str | None] = mapped_column(String(DIGEST_LENGTH))
    norm_hash: Mapped[str | None] = mapped_column(String(DIGEST_LENGTH))
    raw_size: Mapped[int] = mapped_column(Integer)
    text_size: Mapped[int | None] = mapped_column(Integer)
    content_type: Mapped[str] = mapped_column(Text)
    extractor: Mapped[str] = mapped_column(String(300))
    normalizer: Mapped[str] = mapped_column(String(100))
    store_location: Mapped[str] = mapped_column(Text)
    raw_version_id: Mapped[str | None] = mapped_column(String(1024))
    text_version_id: Mapped[str | None] = mapped_column(String(1024))
    lock_mode: Mapped[str | None] = mapped_column(String(20))
    retain_until: Mapped[datetime | None]
    pages: Mapped[list[Any]] = mapped_column(JSON, default=list)
    flags: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint(digest_check("id"), name="id_digest"),
        CheckConstraint("id = raw_hash", name="id_is_raw_hash"),
        CheckConstraint(digest_check("raw_hash"), name="raw_hash_digest"),
        CheckConstraint(digest_check("text_hash"), name="text_hash_digest"),
        CheckConstraint(digest_check("norm_hash"), name="norm_hash_digest"),
        CheckConstraint("raw_size >= 0", name="raw_size_nonnegative"),
    )


EXTRACTION_SOURCES = ("raw", "rendered")
CAPTURE_METHODS = ("http", "browser", "file", "import")


class Extraction(Base):
    """One text made from a snapshot's raw bytes: by which extractor, decoded how, with what
    result. The same bytes may have several (a new extractor version, another declared charset);
    each is kept, and each citation is pinned to the one it was checked against. The key
    (snapshot, extractor, decoding) names one deterministic computation, so a second row with
    that key and a different text is refused as a conflict, never stored beside the first."""

    __tablename__ = "extractions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    snapshot_id: Mapped[str] = mapped_column(ForeignKey("snapshots.id"))
    extractor: Mapped[str] = mapped_column(String(300))
    decoding: Mapped[str] = mapped_column(String(300))
    content_type: Mapped[str] = mapped_column(Text)
    text_hash: Mapped[str | None] = mapped_column(String(DIGEST_LENGTH))
    norm_hash: Mapped[str | None] = mapped_column(String(DIGEST_LENGTH))
    text_size: Mapped[int | None] = mapped_column(Integer)
    normalizer: Mapped[str] = mapped_column(String(100))
    text_version_id: Mapped[str | None] = mapped_column(String(1024))
    pages: Mapped[list[Any]] = mapped_column(JSON, default=list)
    flags: Mapped[list[Any]] = mapped_column(JSON, default=list)
    # What the text was made from: the stored raw bytes ('raw', deterministic) or the page a
    # browser rendered in one capture ('rendered'; its decoding names that capture).
    source: Mapped[str] = mapped_column(String(10), default="raw", server_default="raw")
    # Where the text is code (a ``code`` blob, snapshotter.extract.code_spans): the matcher
    # compares it as code.  None: the extractor recorded no code in this text.
    code_hash: Mapped[str | None] = mapped_column(String(DIGEST_LENGTH))
    code_version_id: Mapped[str | None] = mapped_column(String(1024))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
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


class Capture(Base):
    """One fetch attempt, stored or failed; a failed capture has no snapshot to check."""

    __tablename__ = "captures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    url: Mapped[str] = mapped_column(Text)
    final_url: Mapped[str | None] = mapped_column(Text)
    # records.urls.canonical_url of url and final_url: what lookups compare
    url_key: Mapped[str | None] = mapped_column(Text)
    final_url_key: Mapped[str | None] = mapped_column(Text)
    fetched_at: Mapped[datetime]
    http_status: Mapped[int | None] = mapped_column(Integer)
    outcome: Mapped[str] = mapped_column(String(20))
    error: Mapped[str | None] = mapped_column(Text)
    snapshot_id: Mapped[str | None] = mapped_column(ForeignKey("snapshots.id"))
    provenance: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # http, browser (snapshotter.browser), file or import; NULL before it was recorded
    method: Mapped[str | None] = mapped_column(String(10))
    # May this capture be its URL's latest over the captures snap made itself? True for snap's
    # own; an import only with ``snap import --as-latest`` (records.repository.latest_capture).
    as_latest: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())

    __table_args__ = (
        UniqueConstraint("url", "fetched_at", name="uq_captures_url_fetched_at"),
        CheckConstraint(
            "method IS NULL OR method IN (" + ", ".join(f"'{m}'" for m in CAPTURE_METHODS) + ")",
            name="method_known",
        ),
        Index("ix_captures_url_key", "url_key"),
        Index("ix_captures_final_url_key", "final_url_key"),
        CheckConstraint("outcome IN ('stored', 'failed')", name="outcome_known"),
        CheckConstraint(
            "(outcome = 'stored') = (snapshot_id IS NOT NULL)", name="stored_has_snapshot"
        ),
    )


class Citation(Base):
    """A quote attributed to a source, as W3C selectors; its id is content-derived if not given."""

    __tablename__ = "citations"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(DIGEST_LENGTH))
    url: Mapped[str | None] = mapped_column(Text)  # exactly as given
    url_key: Mapped[str | None] = mapped_column(Text)  # records.urls.canonical_url(url)
    snapshot_id: Mapped[str | None] = mapped_column(ForeignKey("snapshots.id"))
    # No foreign key, here and on verifications: SQLite can add and drop a plain column in
    # place, but a referencing one only by rebuilding tables that carry the append-only
    # triggers. Only snap writes these ids, always from a row it has just read.
    extraction_id: Mapped[int | None] = mapped_column(Integer)
    claimed_snapshot: Mapped[str | None] = mapped_column(String(200))
    claimed_hashes: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    exact: Mapped[str] = mapped_column(Text)
    prefix: Mapped[str] = mapped_column(Text, default="")
    suffix: Mapped[str] = mapped_column(Text, default="")
    position_start: Mapped[int | None] = mapped_column(Integer)
    position_end: Mapped[int | None] = mapped_column(Integer)
    position_unit: Mapped[str | None] = mapped_column(String(10))
    page: Mapped[str | None] = mapped_column(String(100))
    claim_text: Mapped[str | None] = mapped_column(Text)
    answer_id: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
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


class Verification(Base):
    """One check of one citation against one snapshot. Append-only: never updated or deleted."""

    __tablename__ = "verifications"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    citation_id: Mapped[str] = mapped_column(ForeignKey("citations.id"))
    snapshot_id: Mapped[str | None] = mapped_column(ForeignKey("snapshots.id"))
    extraction_id: Mapped[int | None] = mapped_column(Integer)
    run_id: Mapped[str | None] = mapped_column(String(64))
    # sha256 of (citation, snapshot, extraction, run): a retried batch inserts nothing twice.
    idempotency_key: Mapped[str | None] = mapped_column(String(DIGEST_LENGTH))
    status: Mapped[str] = mapped_column(String(30))
    span_start: Mapped[int | None] = mapped_column(Integer)
    span_end: Mapped[int | None] = mapped_column(Integer)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    closest_text: Mapped[str | None] = mapped_column(Text)
    closest_score: Mapped[float | None] = mapped_column(Float)
    reason: Mapped[str | None] = mapped_column(Text)
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    verifier: Mapped[str] = mapped_column(String(100))
    normalizer: Mapped[str] = mapped_column(String(100))
    checked_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint(
            "status IN (" + ", ".join(f"'{status.value}'" for status in Status) + ")",
            name="status_known",
        ),
        Index("ix_verifications_citation_id", "citation_id"),
        Index("ix_verifications_idempotency_key", "idempotency_key", unique=True),
        Index("ix_verifications_run_id", "run_id"),
    )


class Batch(Base):
    """A piece of bulk work split into items for workers (``snap fetch --enqueue`` and the
    like). Its state lives here, not in the broker: the broker only delivers item ids, so a
    lost message is found by looking for items that are not done (``snap jobs --resume``)."""

    __tablename__ = "batches"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # uuid4 hex; reverify run id
    kind: Mapped[str] = mapped_column(String(20))
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    total: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint(
            "kind IN (" + ", ".join(f"'{kind.value}'" for kind in BatchKind) + ")",
            name="kind_known",
        ),
        CheckConstraint("total >= 0", name="total_nonnegative"),
    )


class BatchItem(Base):
    """One task of a batch: a URL to capture, a snapshot group to re-verify, a snapshot to
    re-extract. ``key`` is unique in its batch, so splitting the same work twice adds nothing;
    ``state`` only moves forward to done through a compare-and-set, so two deliveries of one
    message record its result once."""

    __tablename__ = "batch_items"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.id"))
    key: Mapped[str] = mapped_column(Text)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    state: Mapped[str] = mapped_column(String(10), default=ItemState.PENDING.value)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # 'transient' (worth another try: snap jobs --resume re-queues it) or 'permanent'
    error_kind: Mapped[str | None] = mapped_column(String(10))
    last_error: Mapped[str | None] = mapped_column(Text)
    # what a done item did, in the text form of its kind (records.item_results): a snapshot
    # id, a sentence of counts, or extraction ids as a JSON list
    result: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
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


class LogEntry(Base):
    """One record in the verifiable log (records.attest.log), in the order it was recorded:
    ``position`` is its leaf index in the Merkle tree, ``leaf_hash`` the RFC 9162 leaf hash of
    the record's canonical form when it was appended. Append-only, like verifications."""

    __tablename__ = "log_entries"

    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(20))
    record_id: Mapped[str] = mapped_column(String(200))
    leaf_hash: Mapped[str] = mapped_column(String(DIGEST_LENGTH))
    appended_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        UniqueConstraint("kind", "record_id", name="uq_log_entries_kind_record"),
        CheckConstraint(digest_check("leaf_hash"), name="leaf_hash_digest"),
        CheckConstraint(
            "kind IN (" + ", ".join(f"'{kind}'" for kind in LOG_KINDS) + ")", name="kind_known"
        ),
        CheckConstraint("position >= 0", name="position_nonnegative"),
    )


class LogCheckpoint(Base):
    """A signed, timestamped statement of the log's size and root: ``document`` is its
    canonical JSON (what is signed and stamped), ``signature`` and ``timestamp`` as a capture's
    manifest records them (records.attest.seal)."""

    __tablename__ = "log_checkpoints"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tree_size: Mapped[int] = mapped_column(Integer)
    root_hash: Mapped[str] = mapped_column(String(DIGEST_LENGTH))
    document: Mapped[str] = mapped_column(Text)
    signature: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    timestamp: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (
        CheckConstraint(digest_check("root_hash"), name="root_hash_digest"),
        CheckConstraint("tree_size >= 0", name="tree_size_nonnegative"),
    )
