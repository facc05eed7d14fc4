"""``snap attest ID``: everything the other side needs to check a snapshot, a citation or an
answer without trusting snap, and the standard command that checks each piece.

For every stored capture: the manifest (its exact bytes), its signature and public key, its
RFC 3161 token, and the inclusion proof of the capture's log entry with the checkpoint it is
proved against; for a citation, also each verification's inclusion proof. snap re-checks the
signatures and tokens itself as it gathers them; a failure is an integrity failure (exit 1).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import select

from records.attest.log_checks import inclusion_proof, signature_problem, token_problem
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
    attested = tuple(
        _capture(workspace, problems, capture_id, provenance, chain)
        for capture_id, provenance in sorted(captures, key=lambda item: item[0])
    )
    proved = tuple(
        AttestedVerification(
            verification_id,
            citation_id,
            status,
            inclusion_proof(workspace, "verification", str(verification_id)),
        )
        for verification_id, citation_id, status in verifications
    )
    return Attestation(subject, attested, proved, tuple(problems))


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
) -> AttestedCapture:
    named = provenance.get("manifest") or {}
    stamp = provenance.get("timestamp") or {"state": "none", "reason": "no trusted timestamp"}
    proof = inclusion_proof(workspace, "capture", str(capture_id))
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
        check=tuple(check_commands(capture_id, signature, stamp)),
    )


def check_commands(capture_id: int, signature: dict[str, Any], stamp: dict[str, Any]) -> list[str]:
    """The standard tools' command lines, over the files ``attestation_files`` names."""
    base = f"capture-{capture_id}"
    commands = [f"sha256sum {base}.manifest.json  # the manifest's sha256"]
    if signature.get("state") == "signed":
        if signature.get("algorithm") == "ed25519":
            commands.append(
                f"openssl pkeyutl -verify -pubin -inkey {base}.public-key.pem -rawin"
                f" -in {base}.manifest.json -sigfile {base}.manifest.sig"
            )
        else:
            commands.append(
                f"openssl dgst -sha256 -verify {base}.public-key.pem"
                f" -signature {base}.manifest.sig {base}.manifest.json"
            )
    if stamp.get("state") == "stamped":
        commands.append(
            f"openssl ts -verify -in {base}.manifest.tsr -data {base}.manifest.json"
            " -CAfile tsa-chain.pem"
        )
    commands.append(f"python3 check_inclusion.py {base}.proof.json  # RFC 9162, hashlib only")
    commands.append(
        f"openssl ts -verify -in {base}.checkpoint.tsr -data {base}.checkpoint.json"
        " -CAfile tsa-chain.pem  # when the checkpoint is stamped"
    )
    return commands


CHECK_INCLUSION = """\
# RFC 9162 inclusion check of a snap proof file, Python standard library only.
import base64, hashlib, json, sys
proof = json.load(open(sys.argv[1]))
h = lambda data: hashlib.sha256(data).digest()
fn, sn = proof["position"], proof["treeSize"] - 1
r = h(b"\\x00" + base64.b64decode(proof["leaf"]))
assert "sha256:" + r.hex() == proof["leafHash"], "the leaf is not the record shown"
for p in map(bytes.fromhex, proof["path"]):
    assert sn > 0, "proof too long"
    if fn % 2 or fn == sn:
        r = h(b"\\x01" + p + r)
        while fn % 2 == 0 and fn:
            fn, sn = fn // 2, sn // 2
    else:
        r = h(b"\\x01" + r + p)
    fn, sn = fn // 2, sn // 2
checkpoint = json.loads(proof["checkpoint"]["document"])
assert sn == 0 and "sha256:" + r.hex() == checkpoint["rootHash"], "not in the checkpoint's tree"
print("included at position", proof["position"], "of", checkpoint["treeSize"])
"""


CHECK_CONSISTENCY = """\
# RFC 9162 consistency check of a snap proof file (snap log consistency --out), standard
# library only: the log of the "to" checkpoint extends the log of the "from" checkpoint.
import hashlib, json, sys
proof = json.load(open(sys.argv[1]))
h = lambda data: hashlib.sha256(b"\\x01" + data).digest()
old, new = (json.loads(proof[side]["document"]) for side in ("from", "to"))
m, n = old["treeSize"], new["treeSize"]
old_root, new_root = (bytes.fromhex(c["rootHash"][7:]) for c in (old, new))
path = [bytes.fromhex(p) for p in proof["proof"]]
if m == n:
    assert not path and old_root == new_root, "the same size with another root"
else:
    assert 0 < m < n and path, "no proof from a larger or empty log"
    if m & (m - 1) == 0:
        path.insert(0, old_root)
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        assert sn > 0, "proof too long"
        if fn & 1 or fn == sn:
            fr, sr = h(c + fr), h(c + sr)
            while fn & 1 == 0 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = h(sr + c)
        fn, sn = fn >> 1, sn >> 1
    assert sn == 0 and fr == old_root and sr == new_root, "the new log does not extend the old"
print("the log of size", n, "extends the log of size", m)
"""


def consistency_files(proof: dict[str, Any]) -> dict[str, bytes]:
    """The proof, both checkpoints' documents and tokens, and the standalone check, by file
    name (``records.output_files.write_files_into`` writes them)."""
    pieces: dict[str, bytes] = {"check_consistency.py": CHECK_CONSISTENCY.encode("utf-8")}
    name = f"consistency-{proof['from']['id']}-{proof['to']['id']}"
    pieces[f"{name}.json"] = json.dumps(proof, indent=2).encode("utf-8")
    for checkpoint in (proof["from"], proof["to"]):
        base = f"checkpoint-{checkpoint['id']}"
        pieces[f"{base}.json"] = str(checkpoint["document"]).encode("utf-8")
        token = (checkpoint.get("timestamp") or {}).get("token")
        if token:
            pieces[f"{base}.tsr"] = base64.b64decode(token)
    return pieces


def attestation_files(attestation: Attestation) -> dict[str, bytes]:
    """The pieces as the files the commands above read, and the standalone inclusion check,
    by file name."""
    files = {"check_inclusion.py": CHECK_INCLUSION.encode("utf-8")}
    for capture in attestation.captures:
        base = f"capture-{capture.capture_id}"
        files.update({base + suffix: data for suffix, data in _capture_pieces(capture).items()})
    return files


def _capture_pieces(capture: AttestedCapture) -> dict[str, bytes]:
    pieces: dict[str, bytes] = {}
    if capture.manifest is not None:
        pieces[".manifest.json"] = capture.manifest.document.encode("utf-8")
    signature = capture.signature
    if signature.get("state") == "signed":
        pieces[".manifest.sig"] = base64.b64decode(signature["value"])
        pieces[".public-key.pem"] = str(signature["publicKey"]).encode("ascii")
    token = capture.timestamp
    if token.get("token"):
        pieces[".manifest.tsr"] = base64.b64decode(token["token"])
    proof = capture.proof or {}
    pieces[".proof.json"] = json.dumps(proof, indent=2).encode("utf-8")
    checkpoint = proof.get("checkpoint") or {}
    if checkpoint:
        pieces[".checkpoint.json"] = str(checkpoint["document"]).encode("utf-8")
        if (checkpoint.get("timestamp") or {}).get("token"):
            pieces[".checkpoint.tsr"] = base64.b64decode(checkpoint["timestamp"]["token"])
    return pieces


def export_attestations(
    workspace: Workspace, captures: list[tuple[int, dict[str, Any]]], verification_ids: list[int]
) -> list[dict[str, Any]]:
    """For an export: each capture's manifest, signature, token and inclusion proof, and each
    verification's inclusion proof, with the checkpoint they are proved against."""
    from records.attest.log_checks import inclusion_proofs

    wanted = [("capture", str(capture_id)) for capture_id, _ in captures]
    wanted += [("verification", str(vid)) for vid in verification_ids]
    proofs = inclusion_proofs(workspace, wanted)
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
