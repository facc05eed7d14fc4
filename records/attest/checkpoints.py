"""Checkpoints of the log (``snap log checkpoint``, and the one that closes every recording
command). Checking the log, consistency between checkpoints and inclusion proofs are
``records.attest.log_checks``: a command that only records (a one-citation ``snap verify``)
does not load them.

A checkpoint is made in three steps, so no transaction is held across the TSA's network call:
read the leaves (a read transaction), sign and stamp the checkpoint document (no
transaction), insert it (a short write transaction).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from records.attest.log import (
    INSERT_CHECKPOINT,
    checkpoint_document,
    entry_count,
    latest_checkpoint_row,
    leaf_hashes,
    tree_state_of,
)
from records.attest.seal import attestor_of
from records.workspace import Workspace


@dataclass(frozen=True)
class CheckpointResult:
    id: int | None
    tree_size: int
    root_hash: str
    created: bool
    signature: dict[str, Any]
    timestamp: dict[str, Any]


def make_checkpoint(workspace: Workspace, *, force: bool = False) -> CheckpointResult:
    """Sign and stamp the log's current size and root; nothing new when the newest
    checkpoint already covers every entry (unless ``force``).  Core statements only (plain
    rows, ``records.attest.log.CHECKPOINTS``): every recording command ends here."""
    with workspace.db.reading() as session:
        size, root_hash = tree_state_of(leaf_hashes(session))
        last = latest_checkpoint_row(session)
        if last is not None and last.tree_size == size and not force:
            return _result(last, created=False)
    created_at = datetime.now(UTC)
    document = checkpoint_document(size, root_hash, created_at)
    attestor = attestor_of(workspace)
    signature = attestor.sign(document)
    timestamp = attestor.stamp(workspace.store, document)  # network: no transaction open
    values = {
        "tree_size": size,
        "root_hash": root_hash,
        "document": document.decode("utf-8"),
        "signature": signature,
        "timestamp": timestamp,
        "created_at": created_at,
    }
    with workspace.db.session() as session:
        inserted = session.connection().execute(INSERT_CHECKPOINT, values)
        (checkpoint_id,) = inserted.inserted_primary_key or (None,)
    return CheckpointResult(checkpoint_id, size, root_hash, True, signature, timestamp)


def checkpoint_if_grown(workspace: Workspace) -> CheckpointResult | None:
    """The checkpoint at the end of a batch (a command that recorded anything)."""
    with workspace.db.reading() as session:
        size = entry_count(session)
        last = latest_checkpoint_row(session)
    if size == 0 or (last is not None and last.tree_size == size):
        return None
    return make_checkpoint(workspace)


def _result(row: Any, *, created: bool) -> CheckpointResult:
    """From a ``LogCheckpoint`` or a plain row of its columns."""
    return CheckpointResult(
        row.id, row.tree_size, row.root_hash, created, dict(row.signature), dict(row.timestamp)
    )
