"""The attestations an archive carries (a WACZ's ``attestations/attestations.jsonl``, a WARC
export's ``urn:snap:attestations:…`` record: one line per capture or verification, as
``records.attest.attest.export_attestations`` writes them), checked on import as far as they
can be offline and without snap's own key store.

An import is labelled an import and claims nothing of its own, so a problem here refuses
nothing: it is reported, one line each, for a reader who would otherwise take the archive's
attestations at their word. Per line, what holds together on its own:

- the manifest's bytes hash to the SHA-256 the line names, and the capture's logged leaf names
  that manifest (and that token);
- the manifest's signature verifies with the public key the line carries;
- the timestamp token stamps the manifest's SHA-256 (what snap sends a TSA), and the token
  of the checkpoint stamps the checkpoint's document;
- the inclusion proof leads from the leaf to the root the checkpoint states
  (``records.attest.log_checks.proof_fault``, as an export checks it).

Whether the archive's bytes are the ones each manifest names is ``records.imports.attested``'s.
Whom the keys and the TSA belong to is not checked: that needs trust anchors an archive
cannot supply about itself.

Each line is named by what it is about, never by the ids the exporting snap gave its records
(meaningless where the archive is imported): a capture by its URL and capture time, a
verification by its snapshot and the time it was checked, a checkpoint by its size and time.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from records.attest.log_checks import ProofFault, proof_fault, reply_problem, signature_problem
from records.attest.manifest import ManifestBlob
from snapshotter.errors import shown
from snapshotter.store.hashing import sha256_of
from snapshotter.times import parse_time

ATTESTATIONS = "attestations/attestations.jsonl"
MAX_ATTESTATIONS = 256 * 1024 * 1024  # larger is not read: said as a problem, not refused
UNREADABLE = (KeyError, TypeError, ValueError, AttributeError)  # a line not shaped as written


@dataclass(frozen=True)
class AttestedCapture:
    """A capture an archive's attestations vouch for: the URLs and time it is known by in the
    archive's records, and the blobs its signed manifest names (what ``attested`` compares the
    archive's bytes with). ``label`` names it in a problem; ``problems``: its line's own and
    its checkpoint's (an attestation proved against a checkpoint that fails does not hold)."""

    label: str
    urls: tuple[str, ...]  # the requested and the served URL, as the manifest states them
    moment: datetime | None
    blobs: tuple[ManifestBlob, ...]
    extractor: str | None
    manifest: str
    problems: tuple[str, ...]
    seal: str = ""  # what the line carries besides the manifest, in words

    def blob(self, kind: str) -> ManifestBlob | None:
        """The first blob of ``kind`` the manifest names (a capture's own ``raw``, ``text``)."""
        return next((blob for blob in self.blobs if blob.kind == kind), None)


@dataclass
class Attestations:
    """What an archive's attestation lines say and what is wrong with them, in line order."""

    problems: list[str] = field(default_factory=list)
    captures: list[AttestedCapture] = field(default_factory=list)

    def extend(self, other: Attestations) -> None:
        self.problems += [p for p in other.problems if p not in self.problems]
        self.captures += other.captures


def attestation_problems(data: bytes, source: str = ATTESTATIONS) -> list[str]:
    """One line per problem of the lines in ``data`` (see ``read_attestations``)."""
    return read_attestations(data, source).problems


def read_attestations(data: bytes, source: str = ATTESTATIONS) -> Attestations:
    """The lines of ``data`` (``source``: where in the archive they are, for the problems'
    lines): each capture with a manifest, and one line per problem, naming the capture or
    verification; a checkpoint's problem is said once."""
    found = Attestations()
    for number, text in enumerate(data.splitlines(), start=1):
        if not text.strip():
            continue
        where = f"{source} line {number}"
        try:
            line = json.loads(text)
            label = f"{_subject(line)} ({where})"
        except UNREADABLE:
            found.problems.append(f"{where} is not an attestation")
            continue
        try:
            own = _line_problems(line)
            checkpoint = _checkpoint_problems(_checkpoint(line))
            found.problems += [f"{label}: {problem}" for problem in own] + checkpoint
            if "captureId" in line and line.get("manifest") is not None:
                found.captures.append(_attested(line, label, own + checkpoint))
        except UNREADABLE as error:
            found.problems.append(
                f"{label}: its attestation cannot be read ({type(error).__name__})"
            )
    found.problems = list(dict.fromkeys(found.problems))
    return found


def _subject(line: dict[str, Any]) -> str:
    """What a line is about, in the archive's terms."""
    leaf = _leaf(line.get("logProof"))
    if "captureId" in line:
        int(line["captureId"])  # as exported: a line without it is no attestation
        document = _manifest_document(line)
        url = document.get("requestedUrl") or leaf.get("url")
        when = _capture_time(document) or leaf.get("fetchedAt")
        if url is None:
            return "a capture whose line names no URL"
        return f"the capture of {shown(str(url))} at {when or 'a time its line does not name'}"
    int(line["verificationId"])
    snapshot, checked = leaf.get("snapshotId"), leaf.get("checkedAt")
    if snapshot is None:
        return "a verification whose line names no snapshot"
    return f"the verification of snapshot {snapshot} checked at {checked}"


def _manifest_document(line: dict[str, Any]) -> dict[str, Any]:
    """The manifest a line carries, as JSON (empty when it carries none, or none that reads:
    the line's checks say what is wrong with it)."""
    manifest = line.get("manifest")
    try:
        document = json.loads(str(manifest["document"])) if isinstance(manifest, dict) else {}
    except UNREADABLE:
        return {}
    return document if isinstance(document, dict) else {}


def _capture_time(document: dict[str, Any]) -> str | None:
    """When the manifest says its capture was made: ``capturedAt``, or for a capture snap
    imported (``capturedAt`` null) the date its own archive claimed."""
    claimed = ((document.get("import") or {}).get("archiveClaims") or {}).get("date")
    when = document.get("capturedAt") or claimed
    return str(when) if when else None


def _attested(line: dict[str, Any], label: str, problems: list[str]) -> AttestedCapture:
    document = _manifest_document(line)
    leaf = _leaf(line.get("logProof"))
    urls = [document.get("requestedUrl"), document.get("servedUrl"), leaf.get("url")]
    when = _capture_time(document) or leaf.get("fetchedAt")
    blobs = tuple(
        ManifestBlob(str(blob["kind"]), str(blob["sha256"]), blob.get("size"))
        for blob in document.get("blobs") or []
    )
    extractor = (document.get("software") or {}).get("extractor")
    return AttestedCapture(
        label=label,
        urls=tuple(str(url) for url in dict.fromkeys(urls) if url),
        moment=_moment(when),
        blobs=blobs,
        extractor=str(extractor) if extractor else None,
        manifest=str(line["manifest"]["sha256"]),
        problems=tuple(problems),
        seal=_seal_words(line),
    )


def _seal_words(line: dict[str, Any]) -> str:
    """Signed by which key, stamped, proved in the log: what an attestation that holds rests
    on (an unsigned manifest holds too, and vouches for nothing but itself)."""
    signature = line.get("signature") or {}
    signed = (
        f"signed by key {signature.get('keyId')}"
        if signature.get("state") == "signed"
        else "not signed"
    )
    stamped = (line.get("timestamp") or {}).get("state") == "stamped"
    proved = bool(_checkpoint(line))
    return (
        f"{signed}, {'timestamped' if stamped else 'not timestamped'},"
        f" {'in a signed log checkpoint' if proved else 'in no log checkpoint'}"
    )


def _moment(text: object) -> datetime | None:
    try:
        return parse_time(str(text)) if text else None
    except ValueError:
        return None


def _line_problems(line: dict[str, Any]) -> list[str]:
    proof = line.get("logProof")
    problems = [problem for problem in [_proof_problem(proof)] if problem]
    if "captureId" in line and line.get("manifest") is not None:  # a capture's line
        problems += _manifest_problems(line, _leaf(proof))
    return problems


def _proof_problem(proof: dict[str, Any] | None) -> str | None:
    """The inclusion proof's fault in words about the archive: the leaf is the one the line
    carries, logged by the snap that exported it."""
    fault = proof_fault(proof)
    if fault is None or proof is None:
        return None
    at = f"position {proof['position']} of {proof['treeSize']}"
    if fault is ProofFault.NO_LEAF:
        return f"its log proof ({at}) carries no leaf: the record was gone when it was exported"
    if fault is ProofFault.LEAF_CHANGED:
        return (
            f"the leaf its log proof carries does not hash to the leaf hash logged at {at}:"
            " the record was changed after it was logged, or the line was"
        )
    if fault is ProofFault.CHECKPOINT_UNREADABLE:
        return "the checkpoint its log proof names cannot be read"
    return f"its inclusion proof ({at}) does not lead to the root its checkpoint states"


def _leaf(proof: dict[str, Any] | None) -> dict[str, Any]:
    """The logged leaf document of a proof (the capture's row as logged), or empty."""
    leaf = (proof or {}).get("leaf")
    return dict(json.loads(base64.b64decode(leaf))) if leaf else {}


def _manifest_problems(line: dict[str, Any], leaf: dict[str, Any]) -> list[str]:
    manifest = line["manifest"]
    data = str(manifest["document"]).encode("utf-8")
    named, actual = str(manifest["sha256"]), sha256_of(data)
    problems = []
    if named != actual:
        problems.append(f"the manifest hashes to {actual}, the line names {named}")
    if leaf and leaf.get("manifest") != named:
        problems.append(f"the logged leaf names manifest {leaf.get('manifest')}, the line {named}")
    problem = signature_problem(line.get("signature") or {}, data)
    if problem is not None:
        problems.append(f"the manifest's {problem.removeprefix('its ')}")
    stamp = line.get("timestamp") or {}
    if stamp.get("state") == "stamped":
        problems += _token_problems(stamp, data, leaf)
    return problems


def _token_problems(stamp: dict[str, Any], data: bytes, leaf: dict[str, Any]) -> list[str]:
    """The manifest's token stamps the manifest's SHA-256, and is the token the leaf logged."""
    if not stamp.get("token"):
        return ["the manifest is stamped but the line carries no timestamp token"]
    reply = base64.b64decode(stamp["token"])
    problems = []
    problem = reply_problem(reply, data, chain=None)
    if problem is not None:
        problems.append(f"the manifest's {problem.removeprefix('its ')}")
    if leaf and leaf.get("timestamp") != sha256_of(reply):
        problems.append(
            f"the logged leaf names timestamp {leaf.get('timestamp')},"
            f" the line's token hashes to {sha256_of(reply)}"
        )
    return problems


def _checkpoint(line: dict[str, Any]) -> dict[str, Any]:
    return dict(((line.get("logProof") or {}).get("checkpoint")) or {})


def _checkpoint_problems(checkpoint: dict[str, Any]) -> list[str]:
    """The checkpoint's signature and token over its document (the same for every line proved
    against it: ``read_attestations`` says each once)."""
    if not checkpoint:
        return []
    document = str(checkpoint["document"]).encode("utf-8")
    label = _checkpoint_label(document)
    problems = []
    problem = signature_problem(checkpoint.get("signature") or {}, document)
    if problem is not None:
        problems.append(f"{label}: {problem}")
    token = (checkpoint.get("timestamp") or {}).get("token")
    if token:
        problem = reply_problem(base64.b64decode(token), document, chain=None)
        if problem is not None:
            problems.append(f"{label}: {problem}")
    return problems


def _checkpoint_label(document: bytes) -> str:
    """A checkpoint by what its document states: the log's size and when it was made."""
    try:
        stated = json.loads(document)
        return (
            f"the log checkpoint of {int(stated['treeSize'])} entries made at {stated['createdAt']}"
        )
    except UNREADABLE:
        return "a log checkpoint whose document cannot be read"
