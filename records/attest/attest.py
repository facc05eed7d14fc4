"""``snap attest ID``: everything the other side needs to check a snapshot, a citation or an
answer without trusting snap, and the standard command that checks each piece.

For every stored capture: the manifest (its exact bytes), its signature and public key, its
RFC 3161 token, and the inclusion proof of the capture's log entry with the checkpoint it is
proved against; for a citation, also each verification's inclusion proof. snap re-checks the
signatures, tokens and inclusion proofs itself as it gathers them (each proof from the record's
row as it is now to the checkpoint's signed root); a failure is an integrity failure (exit 1).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from cryptography.hazmat.primitives.serialization import Encoding
from sqlalchemy import select

from records.attest.log_checks import (
    LogProofs,
    Proofs,
    proof_problem,
    record_keys,
    signature_problem,
    token_problem,
)
from records.attest.timestamps import load_chain
from records.errors import RecordNotFound
from records.ids import resolve_citation_id, resolve_snapshot_id
from records.models import Capture, Citation, Verification
from records.vocabulary import CaptureOutcome
from records.workspace import Workspace


@dataclass(frozen=True)
class Subject:
    """What was attested: a snapshot, an answer or a citation, by its id."""

    kind: Literal["snapshot", "answer", "citation"]
    id: str


@dataclass(frozen=True)
class AttestedManifest:
    """A capture's manifest: its sha256 and its exact bytes, as text."""

    sha256: str
    document: str


@dataclass(frozen=True)
class AttestedCapture:
    """One stored capture's pieces: its inclusion proof (with the checkpoint it is proved
    against, that checkpoint's token inlined), and, when manifests were kept, the manifest,
    its signature and token (inlined) and the commands that check each; else a note."""

    capture_id: int
    proof: dict[str, Any] | None
    manifest: AttestedManifest | None = None
    note: str | None = None  # recorded before manifests were kept
    signature: dict[str, Any] = field(default_factory=dict)
    timestamp: dict[str, Any] = field(default_factory=dict)
    check: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttestedVerification:
    """One recorded check of a citation and its inclusion proof."""

    id: int
    citation_id: str
    status: str
    proof: dict[str, Any] | None
    check: tuple[str, ...] = ()


@dataclass(frozen=True)
class Attestation:
    """``snap attest``: the pieces, and what did not check (its JSON:
    ``records.wire_attest.attestation_json``)."""

    subject: Subject
    captures: tuple[AttestedCapture, ...] = ()
    verifications: tuple[AttestedVerification, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def attest(workspace: Workspace, given: str) -> Attestation:
    """The attestation of a snapshot id, a citation id or an answer id."""
    with workspace.db.reading() as session:
        citations: list[Citation] = []
        if session.get(Citation, given) is None and _looks_like_snapshot(given):
            snapshot_id = resolve_snapshot_id(session, given)
            subject = Subject("snapshot", snapshot_id)
            snapshot_ids = [snapshot_id]
        else:
            citations = list(session.scalars(select(Citation).where(Citation.answer_id == given)))
            if citations:
                subject = Subject("answer", given)
            else:
                citation_id = resolve_citation_id(session, given)
                citations = [c for c in [session.get(Citation, citation_id)] if c is not None]
                subject = Subject("citation", citation_id)
            snapshot_ids = sorted({c.snapshot_id for c in citations if c.snapshot_id})
        query = select(Capture).where(
            Capture.snapshot_id.in_(snapshot_ids), Capture.outcome == CaptureOutcome.STORED
        )
        captures = [(c.id, dict(c.provenance or {})) for c in session.scalars(query)]
        checks = select(Verification.id, Verification.citation_id, Verification.status).where(
            Verification.citation_id.in_([c.id for c in citations])
        )
        verifications = list(session.execute(checks.order_by(Verification.id)))
    if not captures and not citations:
        raise RecordNotFound(f"nothing recorded for {given!r}")
    problems: list[str] = []
    chain = load_chain(workspace.settings.tsa_chain) if workspace.settings.tsa_chain else None
    wanted = record_keys(
        (capture_id for capture_id, _ in captures), (row[0] for row in verifications)
    )
    proofs = LogProofs(workspace).of(wanted)  # the log read once for all of them
    attested = tuple(
        _capture(workspace, problems, capture_id, provenance, chain, proofs)
        for capture_id, provenance in sorted(captures, key=lambda item: item[0])
    )
    proved = tuple(
        _verification(workspace, problems, verification_id, citation_id, status, chain, proofs)
        for verification_id, citation_id, status in verifications
    )
    return Attestation(subject, attested, proved, tuple(dict.fromkeys(problems)))


def _verification(
    workspace: Workspace,
    problems: list[str],
    verification_id: int,
    citation_id: str,
    status: str,
    chain: Any,
    proofs: Proofs,
) -> AttestedVerification:
    """A check of the citation and its inclusion proof, with the commands that check it over
    the files ``attestation_files`` names: that the quote was checked, and when, is in the log
    as the capture is."""
    proof = _checked_proof(problems, "verification", verification_id, proofs)
    _checkpoint_token(workspace, problems, proof, chain)  # a checkpoint's problem is said once
    commands = verification_commands(verification_id, proof)
    return AttestedVerification(verification_id, citation_id, status, proof, tuple(commands))


def verification_commands(verification_id: int, proof: dict[str, Any] | None) -> list[str]:
    """The commands that check a verification's inclusion proof and its checkpoint, over the
    files ``attestation_files`` names."""
    checkpoint = (proof or {}).get("checkpoint")
    if not checkpoint:
        return []
    base = f"verification-{verification_id}"
    return [
        f"python3 check_inclusion.py {base}.proof.json {base}.checkpoint.json"
        "  # RFC 9162, hashlib only",
        *checkpoint_commands(f"{base}.checkpoint", checkpoint),
    ]


def _checked_proof(
    problems: list[str], kind: str, record_id: int, proofs: Proofs
) -> dict[str, Any] | None:
    """The record's inclusion proof, checked as the other side will check it (the row as it
    is now, the path to the checkpoint's signed root): one that does not is a problem."""
    proof = proofs.get((kind, str(record_id)))
    problem = proof_problem(kind, str(record_id), proof)
    if problem is not None:
        problems.append(problem)
    return proof


def _checkpoint_token(
    workspace: Workspace, problems: list[str], proof: dict[str, Any] | None, chain: Any
) -> None:
    """The token of the checkpoint a proof is against, inlined, and checked."""
    checkpoint = (proof or {}).get("checkpoint")
    if not checkpoint:
        return
    stamp = checkpoint.get("timestamp") or {}
    document = str(checkpoint["document"]).encode("utf-8")
    problem = signature_problem(checkpoint.get("signature") or {}, document)
    if problem is not None:
        problems.append(f"checkpoint {checkpoint['id']}: {problem}")
    if stamp.get("state") != "stamped":
        return
    reply = workspace.store.get("timestamp", stamp["hash"], version_id=stamp.get("versionId"))
    checkpoint["timestamp"] = {**stamp, "token": base64.b64encode(reply).decode("ascii")}
    problem = token_problem(workspace.store, stamp, document, chain=chain)
    if problem is not None:
        problems.append(f"checkpoint {checkpoint['id']}: {problem}")


def _looks_like_snapshot(given: str) -> bool:
    return given.startswith("sha256:") or (
        len(given) >= 8 and all(ch in "0123456789abcdefABCDEF" for ch in given.rstrip("…"))
    )


def _capture(
    workspace: Workspace,
    problems: list[str],
    capture_id: int,
    provenance: dict[str, Any],
    chain: Any,
    proofs: Proofs,
) -> AttestedCapture:
    named = provenance.get("manifest") or {}
    stamp = provenance.get("timestamp") or {"state": "none", "reason": "no trusted timestamp"}
    proof = _checked_proof(problems, "capture", capture_id, proofs)
    _checkpoint_token(workspace, problems, proof, chain)
    if not named.get("hash"):
        note = "recorded before manifests were kept: no manifest, signature or token"
        return AttestedCapture(capture_id, proof, note=note)
    data = workspace.store.get("manifest", named["hash"], version_id=named.get("versionId"))
    signature = dict(named.get("signature") or {})
    problem = signature_problem(signature, data)
    if problem is not None:
        problems.append(f"capture {capture_id}: the manifest's {problem[4:]}")
    token: dict[str, Any] = dict(stamp)
    if stamp.get("state") == "stamped":
        reply = workspace.store.get("timestamp", stamp["hash"], version_id=stamp.get("versionId"))
        token["token"] = base64.b64encode(reply).decode("ascii")
        problem = token_problem(workspace.store, stamp, data, chain=chain)
        if problem is not None:
            problems.append(f"capture {capture_id}: the manifest's {problem[4:]}")
    return AttestedCapture(
        capture_id,
        proof,
        AttestedManifest(named["hash"], data.decode("utf-8")),
        signature=signature,
        timestamp=token,
        check=tuple(check_commands(capture_id, signature, stamp, proof)),
    )


def check_commands(
    capture_id: int, signature: dict[str, Any], stamp: dict[str, Any], proof: dict[str, Any] | None
) -> list[str]:
    """The standard tools' command lines, over the files ``attestation_files`` names: the
    manifest's signature and token, then its record's inclusion in the checkpoint (the leaf
    names the manifest's and the token's SHA-256) and that checkpoint's signature and token."""
    base = f"capture-{capture_id}"
    manifest = f"{base}.manifest.json"
    commands = [f"sha256sum {manifest}  # the manifest's sha256"]
    if signature.get("state") == "signed":
        commands.append(
            signature_command(signature, f"{base}.public-key.pem", f"{base}.manifest.sig", manifest)
        )
    tied = [manifest]
    if stamp.get("state") == "stamped":
        commands.append(token_command(f"{base}.manifest.tsr", manifest))
        tied.append(f"{base}.manifest.tsr")
    checkpoint = (proof or {}).get("checkpoint")
    if checkpoint:
        commands.append(
            f"python3 check_inclusion.py {base}.proof.json {base}.checkpoint.json {' '.join(tied)}"
            "  # RFC 9162, hashlib only"
        )
        commands += checkpoint_commands(f"{base}.checkpoint", checkpoint)
    return commands


def checkpoint_commands(base: str, checkpoint: dict[str, Any]) -> list[str]:
    """The commands that check a checkpoint's signature and token, over the files
    ``checkpoint_pieces`` writes under ``base``."""
    commands = []
    signature = checkpoint.get("signature") or {}
    if signature.get("state") == "signed":
        commands.append(
            signature_command(signature, f"{base}.public-key.pem", f"{base}.sig", f"{base}.json")
        )
    if (checkpoint.get("timestamp") or {}).get("state") == "stamped":
        commands.append(token_command(f"{base}.tsr", f"{base}.json"))
    return commands


def signature_command(signature: dict[str, Any], key: str, sig: str, data: str) -> str:
    """openssl's check of a signature over a file (Ed25519 signs the bytes themselves)."""
    if signature.get("algorithm") == "ed25519":
        return f"openssl pkeyutl -verify -pubin -inkey {key} -rawin -in {data} -sigfile {sig}"
    return f"openssl dgst -sha256 -verify {key} -signature {sig} {data}"


def token_command(token: str, data: str) -> str:
    """openssl's check of an RFC 3161 token over a file, against the TSA's certificates."""
    return f"openssl ts -verify -in {token} -data {data} -CAfile {TSA_CHAIN_FILE}"


CHECK_INCLUSION = """\
# RFC 9162 inclusion check of a snap proof file, Python standard library only:
#   python3 check_inclusion.py PROOF CHECKPOINT [MANIFEST [TOKEN]]
# The record (the proof's leaf) is in the log of CHECKPOINT, the very file whose signature and
# timestamp openssl checks, and that record names the SHA-256 of MANIFEST and TOKEN.
import base64, hashlib, json, sys


def require(holds, why):
    if not holds:
        sys.exit("NOT VERIFIED: " + why)


def read(name):
    with open(name, "rb") as file:
        return file.read()


def sha256(data):
    return hashlib.sha256(data).digest()


if not 3 <= len(sys.argv) <= 5:
    sys.exit("usage: check_inclusion.py PROOF CHECKPOINT [MANIFEST [TOKEN]]")
proof, checkpoint = (json.loads(read(name)) for name in sys.argv[1:3])
size = checkpoint["treeSize"]
require(proof["treeSize"] == size, "the proof is for a log of another size than CHECKPOINT's")
fn, sn = proof["position"], size - 1
require(0 <= fn <= sn, "the position is outside CHECKPOINT's log")
leaf = base64.b64decode(proof["leaf"])
r = sha256(b"\\x00" + leaf)
for p in map(bytes.fromhex, proof["path"]):
    require(sn > 0, "the proof is too long")
    if fn % 2 or fn == sn:
        r = sha256(b"\\x01" + p + r)
        while fn % 2 == 0 and fn:
            fn, sn = fn // 2, sn // 2
    else:
        r = sha256(b"\\x01" + r + p)
    fn, sn = fn // 2, sn // 2
require(sn == 0 and "sha256:" + r.hex() == checkpoint["rootHash"], "not in CHECKPOINT's log")
record = json.loads(leaf)
for name, field in zip(sys.argv[3:], ("manifest", "timestamp")):
    digest = "sha256:" + sha256(read(name)).hex()
    require(record.get(field) == digest, f"the record names another {field} than {name}")
    print(name, "is the", field, "the record names:", digest)
print(record["kind"], record["id"], "is included at position", proof["position"], "of", size)
"""


CHECK_CONSISTENCY = """\
# RFC 9162 consistency check, Python standard library only:
#   python3 check_consistency.py PROOF OLD_CHECKPOINT NEW_CHECKPOINT
# The log of NEW_CHECKPOINT extends the log of OLD_CHECKPOINT (the checkpoint kept from
# before), checked against those two files, not against copies inside PROOF.
import hashlib, json, sys


def require(holds, why):
    if not holds:
        sys.exit("NOT VERIFIED: " + why)


def read(name):
    with open(name, "rb") as file:
        return file.read()


def h(data):
    return hashlib.sha256(b"\\x01" + data).digest()


if len(sys.argv) != 4:
    sys.exit("usage: check_consistency.py PROOF OLD_CHECKPOINT NEW_CHECKPOINT")
proof = json.loads(read(sys.argv[1]))
old, new = (json.loads(read(name)) for name in sys.argv[2:4])
m, n = old["treeSize"], new["treeSize"]
old_root, new_root = (bytes.fromhex(c["rootHash"].removeprefix("sha256:")) for c in (old, new))
path = [bytes.fromhex(p) for p in proof["proof"]]
if m == n:
    require(not path and old_root == new_root, "the same size with another root")
else:
    require(0 < m < n and path, "no proof from a larger or empty log")
    if m & (m - 1) == 0:
        path.insert(0, old_root)
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        require(sn > 0, "the proof is too long")
        if fn & 1 or fn == sn:
            fr, sr = h(c + fr), h(c + sr)
            while fn & 1 == 0 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = h(sr + c)
        fn, sn = fn >> 1, sn >> 1
    require(sn == 0 and fr == old_root and sr == new_root, "the new log does not extend the old")
print("the log of size", n, "extends the log of size", m)
"""


TSA_CHAIN_FILE = "tsa-chain.pem"


def tsa_chain_pem(workspace: Workspace) -> bytes | None:
    """The TSA certificates snap checks tokens against (``SNAP_TSA_CHAIN``), as PEM, for the
    folder of the files: None when no chain is configured."""
    path = workspace.settings.tsa_chain
    if path is None:
        return None
    return b"".join(cert.public_bytes(Encoding.PEM) for cert in load_chain(path))


def consistency_commands(proof: dict[str, Any]) -> list[str]:
    """The commands that check a consistency proof over the files ``consistency_files``
    writes: both checkpoints' signatures and tokens, then the proof between the two files."""
    old, new = (f"checkpoint-{proof[side]['id']}" for side in ("from", "to"))
    commands = checkpoint_commands(old, proof["from"]) + checkpoint_commands(new, proof["to"])
    commands.append(
        f"python3 check_consistency.py consistency-{proof['from']['id']}-{proof['to']['id']}.json"
        f" {old}.json {new}.json  # {old}.json: the same bytes as the checkpoint you kept"
    )
    return commands


def consistency_files(proof: dict[str, Any], tsa_chain: bytes | None = None) -> dict[str, bytes]:
    """The proof, each checkpoint's document, signature, public key and token, the TSA chain
    snap was configured with and the standalone check, by file name
    (``records.output_files.write_files_into`` writes them)."""
    pieces: dict[str, bytes] = {"check_consistency.py": CHECK_CONSISTENCY.encode("utf-8")}
    name = f"consistency-{proof['from']['id']}-{proof['to']['id']}"
    pieces[f"{name}.json"] = json.dumps(proof, indent=2).encode("utf-8")
    for checkpoint in (proof["from"], proof["to"]):
        base = f"checkpoint-{checkpoint['id']}"
        pieces.update(
            {base + suffix: data for suffix, data in checkpoint_pieces(checkpoint).items()}
        )
    if tsa_chain is not None:
        pieces[TSA_CHAIN_FILE] = tsa_chain
    return pieces


def checkpoint_pieces(checkpoint: dict[str, Any]) -> dict[str, bytes]:
    """A checkpoint's document (the signed and stamped bytes), its signature and public key
    and its token, by the suffix of their file names."""
    pieces = {".json": str(checkpoint["document"]).encode("utf-8")}
    signature = checkpoint.get("signature") or {}
    if signature.get("state") == "signed":
        pieces[".sig"] = base64.b64decode(signature["value"])
        pieces[".public-key.pem"] = str(signature["publicKey"]).encode("ascii")
    token = (checkpoint.get("timestamp") or {}).get("token")
    if token:
        pieces[".tsr"] = base64.b64decode(token)
    return pieces


def attestation_files(attestation: Attestation, tsa_chain: bytes | None = None) -> dict[str, bytes]:
    """The pieces as the files the commands above read, the TSA chain snap was configured
    with and the standalone inclusion check, by file name."""
    files = {"check_inclusion.py": CHECK_INCLUSION.encode("utf-8")}
    for capture in attestation.captures:
        base = f"capture-{capture.capture_id}"
        files.update({base + suffix: data for suffix, data in _capture_pieces(capture).items()})
    for check in attestation.verifications:
        base = f"verification-{check.id}"
        files.update({base + suffix: data for suffix, data in _proof_pieces(check.proof).items()})
    if tsa_chain is not None:
        files[TSA_CHAIN_FILE] = tsa_chain
    return files


def _capture_pieces(capture: AttestedCapture) -> dict[str, bytes]:
    document = capture.manifest.document if capture.manifest is not None else None
    return _sealed_pieces(document, capture.signature, capture.timestamp, capture.proof)


def _sealed_pieces(
    document: str | None,
    signature: dict[str, Any],
    token: dict[str, Any],
    proof: dict[str, Any] | None,
) -> dict[str, bytes]:
    """A capture's manifest, its signature, public key and token, and its inclusion proof with
    its checkpoint, by the suffix of their file names."""
    pieces: dict[str, bytes] = {}
    if document is not None:
        pieces[".manifest.json"] = document.encode("utf-8")
    if signature.get("state") == "signed":
        pieces[".manifest.sig"] = base64.b64decode(signature["value"])
        pieces[".public-key.pem"] = str(signature["publicKey"]).encode("ascii")
    if token.get("token"):
        pieces[".manifest.tsr"] = base64.b64decode(token["token"])
    pieces.update(_proof_pieces(proof))
    return pieces


def export_line_files(line: dict[str, Any]) -> dict[str, bytes]:
    """The files one line of an export's attestations holds (``export_attestations``), named
    as ``snap attest --out`` names them, so the commands ``export_line_commands`` gives read
    them: a reader of an evidence page saves them from the page."""
    proof = line.get("logProof")
    if "verificationId" in line:
        base = f"verification-{line['verificationId']}"
        return {base + suffix: data for suffix, data in _proof_pieces(proof).items()}
    base = f"capture-{line['captureId']}"
    manifest = line.get("manifest") or {}
    pieces = _sealed_pieces(
        manifest.get("document"), line.get("signature") or {}, line.get("timestamp") or {}, proof
    )
    return {base + suffix: data for suffix, data in pieces.items()}


def export_line_commands(line: dict[str, Any]) -> list[str]:
    """The commands that check one line of an export's attestations over the files
    ``export_line_files`` names (the same as ``snap attest`` prints)."""
    proof = line.get("logProof")
    if "verificationId" in line:
        return verification_commands(int(line["verificationId"]), proof)
    if not line.get("manifest"):
        return []
    signature, stamp = line.get("signature") or {}, line.get("timestamp") or {}
    return check_commands(int(line["captureId"]), signature, stamp, proof)


def _proof_pieces(proof: dict[str, Any] | None) -> dict[str, bytes]:
    """A record's inclusion proof and the checkpoint it is proved against, by the suffix of
    their file names."""
    proof = proof or {}
    pieces = {".proof.json": json.dumps(proof, indent=2).encode("utf-8")}
    checkpoint = proof.get("checkpoint") or {}
    if checkpoint:
        pieces.update(
            {".checkpoint" + suffix: data for suffix, data in checkpoint_pieces(checkpoint).items()}
        )
    return pieces


def export_attestations(
    workspace: Workspace,
    captures: list[tuple[int, dict[str, Any]]],
    verification_ids: list[int],
    log: LogProofs,
) -> list[dict[str, Any]]:
    """For an export: each capture's manifest, signature, token and inclusion proof, and each
    verification's inclusion proof, with the checkpoint they are proved against."""
    proofs = log.of(record_keys((capture_id for capture_id, _ in captures), verification_ids))
    lines: list[dict[str, Any]] = []
    for capture_id, provenance in captures:
        named = provenance.get("manifest") or {}
        stamp = dict(provenance.get("timestamp") or {})
        line: dict[str, Any] = {
            "captureId": capture_id,
            "manifest": None,
            "logProof": proofs.get(("capture", str(capture_id))),
        }
        if named.get("hash"):
            data = workspace.store.get("manifest", named["hash"], version_id=named.get("versionId"))
            line["manifest"] = {"sha256": named["hash"], "document": data.decode("utf-8")}
            line["signature"] = named.get("signature")
            if stamp.get("state") == "stamped":
                reply = workspace.store.get(
                    "timestamp", stamp["hash"], version_id=stamp.get("versionId")
                )
                stamp["token"] = base64.b64encode(reply).decode("ascii")
            line["timestamp"] = stamp
        lines.append(line)
    for vid in verification_ids:
        lines.append({"verificationId": vid, "logProof": proofs.get(("verification", str(vid)))})
    _inline_checkpoint_tokens(workspace, lines)
    return lines


def _inline_checkpoint_tokens(workspace: Workspace, lines: list[dict[str, Any]]) -> None:
    """Each proof's checkpoint with its timestamp token (base64), read once per checkpoint:
    the other side checks when the checkpoint existed with ``openssl ts -verify``."""
    tokens: dict[str, str] = {}
    for line in lines:
        checkpoint = (line.get("logProof") or {}).get("checkpoint") or {}
        stamp = checkpoint.get("timestamp") or {}
        if stamp.get("state") != "stamped":
            continue
        digest = str(stamp["hash"])
        if digest not in tokens:
            reply = workspace.store.get("timestamp", digest, version_id=stamp.get("versionId"))
            tokens[digest] = base64.b64encode(reply).decode("ascii")
        checkpoint["timestamp"] = {**stamp, "token": tokens[digest]}
