"""Checking a capture's seal (its manifest, signature and timestamp token) wherever its blobs
are read: ``snap verify`` and ``reverify`` (through ``records.texts``), ``snap audit``,
``snap fsck``, ``snap attest`` and the exports.

A token that does not verify, or whose imprint is not the manifest's SHA-256, a signature that
does not check, or a manifest that does not name the blobs read (the raw bytes, the capture's
own blobs, the text a check matched against), is an integrity failure like a damaged blob. A
capture without a key or TSA is not: it says so.

Each seal is read and verified once per process (``SealChecks``): the manifest and token blobs
are read through the store's digest-checked path, and what follows from those bytes is kept
(the names the manifest lists, whether the signature is over it, whether the token stamps it),
keyed by everything the capture's record names of its seal (manifest digest and version,
signature, key, token digest and version), so a record changed to name another signature or
token is checked afresh. What is checked against the record on every check is cheap: the
snapshot, the blobs read and the capture's blobs named by the manifest. A manifest or token
blob damaged after a process verified it is reported by ``snap audit`` and ``snap fsck``
(which re-hash every blob each time), by the exports (which read them again) and by the next
process; a read that fails is never remembered.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from records.attest.errors import AttestationFailure
from records.evidence import Evidence, capture_blobs
from records.vocabulary import CaptureTime
from snapshotter.errors import BlobNotFound, IntegrityError
from snapshotter.store import BlobStore
from snapshotter.times import wire_time

if TYPE_CHECKING:
    from records.db import Database
    from records.workspace import Workspace

MANIFEST = "manifest"  # records.attest.seal: the provenance keys of a capture's seal
TIMESTAMP = "timestamp"
NO_MANIFEST = "not sealed: recorded before manifests were kept"
BlobRef = tuple[str, str, str | None]
Named = tuple[str, str]  # (kind, sha256) of a blob
# A capture is sealed seconds after it ends, so a token stamped within STAMP_WINDOW after the
# manifest's capture time confirms that time to within the window; one stamped later (the
# authority was down, ``snap attest`` stamped it afterwards) proves only "by the stamp's time".
# CLOCK_TOLERANCE: how far the authority's clock and snap's may disagree before a capture time
# after the stamp's is a contradiction rather than skew.
STAMP_WINDOW = timedelta(minutes=10)
CLOCK_TOLERANCE = timedelta(minutes=2)


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
    """One capture's seal as checked now. ``signature`` and ``timestamp`` say in words what
    holds ("valid …"), why there is none ("not signed: …", "no trusted timestamp: …") or what
    is wrong; ``problems`` lists each piece that fails (empty: the seal holds)."""

    signature: str
    timestamp: str
    problems: tuple[str, ...]
    capture_id: int | None = None
    manifest: str | None = None
    signed: bool = False
    stamped: bool = False
    notes: tuple[str, ...] = ()
    captured_at: datetime | None = None  # as the manifest states it: snap's clock
    stamped_at: datetime | None = None  # the valid token's time: the authority's clock

    @property
    def intact(self) -> bool:
        return not self.problems

    @property
    def capture_time(self) -> CaptureTime:
        """Whether the trusted timestamp bears out the capture time the manifest states."""
        if self.captured_at is None or self.stamped_at is None or not self.stamped:
            return CaptureTime.UNCONFIRMED
        lag = self.stamped_at - self.captured_at
        if lag < -CLOCK_TOLERANCE:
            return CaptureTime.CONTRADICTED
        return CaptureTime.CONFIRMED if lag <= STAMP_WINDOW else CaptureTime.STAMPED_LATER

    def capture_time_words(self) -> str:
        """The capture time and what the timestamp says of it, in words for a reader."""
        verdict = self.capture_time
        if self.captured_at is None:
            return "not stated by snap (an imported capture: the archive's date is its claim)"
        stated = wire_time(self.captured_at)
        if verdict is CaptureTime.UNCONFIRMED or self.stamped_at is None:
            return f"{stated} by snap's clock, not confirmed: no valid token of its own"
        lag = _duration(abs(self.stamped_at - self.captured_at))
        stamped = wire_time(self.stamped_at)
        if verdict is CaptureTime.CONFIRMED:
            return f"{stated}, confirmed by the trusted timestamp ({stamped}, {lag} later)"
        if verdict is CaptureTime.CONTRADICTED:
            return (
                f"{stated} by snap's clock, contradicted: the trusted timestamp is {lag} earlier"
                f" ({stamped}); snap's clock ran fast"
            )
        return (
            f"{stated} by snap's clock, not confirmed: stamped {lag} later ({stamped}); the"
            " timestamp proves only that the capture existed by then"
        )

    def failure(self) -> str:
        """The integrity failure in one line: which capture, and each piece that fails."""
        whose = "the capture's" if self.capture_id is None else f"capture {self.capture_id}'s"
        return f"{whose} seal does not hold: " + "; ".join(self.problems)

    def error(self) -> AttestationFailure:
        return AttestationFailure(self.failure())

    @classmethod
    def of_document(cls, document: dict[str, Any]) -> SealState:
        """A seal as a verification row keeps it (``records.wire_attest.seal_state_json``,
        written when the check was recorded), read back for a run continued from its records;
        ``seal_state_json`` of the result is the stored document again."""
        return cls(
            signature=str(document["signature"]),
            timestamp=str(document["timestamp"]),
            problems=tuple(document.get("problems", ())),
            capture_id=document.get("captureId"),
            manifest=document.get("manifest"),
            signed=bool(document.get("signed", False)),
            stamped=bool(document.get("stamped", False)),
            notes=tuple(document.get("notes", ())),
            captured_at=_time_or_none(document.get("capturedAt")),
            stamped_at=_time_or_none(document.get("stampedAt")),
        )


@dataclass(frozen=True)
class _Verdict:
    """What was computed from one manifest's bytes and its signature and token."""

    snapshot_id: object
    names: frozenset[Named]
    signature: str | None  # the problem, or None
    token: str | None
    captured_at: datetime | None = None
    stamped_at: datetime | None = None  # None unless the token is valid


@dataclass
class SealChecks:
    """Seals checked by this process (see the module's docstring), against one TSA chain.
    ``db``: where a text the manifest does not name is looked up in the log (a short read
    transaction of its own, only then: most checks read a text their capture's manifest
    names)."""

    chain: Any = None
    db: Database | None = None
    keep: int = 4096
    _verdicts: OrderedDict[tuple[Any, ...], _Verdict] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def state(
        self,
        store: BlobStore,
        provenance: dict[str, Any],
        snapshot_id: str | None,
        *,
        capture_id: int | None = None,
        read: Iterable[Named] = (),
        text: tuple[str, int | None] | None = None,
    ) -> SealState | None:
        """The seal of one capture checked now; None for a capture recorded before seals.
        ``read``: the blobs a check read, which the manifest must name; ``text``: the text
        read (digest, extraction id), which the manifest names or, for a text extracted
        later, its extraction's log entry vouches for."""
        named = provenance.get(MANIFEST)
        if not isinstance(named, dict) or not isinstance(named.get("hash"), str):
            return None
        digest = named["hash"]
        signed = dict(named.get("signature") or {})
        stamp = dict(provenance.get(TIMESTAMP) or {})
        key = _key(named, signed, stamp)
        verdict = self._known(key)
        if verdict is None:
            try:
                data = store.get(MANIFEST, digest, version_id=named.get("versionId"))
            except (IntegrityError, BlobNotFound) as error:
                problem = f"the manifest cannot be read: {error.message}"
                return SealState("unchecked", "unchecked", (problem,), capture_id, digest)
            try:
                reply = _token(store, stamp)
            except (IntegrityError, BlobNotFound) as error:
                problem = f"the manifest's timestamp token cannot be read: {error.message}"
                return SealState("unchecked", "unchecked", (problem,), capture_id, digest)
            verdict = self._remember(key, _compute(data, signed, stamp, reply, self.chain))
        problems = _naming_problems(verdict, provenance, snapshot_id, read)
        notes = _imported_notes(provenance)
        if text is not None and ("text", text[0]) not in verdict.names:
            _unnamed_text(text, self._logged(text[1]), problems, notes)
        if verdict.signature is not None:
            problems.append(f"the manifest's {verdict.signature.removeprefix('its ')}")
        if verdict.token is not None:
            problems.append(f"the manifest's {verdict.token.removeprefix('its ')}")
        return SealState(
            _signature_label(signed, verdict.signature),
            _timestamp_label(stamp, verdict.token),
            tuple(problems),
            capture_id,
            digest,
            signed=signed.get("state") == "signed" and verdict.signature is None,
            stamped=stamp.get("state") == "stamped" and verdict.token is None,
            notes=tuple(notes),
            captured_at=verdict.captured_at,
            stamped_at=verdict.stamped_at,
        )

    def _known(self, key: tuple[Any, ...]) -> _Verdict | None:
        with self._lock:
            known = self._verdicts.get(key)
            if known is not None:
                self._verdicts.move_to_end(key)
            return known

    def _remember(self, key: tuple[Any, ...], verdict: _Verdict) -> _Verdict:
        with self._lock:
            self._verdicts[key] = verdict
            while len(self._verdicts) > self.keep:
                self._verdicts.popitem(last=False)
        return verdict

    def _logged(self, extraction_id: int | None) -> bool:
        """Whether the extraction's log entry is there and matches its row as it is now."""
        if extraction_id is None or self.db is None:
            return False
        from records.attest.log import entry_holds
        from records.models import Extraction

        with self.db.reading() as session:
            row = session.get(Extraction, extraction_id)
            return row is not None and entry_holds(session, row)

    def evidence_state(self, store: BlobStore, evidence: Evidence) -> SealState | None:
        """The seal of the capture ``evidence`` is read through, with the raw bytes and text
        that a check of it reads; None when it names no capture or a capture without seal."""
        ref = evidence.seal
        if ref is None:
            return None
        text = None
        if evidence.text_hash is not None:
            text = (evidence.text_hash, evidence.extraction_id)
        state = self.state(
            store,
            ref.provenance,
            evidence.snapshot_id,
            capture_id=ref.capture_id,
            read=[("raw", evidence.raw_hash)],
            text=text,
        )
        if state is None:
            return SealState(NO_MANIFEST, NO_MANIFEST, (), ref.capture_id)
        return state


def _key(named: dict[str, Any], signed: dict[str, Any], stamp: dict[str, Any]) -> tuple[Any, ...]:
    """Everything the record names of a seal: a record changed to name another manifest,
    signature, key or token is checked afresh."""
    return (
        named.get("hash"),
        named.get("versionId"),
        signed.get("state"),
        signed.get("algorithm"),
        signed.get("value"),
        signed.get("publicKey"),
        stamp.get("state"),
        stamp.get("hash"),
        stamp.get("versionId"),
    )


def seal_checks_of(workspace: Workspace) -> SealChecks:
    """The workspace's seal checks, made on first use with the configured TSA chain; one per
    process, shared by its threads (``snap serve``)."""
    if not isinstance(workspace.seal_checks, SealChecks):
        from records.attest.log_checks import tsa_chain  # cryptography only with a chain

        workspace.seal_checks = SealChecks(tsa_chain(workspace), workspace.db)
    return workspace.seal_checks


def _token(store: BlobStore, stamp: dict[str, Any]) -> bytes | None:
    if stamp.get("state") != "stamped" or not isinstance(stamp.get("hash"), str):
        return None
    return store.get(TIMESTAMP, stamp["hash"], version_id=stamp.get("versionId"))


def _compute(
    data: bytes, signed: dict[str, Any], stamp: dict[str, Any], reply: bytes | None, chain: Any
) -> _Verdict:
    from records.attest.log_checks import reply_problem, signature_problem

    try:
        document = json.loads(data)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        return _Verdict(None, frozenset(), "its bytes are not a JSON manifest", None)
    names = frozenset(
        (str(blob.get("kind")), str(blob.get("sha256")))
        for blob in document.get("blobs") or []
        if isinstance(blob, dict)
    )
    token = None
    stamped_at = None
    if stamp.get("state") == "stamped" and reply is not None:
        token = reply_problem(reply, data, chain=chain)
        if token is None:
            from records.attest.timestamps import gen_time

            stamped_at = gen_time(reply)
    return _Verdict(
        document.get("snapshotId"),
        names,
        signature_problem(signed, data),
        token,
        _time_or_none(document.get("capturedAt")),
        stamped_at,
    )


def _duration(span: timedelta) -> str:
    """A span as a reader says it: in seconds, minutes, hours or days, to the nearest."""
    seconds = span.total_seconds()
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = round(seconds / size)
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{round(seconds)} s"


def _time_or_none(value: object) -> datetime | None:
    """An ISO 8601 time with its offset, or None (an import states none; a naive time is not
    one to compare with an authority's)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _naming_problems(
    verdict: _Verdict,
    provenance: dict[str, Any],
    snapshot_id: str | None,
    read: Iterable[Named],
) -> list[str]:
    """The manifest names the snapshot, the blobs read and every blob the capture records."""
    problems: list[str] = []
    if snapshot_id is not None and verdict.snapshot_id != snapshot_id:
        problems.append(f"the manifest names snapshot {verdict.snapshot_id}, not {snapshot_id}")
    recorded = [(kind, digest) for kind, digest, _ in capture_blobs(provenance)]
    for kind, digest in [*read, *recorded]:
        if (kind, digest) not in verdict.names:
            problems.append(f"the manifest does not name the {kind} blob {digest}")
    return problems


IMPORTED_NOTE = "imported: "  # begins the note of an imported capture's archive attestation


def _imported_notes(provenance: dict[str, Any]) -> list[str]:
    """An imported capture's seal is the importer's: whether the attestation its archive
    carried holds for the bytes imported is said beside it (``records.imports.attested``)."""
    from records.attest.manifest import attestation_line

    line = attestation_line(provenance)
    return [IMPORTED_NOTE + line] if line is not None else []


def archive_attestation_broken(seal: SealState) -> bool:
    """Whether the seal is of an imported capture whose archive's attestation does not hold
    for the bytes imported (its note, ``_imported_notes``)."""
    from records.attest.manifest import BROKEN_ATTESTATION_LINE

    return any(note.startswith(IMPORTED_NOTE + BROKEN_ATTESTATION_LINE) for note in seal.notes)


def _unnamed_text(
    text: tuple[str, int | None], logged: bool, problems: list[str], notes: list[str]
) -> None:
    digest, extraction_id = text
    which = "" if extraction_id is None else f" (extraction {extraction_id})"
    if logged:
        notes.append(
            f"the text read{which} was extracted after this capture: the manifest names the raw"
            " bytes it was extracted from, and its log entry vouches for it"
        )
        return
    problems.append(
        f"the text read {digest}{which} is named neither by the manifest nor by a log entry"
        " that matches its record"
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
    checks: SealChecks, store: BlobStore, captures: list[tuple[int, str, dict[str, Any]]]
) -> None:
    """Before an export is written: every capture's seal holds, else nothing is written."""
    for capture_id, snapshot_id, provenance in captures:
        read = [("raw", snapshot_id)]
        state = checks.state(store, provenance, snapshot_id, capture_id=capture_id, read=read)
        if state is not None and not state.intact:
            raise AttestationFailure(f"{state.failure()}; nothing was written")
