"""The log checked (``snap log verify``), consistency proofs between its checkpoints (``snap
log consistency``) and inclusion proofs for exports and ``snap attest``: every leaf recomputed
from the rows as they are now, every checkpoint's root, signature and timestamp checked.
Making checkpoints is ``records.attest.checkpoints``.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from records.attest import merkle
from records.attest.log import (
    checkpoints,
    hex_digest,
    latest_checkpoint,
    leaf_bytes,
    leaf_hashes,
    raw_digest,
    stored_leaves,
)
from records.errors import RecordNotFound
from records.workspace import Workspace
from snapshotter.errors import InputError
from snapshotter.store import BlobStore

# The ORM classes are imported by the functions that read them (the log's own module does not
# load them: appending and checkpointing use the tables).
if TYPE_CHECKING:
    from records.models import LogCheckpoint, LogEntry


@dataclass(frozen=True)
class LogProblem:
    """One thing ``snap log verify`` found wrong: in words, at which log position (when one
    is known) and, for a row changed, removed or inserted, which record."""

    problem: str
    position: int | None = None
    kind: str | None = None  # "capture", "extraction" or "verification"
    record_id: str | None = None


@dataclass(frozen=True)
class LogReport:
    """``snap log verify``: the log's size, its checkpoints and every problem found (its
    JSON: ``records.wire_attest.log_report_json``)."""

    entries: int
    checkpoints: int
    problems: tuple[LogProblem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Findings:
    """The problems found so far, in the order found."""

    problems: list[LogProblem] = field(default_factory=list)

    def add(
        self,
        problem: str,
        *,
        position: int | None = None,
        kind: str | None = None,
        record_id: str | None = None,
    ) -> None:
        self.problems.append(LogProblem(problem, position, kind, record_id))


def verify_log(workspace: Workspace) -> LogReport:
    """Recompute every leaf from the rows, find rows the log does not hold, and check every
    checkpoint (root, signature, timestamp) and each one's consistency with the one before."""
    found = _Findings()
    with workspace.db.reading() as session:
        entries = stored_leaves(session)
        rows = _rows(session)
        stored = checkpoints(session)
    _check_rows(found, entries, rows)
    leaves = [raw_digest(entry.leaf_hash) for entry in entries]
    chain = tsa_chain(workspace)
    previous: tuple[LogCheckpoint, bool] | None = None  # and whether its root still holds
    intact = 0  # the largest checkpointed prefix whose root still holds
    for checkpoint in stored:
        holds = _check_checkpoint(found, workspace.store, checkpoint, leaves, intact, chain)
        if holds:
            intact = max(intact, checkpoint.tree_size)
        if previous is not None:
            _check_consistency(found, previous, (checkpoint, holds))
        previous = checkpoint, holds
    return LogReport(len(entries), len(stored), tuple(found.problems))


def _rows(session: Any) -> dict[tuple[str, str], Any]:
    from records.models import Capture, Extraction, Verification

    found: dict[tuple[str, str], Any] = {}
    for kind, model in (
        ("capture", Capture),
        ("extraction", Extraction),
        ("verification", Verification),
    ):
        for row in session.scalars(select(model)):
            found[(kind, str(row.id))] = row
    return found


def _check_rows(
    report: _Findings, entries: list[LogEntry], rows: dict[tuple[str, str], Any]
) -> None:
    logged: set[tuple[str, str]] = set()
    for expected, entry in enumerate(entries):
        if entry.position != expected:
            report.add(
                f"no entry at position {expected}: the log skips to {entry.position}",
                position=expected,
            )
            break
    for entry in entries:
        key = (entry.kind, entry.record_id)
        logged.add(key)
        row = rows.get(key)
        if row is None:
            report.add(
                f"{entry.kind} {entry.record_id} was removed from the database",
                position=entry.position,
                kind=entry.kind,
                record_id=entry.record_id,
            )
            continue
        now = hex_digest(merkle.leaf_hash(leaf_bytes(row)))
        if now != entry.leaf_hash:
            report.add(
                f"{entry.kind} {entry.record_id} was changed after it was logged",
                position=entry.position,
                kind=entry.kind,
                record_id=entry.record_id,
            )
    for kind, record_id in sorted(set(rows) - logged):
        report.add(
            f"{kind} {record_id} was inserted without a log entry", kind=kind, record_id=record_id
        )


def tsa_chain(workspace: Workspace) -> tuple[Any, ...] | None:
    """The configured TSA chain, to check tokens against; None checks their imprint only."""
    path = workspace.settings.tsa_chain
    if path is None:
        return None
    from records.attest.timestamps import load_chain  # cryptography: only with a chain

    return load_chain(path)


def _check_checkpoint(
    report: _Findings,
    store: BlobStore,
    checkpoint: LogCheckpoint,
    leaves: list[bytes],
    intact: int,
    chain: tuple[Any, ...] | None,
) -> bool:
    """Report what is wrong with one checkpoint; whether its root still holds."""
    label = f"checkpoint {checkpoint.id} (size {checkpoint.tree_size})"
    document = checkpoint.document.encode("utf-8")
    try:
        stated = json.loads(document)
    except ValueError:
        report.add(f"{label}: its document is not JSON")
        return False
    if (stated.get("treeSize"), stated.get("rootHash")) != (
        checkpoint.tree_size,
        checkpoint.root_hash,
    ):
        report.add(f"{label}: its columns differ from its signed document")
    holds = False
    if checkpoint.tree_size > len(leaves):
        report.add(f"{label}: the log now holds only {len(leaves)} entries", position=len(leaves))
    elif hex_digest(merkle.root(leaves[: checkpoint.tree_size])) == checkpoint.root_hash:
        holds = True
    else:
        report.add(
            f"{label}: the log's first {checkpoint.tree_size} entries no longer have"
            f" its root: an entry at a position from {intact} to {checkpoint.tree_size - 1}"
            " was changed, removed or moved",
            position=intact,
        )
    problem = signature_problem(checkpoint.signature, document)
    if problem is not None:
        report.add(f"{label}: {problem}")
    problem = token_problem(store, checkpoint.timestamp, document, chain=chain)
    if problem is not None:
        report.add(f"{label}: {problem}")
    return holds


def _check_consistency(
    report: _Findings, old: tuple[LogCheckpoint, bool], new: tuple[LogCheckpoint, bool]
) -> None:
    """Blame a checkpoint for not extending the one before only when that is what the rows
    show: it was signed over the log as it is now (its root holds) while the earlier one's
    root no longer does, so it signed a rewritten log. When its own root does not hold either,
    the rows changed after both were signed; ``_check_checkpoint`` said so, and the two signed
    checkpoints may well be consistent. When both hold, they are prefixes of one log."""
    (earlier, earlier_holds), (later, later_holds) = old, new
    if later.tree_size < earlier.tree_size:
        report.add(f"checkpoint {later.id} is smaller than checkpoint {earlier.id} before it")
    elif later_holds and not earlier_holds:
        report.add(
            f"checkpoint {later.id} does not extend checkpoint {earlier.id}: it was signed over"
            f" a log whose first {earlier.tree_size} entries no longer have checkpoint"
            f" {earlier.id}'s root"
        )


@dataclass(frozen=True)
class Consistency:
    """RFC 9162's consistency proof that the log of one checkpoint extends the log of an
    earlier one: with both checkpoints (documents, signatures, tokens), the other side checks
    it offline, holding only the two checkpoints (``check_consistency.py``, hashlib only)."""

    old: dict[str, Any]
    new: dict[str, Any]
    proof: tuple[str, ...]
    holds: bool  # checked here against both checkpoints' roots
    problems: tuple[str, ...] = ()  # a checkpoint's signature or token that does not check

    @property
    def ok(self) -> bool:
        return self.holds and not self.problems


def _no_checkpoint(missing: int | None, newest: LogCheckpoint | None) -> str:
    if newest is None:
        return "no log checkpoint is recorded yet (snap log checkpoint makes one)"
    return f"no log checkpoint {missing} is recorded (the newest is {newest.id})"


def consistency_between(workspace: Workspace, old_id: int, new_id: int | None) -> Consistency:
    """The consistency proof from checkpoint ``old_id`` to ``new_id`` (default: the newest),
    computed from the stored log and checked against both signed roots."""
    from records.models import LogCheckpoint

    with workspace.db.reading() as session:
        old = session.get(LogCheckpoint, old_id)
        new = latest_checkpoint(session) if new_id is None else session.get(LogCheckpoint, new_id)
        if old is None or new is None:
            missing = old_id if old is None else new_id
            raise RecordNotFound(_no_checkpoint(missing, latest_checkpoint(session)))
        if old.tree_size > new.tree_size:
            raise InputError(
                f"checkpoint {old.id} (size {old.tree_size}) is larger than checkpoint {new.id}"
                f" (size {new.tree_size}): give the earlier one first"
            )
        leaves = [raw_digest(leaf_hash) for leaf_hash in leaf_hashes(session)]
        old_json, new_json = checkpoint_json(old), checkpoint_json(new)
    sizes, roots = (old.tree_size, new.tree_size), (old.root_hash, new.root_hash)
    proof: list[bytes] = []
    if 0 < sizes[0] < sizes[1] <= len(leaves):
        proof = merkle.consistency_proof(sizes[0], leaves[: sizes[1]])
    holds = sizes[0] > 0 and merkle.verify_consistency(
        *sizes, raw_digest(roots[0]), raw_digest(roots[1]), proof
    )
    chain = tsa_chain(workspace)
    problems = [
        problem
        for checkpoint in (old_json, new_json)
        for problem in _with_token(workspace.store, checkpoint, chain)
    ]
    return Consistency(old_json, new_json, tuple(p.hex() for p in proof), holds, tuple(problems))


def _with_token(store: BlobStore, checkpoint: dict[str, Any], chain: Any) -> list[str]:
    """The checkpoint's token inlined (base64) for the other side; what does not check."""
    document = str(checkpoint["document"]).encode("utf-8")
    problems = []
    problem = signature_problem(checkpoint.get("signature") or {}, document)
    if problem is not None:
        problems.append(f"checkpoint {checkpoint['id']}: {problem}")
    stamp = dict(checkpoint.get("timestamp") or {})
    if stamp.get("state") == "stamped":
        problem = token_problem(store, stamp, document, chain=chain)
        if problem is not None:
            problems.append(f"checkpoint {checkpoint['id']}: {problem}")
        else:
            reply = store.get("timestamp", str(stamp["hash"]), version_id=stamp.get("versionId"))
            checkpoint["timestamp"] = {**stamp, "token": base64.b64encode(reply).decode("ascii")}
    return problems


def signature_problem(recorded: dict[str, Any], data: bytes) -> str | None:
    """None when the recorded signature (with its public key) is over ``data``; "not signed"
    is not a problem, a signature that does not check is."""
    if recorded.get("state") != "signed":
        return None
    # cryptography is loaded for a signature to check, not by every command that checkpoints
    from records.attest.signing import Signature, load_public_pem, verify_signature

    try:
        public = load_public_pem(str(recorded.get("publicKey", "")))
    except Exception:
        return "its public key cannot be read"
    signature = Signature(
        str(recorded.get("algorithm")), str(recorded.get("keyId")), str(recorded.get("value"))
    )
    if not verify_signature(public, signature, data):
        return "its signature does not verify"
    return None


def token_problem(
    store: BlobStore, recorded: dict[str, Any], data: bytes, *, chain: Any
) -> str | None:
    """None when the stored timestamp reply stamps SHA-256(``data``) (and, given the TSA
    chain, verifies against it); a missing or damaged token blob is a problem."""
    if recorded.get("state") != "stamped":
        return None
    try:
        reply = store.get("timestamp", str(recorded["hash"]), version_id=recorded.get("versionId"))
    except Exception as error:
        return f"its timestamp token cannot be read ({getattr(error, 'message', error)})"
    return reply_problem(reply, data, chain=chain)


def reply_problem(reply: bytes, data: bytes, *, chain: Any) -> str | None:
    """None when the timestamp ``reply`` stamps SHA-256(``data``) and, given the TSA chain,
    verifies against it; without a chain only its imprint is compared."""
    if chain is None:
        from rfc3161_client import decode_timestamp_response

        try:
            imprint = decode_timestamp_response(reply).tst_info.message_imprint.message
        except ValueError:
            return "its timestamp token is not an RFC 3161 reply"
        if imprint != hashlib.sha256(data).digest():
            return "its timestamp token stamps another digest"
        return None
    from records.attest.timestamps import timestamp_problem

    problem = timestamp_problem(chain, reply, data)
    return None if problem is None else f"its timestamp token {problem}"


RecordKey = tuple[str, str]  # a log entry's record: (kind, record id)
Proofs = dict[RecordKey, dict[str, Any] | None]  # ``LogProofs.of``'s answer


def record_keys(capture_ids: Iterable[int], verification_ids: Iterable[int]) -> list[RecordKey]:
    """The log's keys of these captures and verifications, captures first."""
    keys = [("capture", str(capture_id)) for capture_id in capture_ids]
    return keys + [("verification", str(verification_id)) for verification_id in verification_ids]


class LogProofs:
    """Inclusion proofs against the newest checkpoint for as many records as one operation
    asks, in as many calls as it likes: the log's leaf hashes are read and its tree hashed
    once (``merkle.MerkleTree``), then each proof costs O(log n) hashes. An export or an
    attestation of many records made one pass over the log per record before (about 200 ms
    each at 100,000 entries); now the records' own rows are what each call reads.

    Made for one operation: every proof it gives is against the checkpoint that was newest
    when it was first asked, so the proofs of one export agree with each other."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._checkpoint: dict[str, Any] | None = None  # checkpoint_json of the newest
        self._tree: merkle.MerkleTree | None = None

    def of(self, wanted: list[RecordKey]) -> Proofs:
        """Each wanted record's leaf, position and audit path to the newest checkpoint, with
        that checkpoint (all the other side needs to check it offline): None for a record not
        in the log, no path (``"checkpoint": None``) for a record no checkpoint holds yet."""
        if not wanted:
            return {}
        with self._workspace.db.reading() as session:
            if self._tree is None:
                self._read_log(session)
            entries = _entries_of(session, wanted)
            rows = {key: _rows_of(session, *key) for key in wanted if key in entries}
        return {key: self._proof(entries.get(key), rows.get(key)) for key in wanted}

    def _read_log(self, session: Any) -> None:
        newest = latest_checkpoint(session)
        self._checkpoint = None if newest is None else checkpoint_json(newest)
        size = 0 if newest is None else newest.tree_size
        leaves = [raw_digest(leaf) for leaf in leaf_hashes(session, limit=size)]
        self._tree = merkle.MerkleTree(leaves)

    def _proof(self, entry: tuple[int, str] | None, leaf: bytes | None) -> dict[str, Any] | None:
        if entry is None:
            return None
        position, leaf_hash = entry
        checkpoint, tree = self._checkpoint, self._tree
        size = 0 if checkpoint is None else int(checkpoint["treeSize"])
        if checkpoint is None or tree is None or size <= position:
            return {"position": position, "leafHash": leaf_hash, "checkpoint": None}
        return {
            "position": position,
            "treeSize": size,
            "leaf": base64.b64encode(leaf).decode("ascii") if leaf else None,
            "leafHash": leaf_hash,
            "path": [p.hex() for p in tree.inclusion_proof(position, size)],
            "checkpoint": copy.deepcopy(checkpoint),  # each proof's own: callers inline tokens
        }


def _entries_of(session: Any, wanted: list[RecordKey]) -> dict[RecordKey, tuple[int, str]]:
    """The log position and leaf hash of each wanted record that is in the log, asked by kind
    in chunks (one statement per few hundred records, whatever the log's size)."""
    from records.tables import LOG_ENTRIES as ENTRIES

    found: dict[RecordKey, tuple[int, str]] = {}
    by_kind: dict[str, list[str]] = {}
    for kind, record_id in dict.fromkeys(wanted):
        by_kind.setdefault(kind, []).append(record_id)
    columns = (ENTRIES.c.position, ENTRIES.c.record_id, ENTRIES.c.leaf_hash)
    for kind, ids in by_kind.items():
        for chunk in (ids[i : i + 500] for i in range(0, len(ids), 500)):
            query = select(*columns).where(ENTRIES.c.kind == kind, ENTRIES.c.record_id.in_(chunk))
            for position, record_id, leaf_hash in session.connection().execute(query):
                found[(kind, record_id)] = (position, leaf_hash)
    return found


class ProofFault(StrEnum):
    """What is wrong with an inclusion proof, whoever says it: snap of its own records
    (``proof_problem``) or an import of an archive's attestations, in words of its own."""

    NO_LEAF = "no leaf"  # the record is gone: the proof carries no leaf to prove
    LEAF_CHANGED = "leaf changed"  # the leaf does not hash to the leaf hash logged
    CHECKPOINT_UNREADABLE = "checkpoint unreadable"
    OFF_ROOT = "off root"  # the path does not lead to the root the checkpoint states


def proof_fault(proof: dict[str, Any] | None) -> ProofFault | None:
    """The leaf hashes to the logged leaf hash, and the path leads from it to the root the
    checkpoint's signed document states. None when it checks, or when no checkpoint holds
    the record yet (there is no proof to check)."""
    checkpoint = (proof or {}).get("checkpoint")
    if proof is None or not checkpoint:
        return None
    leaf = proof.get("leaf")
    if leaf is None:
        return ProofFault.NO_LEAF
    if hex_digest(merkle.leaf_hash(base64.b64decode(leaf))) != proof["leafHash"]:
        return ProofFault.LEAF_CHANGED
    try:
        signed = json.loads(checkpoint["document"])
        size, root = int(signed["treeSize"]), raw_digest(str(signed["rootHash"]))
    except (ValueError, KeyError, TypeError):
        return ProofFault.CHECKPOINT_UNREADABLE
    path = [bytes.fromhex(node) for node in proof["path"]]
    leaf_hash = raw_digest(proof["leafHash"])
    if size != proof["treeSize"] or not merkle.verify_inclusion(
        proof["position"], size, leaf_hash, path, root
    ):
        return ProofFault.OFF_ROOT
    return None


def proof_problem(kind: str, record_id: str, proof: dict[str, Any] | None) -> str | None:
    """What is wrong with the inclusion proof snap is about to hand out for a record, checked
    as the other side's ``check_inclusion.py`` checks it (``proof_fault``), in words about
    snap's own database: the leaf is the row as it is now."""
    fault = proof_fault(proof)
    if fault is None or proof is None:
        return None
    label, position = f"{kind} {record_id}", proof["position"]
    checkpoint = proof["checkpoint"]
    if fault is ProofFault.NO_LEAF:
        return f"{label} was removed from the database after it was logged at {position}"
    if fault is ProofFault.LEAF_CHANGED:
        return (
            f"{label} was changed after it was logged: its row no longer hashes to the leaf at"
            f" position {position}, so its inclusion proof does not check"
        )
    if fault is ProofFault.CHECKPOINT_UNREADABLE:
        return f"{label}: checkpoint {checkpoint['id']}'s document cannot be read"
    return (
        f"{label}: its inclusion proof at position {position} does not lead to the root"
        f" checkpoint {checkpoint['id']} signed: the log was changed after that checkpoint"
        " (snap log verify names the entries)"
    )


def proof_problems(proofs: Proofs) -> list[str]:
    """``proof_problem`` of each proof (``LogProofs.of``'s answer), in its order."""
    found = (proof_problem(kind, record_id, proof) for (kind, record_id), proof in proofs.items())
    return [problem for problem in found if problem is not None]


def _rows_of(session: Any, kind: str, record_id: str) -> bytes | None:
    from records.models import Capture, Extraction, Verification

    model = {"capture": Capture, "extraction": Extraction, "verification": Verification}[kind]
    row = session.get(model, int(record_id))
    return None if row is None else leaf_bytes(row)


def checkpoint_json(checkpoint: LogCheckpoint) -> dict[str, Any]:
    return {
        "id": checkpoint.id,
        "document": checkpoint.document,
        "treeSize": checkpoint.tree_size,
        "rootHash": checkpoint.root_hash,
        "signature": checkpoint.signature,
        "timestamp": checkpoint.timestamp,
    }
