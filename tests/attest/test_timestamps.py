"""A capture's manifest is signed and stamped by a TSA on loopback; openssl and snap both
accept the token and the signature, and both refuse a byte changed in the manifest, the token
or the certificate chain."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from records.attest.log_checks import signature_problem
from records.attest.timestamps import timestamp_problem
from records.capture import capture_source
from records.workspace import Workspace
from snap.config import Settings
from tests.attest.conftest import attesting_env
from tests.attest.tsa import LocalTsa, make_ca

PAGE = b"<html><body><main><p>The origin serves one request in ten.</p></main></body></html>"


def flip(data: bytes, at: int | None = None) -> bytes:
    changed = bytearray(data)
    changed[len(data) // 2 if at is None else at] ^= 0x01
    return bytes(changed)


def openssl_verify(token: Path, manifest: Path, ca: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["openssl", "ts", "-verify", "-in", str(token), "-data", str(manifest), "-CAfile", str(ca)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def sealed(signed_workspace: Workspace, tmp_path: Path) -> tuple[Workspace, dict, bytes, bytes]:
    page = tmp_path / "page.html"
    page.write_bytes(PAGE)
    record = capture_source(signed_workspace, str(page))
    manifest_named = record.provenance["manifest"]
    stamp = record.provenance["timestamp"]
    store = signed_workspace.store
    manifest = store.get("manifest", manifest_named["hash"])
    token = store.get("timestamp", stamp["hash"])
    return signed_workspace, record.provenance, manifest, token


def test_manifest_names_every_blob_and_is_stamped(sealed: tuple, tsa: LocalTsa) -> None:
    _workspace, provenance, manifest, _token = sealed
    document = json.loads(manifest)
    assert document["format"] == "snap-capture-manifest/1"
    assert document["method"] == "file"
    kinds = [blob["kind"] for blob in document["blobs"]]
    assert kinds[:2] == ["raw", "text"]
    assert provenance["timestamp"]["state"] == "stamped"
    assert provenance["timestamp"]["tsa"] == tsa.url
    assert tsa.requests, "the TSA was asked"


def test_openssl_and_snap_accept_the_token(sealed: tuple, tsa: LocalTsa, tmp_path: Path) -> None:
    _workspace, _provenance, manifest, token = sealed
    (tmp_path / "m.json").write_bytes(manifest)
    (tmp_path / "t.tsr").write_bytes(token)
    result = openssl_verify(tmp_path / "t.tsr", tmp_path / "m.json", tsa.chain_path)
    assert result.returncode == 0, result.stderr
    assert "Verification: OK" in result.stdout
    assert timestamp_problem((tsa.ca,), token, manifest) is None


@pytest.mark.parametrize("what", ["manifest", "token", "chain"])
def test_one_byte_changed_is_refused_by_both(
    sealed: tuple, tsa: LocalTsa, tmp_path: Path, what: str
) -> None:
    _workspace, _provenance, manifest, token = sealed
    chain = tsa.ca
    if what == "manifest":
        manifest = flip(manifest)
    elif what == "token":
        token = flip(token, len(token) - 40)  # inside the TSA's signature
    else:
        # One byte of the CA's subject name (a root's own signature is not what anyone checks:
        # a trust anchor is trusted as given, so its name and key are what count).
        der = bytearray(tsa.ca.public_bytes(serialization.Encoding.DER))
        subject = der.rfind(b"snap test CA")
        der[subject + len("snap test C")] ^= 0x01
        chain = x509.load_der_x509_certificate(bytes(der))
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(chain.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "m.json").write_bytes(manifest)
    (tmp_path / "t.tsr").write_bytes(token)
    assert openssl_verify(tmp_path / "t.tsr", tmp_path / "m.json", ca_file).returncode != 0
    assert timestamp_problem((chain,), token, manifest) is not None


def test_another_ca_is_refused(sealed: tuple) -> None:
    _workspace, _provenance, manifest, token = sealed
    _key, stranger = make_ca("another CA")
    assert timestamp_problem((stranger,), token, manifest) is not None


def test_signature_checks_with_openssl_and_fails_on_a_changed_byte(
    sealed: tuple, tmp_path: Path
) -> None:
    _workspace, provenance, manifest, _token = sealed
    signature = provenance["manifest"]["signature"]
    (tmp_path / "pub.pem").write_text(signature["publicKey"])
    (tmp_path / "sig.bin").write_bytes(base64.b64decode(signature["value"]))
    (tmp_path / "m.json").write_bytes(manifest)
    command = [
        "openssl",
        "dgst",
        "-sha256",
        "-verify",
        str(tmp_path / "pub.pem"),
        "-signature",
        str(tmp_path / "sig.bin"),
        str(tmp_path / "m.json"),
    ]
    assert subprocess.run(command, capture_output=True, check=False).returncode == 0
    assert signature_problem(signature, manifest) is None
    (tmp_path / "m.json").write_bytes(flip(manifest))
    assert subprocess.run(command, capture_output=True, check=False).returncode != 0
    assert signature_problem(signature, flip(manifest)) is not None


def test_without_a_tsa_a_capture_says_no_trusted_timestamp(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(PAGE)
    workspace = Workspace.open(Settings.from_env(attesting_env(tmp_path / "home", None)))
    try:
        record = capture_source(workspace, str(page))
    finally:
        workspace.close()
    assert record.provenance["timestamp"]["state"] == "none"
    assert record.provenance["timestamp"]["reason"].startswith("no trusted timestamp")
    assert record.provenance["manifest"]["signature"]["state"] == "none"


def test_an_unreachable_tsa_still_records_the_capture(tmp_path: Path, tsa: LocalTsa) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(PAGE)
    env = attesting_env(tmp_path / "home", tsa) | {"SNAP_TSA_URL": "http://127.0.0.1:9/tsa"}
    workspace = Workspace.open(Settings.from_env(env))
    try:
        record = capture_source(workspace, str(page))
    finally:
        workspace.close()
    assert record.provenance["timestamp"]["state"] == "none"
    assert "127.0.0.1:9" in record.provenance["timestamp"]["reason"]


def test_unusable_key_or_tsa_settings_are_one_line_and_exit_2(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from snap.cli import cli

    page = tmp_path / "page.html"
    page.write_bytes(PAGE)
    runner = CliRunner()
    cases = [
        {"SNAP_SIGNING_KEY": str(tmp_path / "missing.pem")},
        {"SNAP_TSA_URL": "http://127.0.0.1:9/tsa"},  # and no SNAP_TSA_CHAIN
        {"SNAP_TSA_PER": "sometimes"},
    ]
    for extra in cases:
        env = {"SNAP_HOME": str(tmp_path / "home"), **extra}
        result = runner.invoke(cli, ["fetch", str(page)], env=env)
        assert result.exit_code == 2, (extra, result.output)
        assert result.output.count("\n") == 1
        assert result.output.startswith("snap: error: SNAP_")
    assert not (tmp_path / "home" / "store" / "raw").exists()  # refused before capturing


def test_an_http_capture_manifest_names_urls_time_method_software_and_every_blob(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    """The manifest of a capture over HTTP, field by field: the URL as requested and as served
    (a redirect between them), the capture time, the method, snap's version, extractor and
    normalizer, the peer, and the SHA-256 of every blob the capture stored, each of which
    hashes to it; the document is its own RFC 8785 form, and its digest the one recorded."""
    import hashlib

    import rfc8785

    from records.attest.signing import KeyType, write_new_key
    from snapshotter.version import __version__
    from tests.http_fixtures import LoopbackServer

    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    env = attesting_env(home, tsa) | {"SNAP_ALLOW_PRIVATE": "1"}
    workspace = Workspace.open(Settings.from_env(env))
    try:
        with LoopbackServer() as server:
            server.route("/old", status=301, headers={"Location": "/new"})
            server.route("/new", body=PAGE)
            record = capture_source(workspace, server.url("/old"))
            requested, served = server.url("/old"), server.url("/new")
        named = record.provenance["manifest"]
        data = workspace.store.get("manifest", named["hash"])
        stored = {
            blob["kind"]: workspace.store.get(blob["kind"], blob["sha256"])
            for blob in json.loads(data)["blobs"]
        }
    finally:
        workspace.close()
    assert "sha256:" + hashlib.sha256(data).hexdigest() == named["hash"]
    document = json.loads(data)
    assert rfc8785.dumps(document) == data
    assert document["method"] == "http"
    assert (document["requestedUrl"], document["servedUrl"]) == (requested, served)
    assert document["capturedAt"] == record.fetched_at
    assert document["httpStatus"] == 200
    assert document["snapshotId"] == record.snapshot_id
    assert document["software"] == {
        "name": "snap",
        "version": __version__,
        "extractor": record.extractor,
        "normalizer": record.normalizer,
    }
    assert document["peer"]["ip"] == "127.0.0.1"
    blobs = {blob["kind"]: blob for blob in document["blobs"]}
    assert set(blobs) == {"raw", "text", "headers"}
    assert blobs["raw"]["sha256"] == record.raw_hash == record.snapshot_id
    assert blobs["text"]["sha256"] == record.text_hash
    assert blobs["headers"]["sha256"] == record.provenance["headersBlob"]["hash"]
    for kind, blob in blobs.items():
        assert "sha256:" + hashlib.sha256(stored[kind]).hexdigest() == blob["sha256"]
        assert len(stored[kind]) == blob["size"]
