"""The standalone checks ``snap attest --out`` and ``snap log consistency --out`` hand the other
side are tied to the files they are meant to prove: ``check_inclusion.py`` proves the record
against the checkpoint file whose signature and token openssl checks (not a copy inside the
proof), and that the record names the manifest and token handed over; ``check_consistency.py``
proves against the two checkpoint files the other side holds. A forged proof with its own
checkpoint, a re-signed backdated manifest, a proof of another tree size and a checkpoint
other than the one kept are each refused. Every script runs as ``python3 -I -S``."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from cryptography import x509
from hypothesis import given, settings
from hypothesis import strategies as st

from records.attest import merkle
from records.attest.attest import CHECK_CONSISTENCY, CHECK_INCLUSION
from records.attest.signing import KeyType, load_key, write_new_key
from snap.cli import cli
from tests.attest.conftest import attesting_env
from tests.attest.tsa import LocalTsa


def run(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def fetch(env: dict[str, str], tmp_path: Path, name: str) -> str:
    """A page captured; the fetch ends with a checkpoint."""
    page = tmp_path / f"{name}.html"
    page.write_text(f"<html><body><main><p>The page called {name}.</p></main></body></html>")
    done = run(env, "fetch", "--json", str(page))
    assert done.exit_code == 0, done.output
    return str(json.loads(done.output)["snapshotId"])


def shell(out: Path, command: str) -> subprocess.CompletedProcess[str]:
    """A printed command, run in the folder of the files (python3 as ``-I -S``)."""
    line = command.split("  #")[0].replace("python3", f"{sys.executable} -I -S", 1)
    return subprocess.run(line, shell=True, cwd=out, capture_output=True, text=True, check=False)  # noqa: S602


def attested(env: dict[str, str], snapshot_id: str, out: Path) -> dict[str, Any]:
    done = run(env, "attest", snapshot_id, "--json", "--out", str(out))
    assert done.exit_code == 0, done.output
    [capture] = json.loads(done.output)["captures"]
    return dict(capture)


def inclusion_command(capture: dict[str, Any]) -> str:
    return next(c for c in capture["check"] if "check_inclusion.py" in c)


@pytest.fixture
def sealed(tmp_path: Path, tsa: LocalTsa) -> dict[str, str]:
    """The environment of a home with an ECDSA signing key and a TSA."""
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    return attesting_env(home, tsa)


def test_every_printed_command_passes_and_the_checkpoint_signature_is_checked(
    tmp_path: Path, sealed: dict[str, str]
) -> None:
    env = sealed
    snapshot_id = fetch(env, tmp_path, "first")
    fetch(env, tmp_path, "second")
    out = tmp_path / "out"
    capture = attested(env, snapshot_id, out)
    for command in capture["check"]:
        done = shell(out, command)
        assert done.returncode == 0, (command, done.stderr)
    signature_check = next(c for c in capture["check"] if "capture-1.checkpoint.sig" in c)
    assert "capture-1.checkpoint.public-key.pem" in signature_check
    document = (out / "capture-1.checkpoint.json").read_bytes()
    tampered = document.replace(b'"treeSize":', b'"treeSize":1')
    assert tampered != document
    (out / "capture-1.checkpoint.json").write_bytes(tampered)
    assert shell(out, signature_check).returncode != 0  # the signature covers the document


def test_the_tsa_chain_snap_checks_against_is_written_beside_the_files(
    tmp_path: Path, sealed: dict[str, str], tsa: LocalTsa
) -> None:
    env = sealed
    snapshot_id = fetch(env, tmp_path, "first")
    out = tmp_path / "out"
    capture = attested(env, snapshot_id, out)
    assert all("-CAfile tsa-chain.pem" in c for c in capture["check"] if "openssl ts" in c)
    written = x509.load_pem_x509_certificates((out / "tsa-chain.pem").read_bytes())
    assert written == x509.load_pem_x509_certificates(tsa.chain_path.read_bytes())
    proof = tmp_path / "proof"
    assert run(env, "log", "consistency", "1", "--out", str(proof)).exit_code == 0
    assert (proof / "tsa-chain.pem").read_bytes() == (out / "tsa-chain.pem").read_bytes()


def test_no_tsa_chain_is_written_without_one_configured(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ED25519)
    env = attesting_env(home, None)
    snapshot_id = fetch(env, tmp_path, "first")
    out = tmp_path / "out"
    capture = attested(env, snapshot_id, out)
    assert not (out / "tsa-chain.pem").exists()
    for command in capture["check"]:  # no token: no command names the chain
        assert shell(out, command).returncode == 0, command


def test_a_proof_carrying_its_own_checkpoint_is_refused(
    tmp_path: Path, sealed: dict[str, str]
) -> None:
    """The auditor's forgery: a one-leaf tree of the genuine record, its root put in a
    checkpoint document inside the proof; the checkpoint file (size 6) is the genuine one."""
    env = sealed
    snapshot_id = fetch(env, tmp_path, "first")
    fetch(env, tmp_path, "second")
    fetch(env, tmp_path, "third")
    out = tmp_path / "out"
    capture = attested(env, snapshot_id, out)
    command = inclusion_command(capture)
    assert shell(out, command).returncode == 0
    genuine = json.loads((out / "capture-1.proof.json").read_text())
    leaf = base64.b64decode(genuine["leaf"])
    root = "sha256:" + merkle.leaf_hash(leaf).hex()
    fake_checkpoint = json.dumps({"rootHash": root, "treeSize": 1})
    forged = dict(genuine, position=0, treeSize=1, path=[])
    forged["checkpoint"] = dict(genuine["checkpoint"], document=fake_checkpoint)
    (out / "capture-1.proof.json").write_text(json.dumps(forged))
    refused = shell(out, command)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "NOT VERIFIED: the proof is for a log of another size than CHECKPOINT's"
    )
    (out / "capture-1.proof.json").write_text(json.dumps(dict(forged, treeSize=6)))
    refused = shell(out, command)
    assert refused.returncode == 1
    assert refused.stderr.strip() == "NOT VERIFIED: not in CHECKPOINT's log"


def test_a_proof_of_another_tree_size_is_refused(tmp_path: Path, sealed: dict[str, str]) -> None:
    """A genuine proof against a newer checkpoint, paired with an older checkpoint file (or
    its tree size changed), proves nothing about that file."""
    env = sealed
    snapshot_id = fetch(env, tmp_path, "first")
    fetch(env, tmp_path, "second")
    older = tmp_path / "older"
    older_capture = attested(env, snapshot_id, older)  # against checkpoint 2 (size 4)
    fetch(env, tmp_path, "third")
    out = tmp_path / "out"
    capture = attested(env, snapshot_id, out)  # against checkpoint 3 (size 6)
    command = inclusion_command(capture)
    (out / "capture-1.checkpoint.json").write_bytes(
        (older / "capture-1.checkpoint.json").read_bytes()
    )
    refused = shell(out, command)
    assert refused.returncode == 1
    assert "another size" in refused.stderr
    proof = json.loads((older / "capture-1.proof.json").read_text())
    (older / "capture-1.proof.json").write_text(json.dumps(dict(proof, treeSize=6)))
    refused = shell(older, inclusion_command(older_capture))
    assert refused.returncode == 1
    assert "another size" in refused.stderr


def test_a_backdated_manifest_signed_again_is_refused_in_batch_mode(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    """With ``SNAP_TSA_PER=batch`` the record's leaf is all that ties the manifest to a time:
    a manifest whose capture time was changed and signed again with the signing key passes
    the signature check, and the inclusion check refuses it."""
    home = tmp_path / "home"
    key = write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    env = attesting_env(home, tsa) | {"SNAP_TSA_PER": "batch"}
    snapshot_id = fetch(env, tmp_path, "first")
    fetch(env, tmp_path, "second")
    out = tmp_path / "out"
    capture = attested(env, snapshot_id, out)
    assert capture["timestamp"]["state"] == "batched"
    for command in capture["check"]:
        assert shell(out, command).returncode == 0, command
    manifest = json.loads((out / "capture-1.manifest.json").read_bytes())
    manifest["capturedAt"] = "2020-01-01T00:00:00+00:00"
    backdated = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    (out / "capture-1.manifest.json").write_bytes(backdated)
    signature = load_key(home / "signing-key.pem").sign(backdated)
    assert signature.key_id == key.key_id
    (out / "capture-1.manifest.sig").write_bytes(base64.b64decode(signature.value))
    signature_check = next(c for c in capture["check"] if "capture-1.manifest.sig" in c)
    assert shell(out, signature_check).returncode == 0  # the forger holds the key
    refused = shell(out, inclusion_command(capture))
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "NOT VERIFIED: the record names another manifest than capture-1.manifest.json"
    )


def test_a_token_of_another_document_is_refused(tmp_path: Path, sealed: dict[str, str]) -> None:
    env = sealed
    snapshot_id = fetch(env, tmp_path, "first")
    out = tmp_path / "out"
    capture = attested(env, snapshot_id, out)
    assert "capture-1.manifest.tsr" in inclusion_command(capture)
    token = (out / "capture-1.checkpoint.tsr").read_bytes()
    (out / "capture-1.manifest.tsr").write_bytes(token)
    refused = shell(out, inclusion_command(capture))
    assert refused.returncode == 1
    assert "the record names another timestamp than capture-1.manifest.tsr" in refused.stderr


def test_consistency_is_checked_against_the_checkpoint_kept(
    tmp_path: Path, sealed: dict[str, str]
) -> None:
    """The other side kept capture-1.checkpoint.json from an earlier attestation; the later
    proof checks against that file, whatever the proof file says its checkpoints are."""
    env = sealed
    snapshot_id = fetch(env, tmp_path, "first")
    kept = tmp_path / "kept"
    attested(env, snapshot_id, kept)  # checkpoint 1, size 2
    fetch(env, tmp_path, "second")
    fetch(env, tmp_path, "third")
    out = tmp_path / "out"
    done = run(env, "log", "consistency", "1", "--out", str(out))
    assert done.exit_code == 0, done.output
    commands = [line.strip().removeprefix("$ ") for line in done.output.splitlines()[1:]]
    check = commands[-1]
    assert check.startswith(
        "python3 check_consistency.py consistency-1-3.json checkpoint-1.json checkpoint-3.json"
    )
    for command in commands:
        assert shell(out, command).returncode == 0, command
    assert (out / "checkpoint-1.json").read_bytes() == (
        kept / "capture-1.checkpoint.json"
    ).read_bytes()
    proof = json.loads((out / "consistency-1-3.json").read_text())
    lying = json.loads(proof["from"]["document"]) | {"treeSize": 4}
    proof["from"]["document"] = json.dumps(lying)  # the copy inside is not what is checked
    (out / "consistency-1-3.json").write_text(json.dumps(proof))
    assert shell(out, check).returncode == 0
    forged = json.loads((out / "checkpoint-1.json").read_bytes())
    forged["rootHash"] = "sha256:" + "1" * 64
    (out / "checkpoint-1.json").write_text(json.dumps(forged))
    refused = shell(out, check)
    assert refused.returncode == 1
    assert refused.stderr.strip() == "NOT VERIFIED: the new log does not extend the old"


def script_says(script: str, *files: Path) -> str:
    """Run a standalone check in this process: its last line, or why it refused."""
    out = io.StringIO()
    argv = sys.argv
    sys.argv = [script, *map(str, files)]
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(script, "check", "exec"), {"__name__": "__main__"})  # noqa: S102
    except SystemExit as refused:
        return str(refused.code)
    finally:
        sys.argv = argv
    return out.getvalue().splitlines()[-1]


def write_json(path: Path, value: dict[str, Any]) -> Path:
    path.write_text(json.dumps(value))
    return path


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.data())
def test_inclusion_holds_against_exactly_the_checkpoint_it_was_made_for(
    tmp_path_factory: pytest.TempPathFactory, size: int, data: st.DataObject
) -> None:
    """For every log size and position: the proof checks against its checkpoint, and against
    the checkpoint of any other size of the same log it is refused."""
    folder = tmp_path_factory.mktemp("inclusion")
    records = [
        json.dumps({"kind": "capture", "id": n, "manifest": None}).encode() for n in range(41)
    ]
    leaves = [merkle.leaf_hash(record) for record in records]
    position = data.draw(st.integers(0, size - 1))
    proof = {
        "position": position,
        "treeSize": size,
        "leaf": base64.b64encode(records[position]).decode(),
        "leafHash": "sha256:" + leaves[position].hex(),
        "path": [p.hex() for p in merkle.inclusion_proof(position, leaves[:size])],
    }

    def checkpoint(n: int) -> Path:
        root = "sha256:" + merkle.root(leaves[:n]).hex()
        return write_json(folder / f"checkpoint-{n}.json", {"treeSize": n, "rootHash": root})

    proof_file = write_json(folder / "proof.json", proof)
    said = script_says(CHECK_INCLUSION, proof_file, checkpoint(size))
    assert said == f"capture {position} is included at position {position} of {size}"
    other = data.draw(st.integers(position + 1, 41).filter(lambda n: n != size))
    refused = script_says(CHECK_INCLUSION, proof_file, checkpoint(other))
    assert refused.startswith("NOT VERIFIED")
    as_if = write_json(folder / "as-if.json", dict(proof, treeSize=other))
    assert script_says(CHECK_INCLUSION, as_if, checkpoint(other)).startswith("NOT VERIFIED")


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.data())
def test_consistency_holds_against_exactly_the_two_checkpoints_it_was_made_for(
    tmp_path_factory: pytest.TempPathFactory, new_size: int, data: st.DataObject
) -> None:
    folder = tmp_path_factory.mktemp("consistency")
    leaves = [merkle.leaf_hash(f"record {n}".encode()) for n in range(41)]
    old_size = data.draw(st.integers(1, new_size))
    path = merkle.consistency_proof(old_size, leaves[:new_size]) if old_size < new_size else []
    proof = write_json(folder / "proof.json", {"proof": [p.hex() for p in path]})

    def checkpoint(n: int, name: str) -> Path:
        root = "sha256:" + merkle.root(leaves[:n]).hex()
        return write_json(folder / f"{name}.json", {"treeSize": n, "rootHash": root})

    said = script_says(
        CHECK_CONSISTENCY, proof, checkpoint(old_size, "old"), checkpoint(new_size, "new")
    )
    assert said == f"the log of size {new_size} extends the log of size {old_size}"
    other = data.draw(st.integers(1, 41).filter(lambda n: n not in (old_size, new_size)))
    for kept, newer in ((other, new_size), (old_size, other)):
        refused = script_says(
            CHECK_CONSISTENCY, proof, checkpoint(kept, "old"), checkpoint(newer, "new")
        )
        assert refused.startswith("NOT VERIFIED"), (old_size, new_size, kept, newer)


def test_a_citation_s_checks_are_written_with_the_commands_that_check_them(
    tmp_path: Path, sealed: dict[str, str]
) -> None:
    """That the quote was checked, and when, is in the log as the capture is: each
    verification's proof and checkpoint are files too, and its printed commands pass."""
    env = sealed
    snapshot_id = fetch(env, tmp_path, "first")
    citation = tmp_path / "citation.json"
    quote = "The page called first."
    citation.write_text(
        json.dumps({"citationId": "c-first", "snapshotId": snapshot_id, "quote": quote})
    )
    assert run(env, "verify", str(citation)).exit_code == 0  # ends with a checkpoint
    out = tmp_path / "out"
    done = run(env, "attest", "c-first", "--json", "--out", str(out))
    assert done.exit_code == 0, done.output
    [check] = json.loads(done.output)["verifications"]
    base = f"verification-{check['id']}"
    assert (out / f"{base}.proof.json").exists()
    inclusion = next(c for c in check["check"] if "check_inclusion.py" in c)
    assert f"{base}.proof.json {base}.checkpoint.json" in inclusion
    assert len(check["check"]) == 3  # the inclusion, the checkpoint's signature and its token
    for command in check["check"]:
        finished = shell(out, command)
        assert finished.returncode == 0, (command, finished.stderr)
    assert "verification" in shell(out, inclusion).stdout
    (out / f"{base}.proof.json").write_text(
        (out / f"{base}.proof.json").read_text().replace('"position": ', '"position": 1')
    )
    assert shell(out, inclusion).returncode != 0
