"""Checking a capture's seal (its manifest, signature and timestamp token) wherever its blobs
are checked: ``snap audit``, ``snap fsck``, ``snap attest`` and the exports.

A token that does not verify, or whose imprint is not the manifest's SHA-256, a signature that
does not check, or a manifest that names other bytes than the capture's, is an integrity
failure like a damaged blob. A capture without a key or TSA is not: it says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from records.attest.checkpoints import signature_problem, token_problem
from records.attest.seal import MANIFEST, TIMESTAMP
from snapshotter.store import BlobStore

BlobRef = tuple[str, str, str | None]


def seal_blobs(provenance: dict[str, Any] | None) -> list[BlobRef]:
    """(kind, digest, version) of the capture's manifest and timestamp blobs, when it has them."""
    found: list[BlobRef] = []
    for kind in (MANIFEST, TIMESTAMP):
        named = (provenance or {}).get(kind)
        if isinstance(named, dict) and isinstance(named.get("hash"), str):
            version = named.get("versionId")
            found.append((kind, named["hash"], version if isinstance(version, str) else None))
    return found


@dataclass(frozen=True)
class SealState:
    signature: str  # "valid", "not signed: …", or what is wrong
    timestamp: str  # "valid <genTime>", "no trusted timestamp: …", or what is wrong
    problems: tuple[str, ...]

    @property
    def intact(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "intact": self.intact,
            "signature": self.signature,
            "timestamp": self.timestamp,
            "problems": list(self.problems),
        }


def seal_state(
    store: BlobStore, provenance: dict[str, Any], snapshot_id: str | None, chain: Any
) -> SealState | None:
    """The seal of one capture checked now; None for a capture recorded before seals."""
    named = provenance.get(MANIFEST)
    if not isinstance(named, dict) or not isinstance(named.get("hash"), str):
        return None
    try:
        data = store.get(MANIFEST, named["hash"], version_id=named.get("versionId"))
    except Exception as error:
        problem = f"the manifest cannot be read: {getattr(error, 'message', error)}"
        return SealState("unchecked", "unchecked", (problem,))
    problems = []
    document = json.loads(data)
    if snapshot_id is not None and document.get("snapshotId") != snapshot_id:
        problems.append(f"the manifest names snapshot {document.get('snapshotId')}")
    signed = dict(named.get("signature") or {})
    signature = signature_problem(signed, data)
    if signature is not None:
        problems.append(f"the manifest's signature {signature.removeprefix('its signature ')}")
    stamp = dict(provenance.get(TIMESTAMP) or {})
    token = token_problem(store, stamp, data, chain=chain)
    if token is not None:
        problems.append(f"the manifest's {token.removeprefix('its ')}")
    return SealState(
        _signature_label(signed, signature),
        _timestamp_label(stamp, token),
        tuple(problems),
    )


def _signature_label(signed: dict[str, Any], problem: str | None) -> str:
    if signed.get("state") != "signed":
        return str(signed.get("reason") or "not signed")
    return f"valid (key {signed.get('keyId')})" if problem is None else problem


def _timestamp_label(stamp: dict[str, Any], problem: str | None) -> str:
    if stamp.get("state") != "stamped":
        return str(stamp.get("reason") or "no trusted timestamp")
    return f"valid ({stamp.get('genTime')}, {stamp.get('tsa')})" if problem is None else problem


def refuse_broken_seals(
    store: BlobStore, captures: list[tuple[int, str, dict[str, Any]]], chain: Any
) -> None:
    """Before an export is written: every capture's seal checks, else nothing is written."""
    from records.attest.errors import AttestationFailure

    for capture_id, snapshot_id, provenance in captures:
        state = seal_state(store, provenance, snapshot_id, chain)
        if state is not None and not state.intact:
            raise AttestationFailure(
                f"capture {capture_id} of {snapshot_id}: {state.problems[0]}; nothing was written"
            )
