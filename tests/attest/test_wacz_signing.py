"""A signed WACZ: ``wacz validate --verify-auth`` accepts snap's export, and refuses it with
one byte flipped in ``datapackage.json``, in the WARC inside, or in the signature.

authsign's built-in verifier trusts only its packaged roots (Let's Encrypt for domains, public
TSAs for timestamps), so the offline check runs authsign's own ``Verifier`` behind
``--verifier-url`` on loopback, with the test CA as the trusted root in its roots file; nothing
else about the verification changes."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import zipfile
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization

from records.attest.signing import KeyType, write_new_key
from snap.cli import cli
from tests.attest.conftest import attesting_env
from tests.attest.tsa import LocalTsa, issue
from tests.http_fixtures import LoopbackServer

authsign_verifier = pytest.importorskip("authsign.verifier")
authsign_crypto = pytest.importorskip("authsign.crypto")
WACZ = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "wacz"


@pytest.fixture(scope="module")
def verifier_url(tsa: LocalTsa, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    fingerprint = authsign_crypto.get_fingerprint(tsa.ca)
    roots = tmp_path_factory.mktemp("roots") / "roots.yaml"
    roots.write_text(
        f"domain_cert_roots:\n  - {fingerprint}\ntimestamp_cert_roots:\n  - {fingerprint}\n"
    )
    verifier = authsign_verifier.Verifier(str(roots))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            signed = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            try:
                ok = bool(verifier(signed))
            except Exception:
                ok = False
            self.send_response(200 if ok else 400)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/verify"
    finally:
        server.shutdown()
        server.server_close()


def validate(path: Path, url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    return subprocess.run(
        [str(WACZ), "validate", "-f", str(path), "--verify-auth", "--verifier-url", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def rewrite(source: Path, target: Path, member: str, change: Callable[[bytes], bytes]) -> None:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            new.writestr(info, change(data) if info.filename == member else data)


def flip(data: bytes, at: int) -> bytes:
    changed = bytearray(data)
    changed[at] ^= 0x01
    return bytes(changed)


@pytest.fixture(scope="module")
def signed_wacz(tsa: LocalTsa, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("signed")
    home = folder / "home"
    key = write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    certificate = issue(
        tsa.ca_key, tsa.ca, "evidence.snap.test", key.public, dns="evidence.snap.test"
    )
    chain = folder / "signing-chain.pem"
    chain.write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM)
        + tsa.ca.public_bytes(serialization.Encoding.PEM)
    )
    env = attesting_env(home, tsa) | {"SNAP_SIGNING_CERT": str(chain)}
    runner = CliRunner()
    with LoopbackServer() as server:
        server.route(
            "/cdn",
            body=b"<html><body><main><p>The origin serves only 1 request in 10.</p></main>"
            b"</body></html>",
        )
        fetched = runner.invoke(
            cli, ["fetch", "--json", "--allow-private", server.url("/cdn")], env=env
        )
    assert fetched.exit_code == 0, fetched.output
    snapshot_id = json.loads(fetched.output)["snapshotId"]
    citation = folder / "citation.json"
    citation.write_text(
        json.dumps(
            {
                "citationId": "c-signed",
                "snapshotId": snapshot_id,
                "quote": "The origin serves only 1 request in 10",
            }
        )
    )
    checked = runner.invoke(cli, ["verify", str(citation)], env=env)
    assert checked.exit_code == 0, checked.output
    out = folder / "evidence.wacz"
    done = runner.invoke(
        cli,
        ["export", "--format", "wacz", "-o", str(out), "--citation", "c-signed", "--json"],
        env=env,
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["counts"]["signature"] == "signed"
    return out


def test_wacz_validate_verify_auth_accepts_the_signed_export(
    signed_wacz: Path, verifier_url: str
) -> None:
    result = validate(signed_wacz, verifier_url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Successfully verified signature" in result.stdout
    with zipfile.ZipFile(signed_wacz) as archive:
        signed = json.loads(archive.read("datapackage-digest.json"))["signedData"]
    assert signed["domain"] == "evidence.snap.test"


def test_the_wacz_carries_proofs_checkable_with_hashlib_alone(signed_wacz: Path) -> None:
    import base64

    from tests.attest.test_merkle import standalone_inclusion

    with zipfile.ZipFile(signed_wacz) as archive:
        lines = archive.read("attestations/attestations.jsonl").decode().splitlines()
    attestations = [json.loads(line) for line in lines]
    kinds = {"capture" if "captureId" in a else "verification" for a in attestations}
    assert kinds == {"capture", "verification"}
    for attestation in attestations:
        proof = attestation["logProof"]
        root = json.loads(proof["checkpoint"]["document"])["rootHash"].removeprefix("sha256:")
        assert standalone_inclusion(
            proof["position"],
            proof["treeSize"],
            base64.b64decode(proof["leaf"]),
            proof["path"],
            root,
        )
    capture = next(a for a in attestations if "captureId" in a)
    assert capture["timestamp"]["token"]
    assert json.loads(capture["manifest"]["document"])["format"] == "snap-capture-manifest/1"


@pytest.mark.parametrize("member", ["datapackage.json", "archive/data.warc.gz", "signature"])
def test_one_byte_flipped_is_refused(
    signed_wacz: Path, verifier_url: str, tmp_path: Path, member: str
) -> None:
    tampered = tmp_path / "tampered.wacz"
    if member == "signature":

        def change(data: bytes) -> bytes:
            digest = json.loads(data)
            value = bytearray(digest["signedData"]["signature"].encode())
            value[10] = ord("A") if value[10] != ord("A") else ord("B")
            digest["signedData"]["signature"] = value.decode()
            return json.dumps(digest).encode()

        rewrite(signed_wacz, tampered, "datapackage-digest.json", change)
    else:
        rewrite(signed_wacz, tampered, member, lambda data: flip(data, len(data) // 2))
    result = validate(tampered, verifier_url)
    assert result.returncode != 0, result.stdout


def test_importing_a_signed_wacz_records_its_signature(signed_wacz: Path, tmp_path: Path) -> None:
    env = {"SNAP_HOME": str(tmp_path / "elsewhere")}
    runner = CliRunner()
    imported = runner.invoke(cli, ["import", str(signed_wacz)], env=env)
    assert imported.exit_code == 0, imported.output
    audited = json.loads(
        runner.invoke(cli, ["audit", "--url", _url_of(signed_wacz), "--json"], env=env).output
    )
    provenance = audited["captures"][0]["provenance"]
    assert provenance["archiveSignature"].startswith("valid: signed by domain evidence.snap.test")
    tampered = tmp_path / "tampered.wacz"

    def change(data: bytes) -> bytes:
        digest = json.loads(data)
        value = bytearray(digest["signedData"]["signature"].encode())
        value[10] = ord("A") if value[10] != ord("A") else ord("B")
        digest["signedData"]["signature"] = value.decode()
        return json.dumps(digest).encode()

    rewrite(signed_wacz, tampered, "datapackage-digest.json", change)
    env = {"SNAP_HOME": str(tmp_path / "third")}
    assert runner.invoke(cli, ["import", str(tampered)], env=env).exit_code == 0
    audited = json.loads(
        runner.invoke(cli, ["audit", "--url", _url_of(signed_wacz), "--json"], env=env).output
    )
    assert audited["captures"][0]["provenance"]["archiveSignature"].startswith("invalid:")


def _url_of(wacz: Path) -> str:
    with zipfile.ZipFile(wacz) as archive:
        pages = archive.read("pages/pages.jsonl").decode().splitlines()
    return json.loads(pages[1])["url"]
