"""Sealing a capture: its manifest stored as a blob, signed, and stamped by the TSA.

All of it happens after the capture's blobs are stored and before its record is written, with
no database transaction open (the TSA is a network call). What was done is named in the
capture's provenance under ``manifest`` and ``timestamp``; a capture without a key or a TSA is
still recorded, and its provenance says "not signed" / "no trusted timestamp" and why.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from records.attest.errors import NO_TIMESTAMP, TimestampUnavailable
from records.options import WorkspaceOptions
from snapshotter.store import BlobStore
from snapshotter.times import wire_time_or_none
from snapshotter.version import __version__

if TYPE_CHECKING:
    from records.attest.manifest import Manifest
    from records.attest.signing import SigningKey
    from records.attest.timestamps import TsaConfig
    from records.workspace import Workspace
    from snapshotter.capture import SnapshotRecord  # loaded by what captures, not by readers

# Signing and time-stamping (cryptography, rfc3161-client, urllib) are imported when a key or a
# TSA is configured, not with this module: every command that records something ends with a
# checkpoint, and without a key or TSA they cost a quarter of the start-up floor for nothing.
KEY_FILE_NAME = "signing-key.pem"  # the signing key's file in the home, unless configured


class KeySettings(Protocol):
    """Where the signing key is configured: the records' options or the shell's settings."""

    @property
    def signing_key(self) -> Path | None: ...
    @property
    def home(self) -> Path: ...


MANIFEST = "manifest"  # provenance key: the manifest blob and its signature
TIMESTAMP = "timestamp"  # provenance key: the TSA's reply blob, or why there is none
NOT_SIGNED = "not signed"


def software() -> dict[str, str]:
    return {"name": "snap", "version": __version__}


@dataclass
class Attestor:
    """The key and TSA of one workspace, loaded once."""

    key: SigningKey | None
    tsa: TsaConfig | None
    per_batch: bool = False  # manifests are stamped through the checkpoint that includes them
    unsigned_reason: str = f"{NOT_SIGNED}: no SNAP_SIGNING_KEY (run snap keys init)"
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_settings(cls, settings: WorkspaceOptions) -> Attestor:
        path = signing_key_path(settings)
        key = None
        if settings.signing_key is not None or path.exists():
            from records.attest.signing import load_key

            key = load_key(path)
        tsa = None
        if settings.tsa_url:
            from records.attest.timestamps import TsaConfig

            tsa = TsaConfig.load(settings.tsa_url, settings.tsa_chain, timeout=settings.timeout)
        return cls(key, tsa, per_batch=settings.tsa_per == "batch")

    def stamp(self, store: BlobStore, data: bytes) -> dict[str, Any]:
        """A timestamp over ``data`` stored as a blob, or why there is none."""
        if self.tsa is None:
            return {"state": "none", "reason": f"{NO_TIMESTAMP}: SNAP_TSA_URL is not set"}
        from records.attest.timestamps import request_timestamp

        try:
            stamp = request_timestamp(self.tsa, data)
        except TimestampUnavailable as error:
            return {"state": "none", "reason": error.message}
        digest = "sha256:" + hashlib.sha256(stamp.reply).hexdigest()
        blob = store.put(TIMESTAMP, digest, stamp.reply, tags={"kind": TIMESTAMP})
        return {
            "state": "stamped",
            "hash": digest,
            "size": len(stamp.reply),
            "versionId": blob.version_id,
            "tsa": self.tsa.url,
            "genTime": wire_time_or_none(stamp.gen_time),
        }

    def sign(self, data: bytes) -> dict[str, Any]:
        if self.key is None:
            return {"state": "none", "reason": self.unsigned_reason}
        return {
            "state": "signed",
            **self.key.sign(data).to_json(),
            "publicKey": self.key.public_pem(),
        }


def attestor_of(workspace: Workspace) -> Attestor:
    """The workspace's signing key and time-stamping authority, loaded on first use: an
    unusable key or TSA setting is refused then, before anything is fetched."""
    if not isinstance(workspace.attestor_cache, Attestor):
        workspace.attestor_cache = Attestor.from_settings(workspace.settings)
    return workspace.attestor_cache


def missed_stamp(workspace: Workspace, record: SnapshotRecord) -> str | None:
    """Why a capture that a configured TSA should have stamped has no token (the authority did
    not answer or answered wrongly), or None: stamped, batched, or no TSA set (a choice)."""
    stamp = record.provenance.get(TIMESTAMP)
    if not workspace.settings.tsa_url or not isinstance(stamp, dict):
        return None
    if stamp.get("state") != "none":
        return None
    return str(stamp.get("reason") or NO_TIMESTAMP)


def signing_key_path(settings: KeySettings) -> Path:
    return settings.signing_key or settings.home / KEY_FILE_NAME


def seal(attestor: Attestor, store: BlobStore, record: SnapshotRecord) -> SnapshotRecord:
    """The record with its manifest stored, signed and (when a TSA is set) stamped."""
    from records.attest.manifest import build_manifest  # a capture's: a checkpoint needs none

    manifest = build_manifest(record, software=software())
    provenance = {**record.provenance, **seal_manifest(attestor, store, manifest)}
    return dataclasses.replace(record, provenance=provenance)


def seal_manifest(attestor: Attestor, store: BlobStore, manifest: Manifest) -> dict[str, Any]:
    blob = store.put(MANIFEST, manifest.digest, manifest.data, tags={"kind": MANIFEST})
    return {
        MANIFEST: {
            "hash": manifest.digest,
            "size": len(manifest.data),
            "versionId": blob.version_id,
            "signature": attestor.sign(manifest.data),
        },
        TIMESTAMP: BATCHED
        if attestor.per_batch and attestor.tsa
        else attestor.stamp(store, manifest.data),
    }


BATCHED = {
    "state": "batched",
    "reason": "stamped through the log checkpoint that includes this capture (SNAP_TSA_PER=batch)",
}
