"""Checkpoints of the log (``snap log checkpoint``, and the one that closes every recording
command). Checking the log, consistency between checkpoints and inclusion proofs are
``records.attest.log_checks``: a command that only records (a one-citation ``snap verify``)
does not load them.

A checkpoint is made in three steps, so no transaction is held across the TSA's network call:
read the leaves (a read transaction), sign and stamp the checkpoint document (no
transaction), insert it (a short write transaction).

Before signing, the log must still extend the newest checkpoint: its first ``treeSize``
stored leaves have the root that checkpoint's signed document states, and that document's
signature holds. Otherwise a log reordered or rewritten behind snap's back would get a fresh
signature and timestamp, and every inclusion proof against it would check; snap refuses
instead (``AttestationFailure``). Both roots come from one pass over the stored leaf hashes
(``merkle.tree_and_prefix_roots``): the check costs next to nothing beyond the new root.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from records.attest import merkle
from records.attest.errors import AttestationFailure
from records.attest.log import (
    INSERT_CHECKPOINT,
    checkpoint_document,
    entry_count,
    hex_digest,
    latest_checkpoint_row,
    leaf_hashes,
    raw_digest,
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
    checkpoint already covers every entry (unless ``force``). AttestationFailure, and nothing
    signed, when the log no longer extends the newest checkpoint (``root_extending``). Core
    statements only (plain rows, ``records.attest.log.CHECKPOINTS``): every recording command
    ends here."""
    with workspace.db.reading() as session:
        hashes = leaf_hashes(session)
        last = latest_checkpoint_row(session)
    size, root_hash = len(hashes), root_extending(last, hashes)
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


def root_extending(last: Any | None, hashes: list[str]) -> str:
    """The root of the log of these leaf hashes, once it is known to extend ``last`` (the
    newest checkpoint's row); else AttestationFailure, and nothing is signed."""
    leaves = [raw_digest(leaf_hash) for leaf_hash in hashes]
    if last is None:
        return hex_digest(merkle.root(leaves))
    label = f"checkpoint {last.id}"
    signed_size, signed_root = _signed_state(last, label)
    refused = (
        "; no new checkpoint was signed (anything just recorded is kept; snap log verify names"
        " what changed)"
    )
    if signed_size > len(leaves):
        raise AttestationFailure(
            f"the log holds {len(leaves)} entries, fewer than the {signed_size} {label} signed:"
            f" entries were removed{refused}"
        )
    root, prefix_root = merkle.tree_and_prefix_roots(leaves, signed_size)
    if hex_digest(prefix_root) != signed_root:
        raise AttestationFailure(
            f"the log no longer extends {label}: its first {signed_size} entries do not have"
            f" the root {label} signed (an entry was changed, removed or moved){refused}"
        )
    return hex_digest(root)


def _signed_state(last: Any, label: str) -> tuple[int, str]:
    """The size and root ``last``'s document states, once its columns agree with it and its
    signature (when signed) is over it."""
    refused = "; no new checkpoint was signed (snap log verify shows what changed)"
    document = str(last.document)
    try:
        stated = json.loads(document)
    except ValueError:
        raise AttestationFailure(f"{label}'s document is not JSON{refused}") from None
    size, root = stated.get("treeSize"), stated.get("rootHash")
    if not isinstance(size, int) or (size, root) != (last.tree_size, last.root_hash):
        raise AttestationFailure(f"{label}'s columns differ from its signed document{refused}")
    if last.signature.get("state") == "signed":
        from records.attest.log_checks import signature_problem  # cryptography: when signed

        problem = signature_problem(dict(last.signature), document.encode("utf-8"))
        if problem is not None:
            raise AttestationFailure(f"{label}: {problem}{refused}")
    return size, str(root)


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
