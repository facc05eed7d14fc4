"""SQLAlchemy 2.x typed models: captures, snapshots, citations and the append-only checks.

The tables themselves (columns, types, constraints, indexes) are defined once, as Core tables,
in ``records.tables``; each class here maps one of them (``__table__``) and annotates its
columns for the type checker. A path that only reads and writes plain rows uses the tables and
never imports this module, so it never builds the mappers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import DeclarativeBase, Mapped

from records import tables
from records.tables import (
    CAPTURE_METHODS,
    DIGEST_LENGTH,
    EXTRACTION_SOURCES,
    LOG_KINDS,
    NAMING_CONVENTION,
    UTCDateTime,
    digest_check,
    utcnow,
)

__all__ = [
    "CAPTURE_METHODS",
    "DIGEST_LENGTH",
    "EXTRACTION_SOURCES",
    "LOG_KINDS",
    "NAMING_CONVENTION",
    "Base",
    "Batch",
    "BatchItem",
    "Capture",
    "Citation",
    "Extraction",
    "LogCheckpoint",
    "LogEntry",
    "Snapshot",
    "UTCDateTime",
    "Verification",
    "digest_check",
    "utcnow",
]


class Base(DeclarativeBase):
    metadata = tables.METADATA


class Snapshot(Base):
    """One stored source: its raw bytes, addressed by their SHA-256, and the store holding them.

    The text columns describe the snapshot's first extraction and are kept for old readers;
    the texts themselves are the ``extractions`` rows."""

    __table__ = tables.SNAPSHOTS

    id: Mapped[str]
    raw_hash: Mapped[str]
    text_hash: Mapped[str | None]
    norm_hash: Mapped[str | None]
    raw_size: Mapped[int]
    text_size: Mapped[int | None]
    content_type: Mapped[str]
    extractor: Mapped[str]
    normalizer: Mapped[str]
    store_location: Mapped[str]
    raw_version_id: Mapped[str | None]
    text_version_id: Mapped[str | None]
    lock_mode: Mapped[str | None]
    retain_until: Mapped[datetime | None]
    pages: Mapped[list[Any]]
    flags: Mapped[list[Any]]
    created_at: Mapped[datetime]


class Extraction(Base):
    """One text made from a snapshot's raw bytes: by which extractor, decoded how, with what
    result. The same bytes may have several (a new extractor version, another declared charset);
    each is kept, and each citation is pinned to the one it was checked against. The key
    (snapshot, extractor, decoding) names one deterministic computation, so a second row with
    that key and a different text is refused as a conflict, never stored beside the first."""

    __table__ = tables.EXTRACTIONS

    id: Mapped[int]
    snapshot_id: Mapped[str]
    extractor: Mapped[str]
    decoding: Mapped[str]
    content_type: Mapped[str]
    text_hash: Mapped[str | None]
    norm_hash: Mapped[str | None]
    text_size: Mapped[int | None]
    normalizer: Mapped[str]
    text_version_id: Mapped[str | None]
    pages: Mapped[list[Any]]
    flags: Mapped[list[Any]]
    # What the text was made from: the stored raw bytes ('raw', deterministic) or the page a
    # browser rendered in one capture ('rendered'; its decoding names that capture).
    source: Mapped[str]
    # Where the text is code (a ``code`` blob, snapshotter.extract.code_spans): the matcher
    # compares it as code.  None: the extractor recorded no code in this text.
    code_hash: Mapped[str | None]
    code_version_id: Mapped[str | None]
    created_at: Mapped[datetime]


class Capture(Base):
    """One fetch attempt, stored or failed; a failed capture has no snapshot to check."""

    __table__ = tables.CAPTURES

    id: Mapped[int]
    url: Mapped[str]
    final_url: Mapped[str | None]
    # records.urls.canonical_url of url and final_url: what lookups compare
    url_key: Mapped[str | None]
    final_url_key: Mapped[str | None]
    fetched_at: Mapped[datetime]
    http_status: Mapped[int | None]
    outcome: Mapped[str]
    error: Mapped[str | None]
    snapshot_id: Mapped[str | None]
    provenance: Mapped[dict[str, Any]]
    # http, browser (snapshotter.browser), file or import; NULL before it was recorded
    method: Mapped[str | None]
    # May this capture be its URL's latest over the captures snap made itself? True for snap's
    # own; an import only with ``snap import --as-latest`` (records.repository.latest_capture).
    as_latest: Mapped[bool]


class Citation(Base):
    """A quote attributed to a source, as W3C selectors; its id is content-derived if not given."""

    __table__ = tables.CITATIONS

    id: Mapped[str]
    fingerprint: Mapped[str]
    url: Mapped[str | None]  # exactly as given
    url_key: Mapped[str | None]
    snapshot_id: Mapped[str | None]
    # No foreign key, here and on verifications: SQLite can add and drop a plain column in
    # place, but a referencing one only by rebuilding tables that carry the append-only
    # triggers. Only snap writes these ids, always from a row it has just read.
    extraction_id: Mapped[int | None]
    claimed_snapshot: Mapped[str | None]
    claimed_hashes: Mapped[dict[str, Any] | None]
    exact: Mapped[str]
    prefix: Mapped[str]
    suffix: Mapped[str]
    position_start: Mapped[int | None]
    position_end: Mapped[int | None]
    position_unit: Mapped[str | None]
    page: Mapped[str | None]
    claim_text: Mapped[str | None]
    answer_id: Mapped[str | None]
    created_at: Mapped[datetime]


class Verification(Base):
    """One check of one citation against one snapshot. Append-only: never updated or deleted."""

    __table__ = tables.VERIFICATIONS

    id: Mapped[int]
    citation_id: Mapped[str]
    snapshot_id: Mapped[str | None]
    extraction_id: Mapped[int | None]
    run_id: Mapped[str | None]
    # sha256 of (citation, snapshot, extraction, run): a retried batch inserts nothing twice.
    idempotency_key: Mapped[str | None]
    status: Mapped[str]
    span_start: Mapped[int | None]
    span_end: Mapped[int | None]
    matches: Mapped[int]
    closest_text: Mapped[str | None]
    closest_score: Mapped[float | None]
    reason: Mapped[str | None]
    details: Mapped[dict[str, Any]]
    verifier: Mapped[str]
    normalizer: Mapped[str]
    checked_at: Mapped[datetime]


class Batch(Base):
    """A piece of bulk work split into items for workers (``snap fetch --enqueue`` and the
    like). Its state lives here, not in the broker: a message names only an item (its id and
    this batch's id, a random UUID that tells this database's items from another's), so a lost
    message is found by looking for items that are not done (``snap jobs --resume``)."""

    __table__ = tables.BATCHES

    id: Mapped[str]  # uuid4 hex; reverify run id
    kind: Mapped[str]
    params: Mapped[dict[str, Any]]
    total: Mapped[int]
    created_at: Mapped[datetime]


class BatchItem(Base):
    """One task of a batch: a URL to capture, a snapshot group to re-verify, a snapshot to
    re-extract. ``key`` is unique in its batch, so splitting the same work twice adds nothing;
    ``state`` only moves forward to done through a compare-and-set, so two deliveries of one
    message record its result once."""

    __table__ = tables.BATCH_ITEMS

    id: Mapped[int]
    batch_id: Mapped[str]
    key: Mapped[str]
    payload: Mapped[dict[str, Any]]
    state: Mapped[str]
    attempts: Mapped[int]
    # 'transient' (worth another try: snap jobs --resume re-queues it) or 'permanent'
    error_kind: Mapped[str | None]
    last_error: Mapped[str | None]
    # what a done item did, in the text form of its kind (records.item_results): a snapshot
    # id, a sentence of counts, or extraction ids as a JSON list
    result: Mapped[str | None]
    updated_at: Mapped[datetime]


class LogEntry(Base):
    """One record in the verifiable log (records.attest.log), in the order it was recorded:
    ``position`` is its leaf index in the Merkle tree, ``leaf_hash`` the RFC 9162 leaf hash of
    the record's canonical form when it was appended. Append-only, like verifications."""

    __table__ = tables.LOG_ENTRIES

    position: Mapped[int]
    kind: Mapped[str]
    record_id: Mapped[str]
    leaf_hash: Mapped[str]
    appended_at: Mapped[datetime]


class LogCheckpoint(Base):
    """A signed, timestamped statement of the log's size and root: ``document`` is its
    canonical JSON (what is signed and stamped), ``signature`` and ``timestamp`` as a capture's
    manifest records them (records.attest.seal)."""

    __table__ = tables.LOG_CHECKPOINTS

    id: Mapped[int]
    tree_size: Mapped[int]
    root_hash: Mapped[str]
    document: Mapped[str]
    signature: Mapped[dict[str, Any]]
    timestamp: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]
