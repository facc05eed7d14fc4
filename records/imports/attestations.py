"""The attestations a WACZ carries (``attestations/attestations.jsonl``, one line per capture
or verification, as ``records.attest.attest.export_attestations`` writes them), checked on
import as far as they can be offline and without snap's own key store.

An import is labelled an import and claims nothing of its own, so a problem here refuses
nothing: it is reported, one line each, for a reader who would otherwise take the archive's
attestations at their word. Per line, what holds together on its own:

- the manifest's bytes hash to the SHA-256 the line names, and the capture's logged leaf names
  that manifest (and that token);
- the manifest's signature verifies with the public key the line carries;
- the timestamp token stamps the manifest's SHA-256 (what snap sends a TSA), and the token
  of the checkpoint stamps the checkpoint's document;
- the inclusion proof leads from the leaf to the root the checkpoint states
  (``records.attest.log_checks.proof_problem``, as an export checks it).

Whom the keys and the TSA belong to is not checked: that needs trust anchors an archive
cannot supply about itself.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from records.attest.log_checks import proof_problem, reply_problem, signature_problem

ATTESTATIONS = "attestations/attestations.jsonl"
MAX_ATTESTATIONS = 256 * 1024 * 1024  # larger is not read: said as a problem, not refused
UNREADABLE = (KeyError, TypeError, ValueError, AttributeError)  # a line not shaped as written


def attestation_problems(data: bytes) -> list[str]:
    """One line per problem, each naming the line of the file and its capture or verification
    (by the id the exporting snap gave it); a checkpoint's problem is said once."""
    problems: list[str] = []
    for number, text in enumerate(data.splitlines(), start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
            label = f"line {number} ({_subject(line)})"
        except UNREADABLE:
            problems.append(f"{ATTESTATIONS} line {number} is not an attestation")
            continue
        try:
            problems += [f"{label}: {problem}" for problem in _line_problems(line)]
            problems += _checkpoint_problems(((line.get("logProof") or {}).get("checkpoint")) or {})
        except UNREADABLE as error:
            problems.append(f"{label}: its attestation cannot be read ({type(error).__name__})")
    return list(dict.fromkeys(problems))


def _subject(line: dict[str, Any]) -> str:
    if "captureId" in line:
        return f"capture {int(line['captureId'])}"
    return f"verification {int(line['verificationId'])}"


def _line_problems(line: dict[str, Any]) -> list[str]:
    kind, _, record_id = _subject(line).partition(" ")
    proof = line.get("logProof")
    problems = [problem for problem in [proof_problem(kind, record_id, proof)] if problem]
    if "captureId" in line and line.get("manifest") is not None:  # a capture's line
        problems += _manifest_problems(line, _leaf(proof))
    return problems


def _leaf(proof: dict[str, Any] | None) -> dict[str, Any]:
    """The logged leaf document of a proof (the capture's row as logged), or empty."""
    leaf = (proof or {}).get("leaf")
    return dict(json.loads(base64.b64decode(leaf))) if leaf else {}


def _manifest_problems(line: dict[str, Any], leaf: dict[str, Any]) -> list[str]:
    manifest = line["manifest"]
    data = str(manifest["document"]).encode("utf-8")
    named, actual = str(manifest["sha256"]), _sha256(data)
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
    if leaf and leaf.get("timestamp") != _sha256(reply):
        problems.append(
            f"the logged leaf names timestamp {leaf.get('timestamp')},"
            f" the line's token hashes to {_sha256(reply)}"
        )
    return problems


def _checkpoint_problems(checkpoint: dict[str, Any]) -> list[str]:
    """The checkpoint's signature and token over its document (the same for every line proved
    against it: ``attestation_problems`` says each once)."""
    if not checkpoint:
        return []
    document = str(checkpoint["document"]).encode("utf-8")
    label = f"checkpoint {checkpoint.get('id')}"
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


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
