"""``snap verify`` checks the seal of the capture whose blobs it reads: a token swapped from
another capture, a signature that does not verify, a damaged manifest, or a text the manifest
does not name is an integrity failure that says which piece failed, in every shell over the
same use case (CLI, reverify, HTTP, MCP, ``snap.api``). A capture that was never sealed is
not a failure: the result says so. Each seal is verified once per process."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from records.attest.signing import KeyType, write_new_key
from snap.cli import cli
from tests.attest.conftest import attesting_env
from tests.attest.tsa import LocalTsa

QUOTE = "The origin serves only 1 request in 10"
FORGED = "The origin serves every request itself"


@dataclass
class Home:
    path: Path
    env: dict[str, str]
    snapshot_id: str
    citation: Path

    def snap(self, *args: str) -> Result:
        return CliRunner().invoke(cli, list(args), env=self.env)

    def verify(self, citation: Path | None = None) -> tuple[int, dict[str, Any]]:
        done = self.snap("verify", "--json", str(citation or self.citation))
        return done.exit_code, json.loads(done.output)["results"][0]

    def provenances(self) -> list[dict[str, Any]]:
        with self.engine().begin() as connection:
            rows = connection.execute(sa.text("SELECT provenance FROM captures ORDER BY id"))
            return [json.loads(row[0]) for row in rows]

    def set_provenance(self, capture_id: int, provenance: dict[str, Any]) -> None:
        """The intruder: the captures table has no append-only trigger to stop this."""
        with self.engine().begin() as connection:
            connection.execute(
                sa.text("UPDATE captures SET provenance = :p WHERE id = :id"),
                {"p": json.dumps(provenance), "id": capture_id},
            )

    def engine(self) -> sa.Engine:
        return sa.create_engine(f"sqlite:///{self.path / 'snap.db'}")


def make_home(tmp_path: Path, tsa: LocalTsa | None, *, key: bool = True) -> Home:
    """Two captured pages, signed and stamped when given a key and a TSA; a citation of the
    first. The second's seal is what an intruder swaps in."""
    home = tmp_path / "home"
    if key:
        write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    env = attesting_env(home, tsa)
    runner = CliRunner()
    ids = []
    for name, text in (("first", QUOTE), ("second", "A second page, sealed too")):
        page = tmp_path / f"{name}.html"
        page.write_text(f"<html><body><main><p>{text}.</p></main></body></html>")
        fetched = runner.invoke(cli, ["fetch", "--json", str(page)], env=env)
        assert fetched.exit_code == 0, fetched.output
        ids.append(json.loads(fetched.output)["snapshotId"])
    citation = tmp_path / "citation.json"
    citation.write_text(json.dumps({"snapshotId": ids[0], "quote": QUOTE}))
    return Home(home, env, ids[0], citation)


def test_a_sealed_capture_verifies_and_says_its_seal_holds(tmp_path: Path, tsa: LocalTsa) -> None:
    home = make_home(tmp_path, tsa)
    code, result = home.verify()
    assert code == 0, result
    assert result["status"] == "quote_found"
    seal = result["seal"]
    assert seal["intact"]
    assert seal["signed"]
    assert seal["stamped"]
    assert seal["signature"].startswith("valid (key ")
    assert seal["timestamp"].startswith("valid (")
    assert seal["captureId"] == 1
    assert seal["manifest"] == home.provenances()[0]["manifest"]["hash"]
    text = home.snap("verify", str(home.citation)).output
    assert "seal: 1 capture read, signed and timestamped" in text


def test_a_capture_never_sealed_is_no_failure_and_says_so(tmp_path: Path) -> None:
    home = make_home(tmp_path, None, key=False)
    code, result = home.verify()
    assert code == 0, result
    seal = result["seal"]
    assert seal["intact"]
    assert not seal["signed"]
    assert not seal["stamped"]
    assert seal["signature"].startswith("not signed: no SNAP_SIGNING_KEY")
    assert seal["timestamp"].startswith("no trusted timestamp: SNAP_TSA_URL is not set")
    text = home.snap("verify", str(home.citation)).output
    assert "seal: 1 capture read, not signed" in text
    assert "no trusted timestamp" in text


def swap_token(home: Home) -> str:
    first, second = home.provenances()
    home.set_provenance(1, {**first, "timestamp": second["timestamp"]})
    return "timestamp token stamps another digest"


def break_signature(home: Home) -> str:
    first = home.provenances()[0]
    signature = dict(first["manifest"]["signature"])
    other = home.provenances()[1]["manifest"]["signature"]["value"]
    manifest = {**first["manifest"], "signature": {**signature, "value": other}}
    home.set_provenance(1, {**first, "manifest": manifest})
    return "the manifest's signature does not verify"


def damage_manifest(home: Home) -> str:
    digest = home.provenances()[0]["manifest"]["hash"].removeprefix("sha256:")
    [path] = (home.path / "store").rglob(f"*{digest}*")
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    return "the manifest cannot be read: integrity failure"


def unnamed_text(home: Home) -> str:
    """A text the manifest does not name, recorded without a log entry: what an intruder
    with the database and the store (but not the key) adds to make a forged quote pass."""
    forged = f"{FORGED}.".encode()
    digest = "sha256:" + hashlib.sha256(forged).hexdigest()
    from records.workspace import Workspace
    from snap.config import Settings

    workspace = Workspace.open(Settings.from_env(home.env))
    try:
        workspace.store.put("text", digest, forged, tags={"kind": "text"})
    finally:
        workspace.close()
    with home.engine().begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO extractions (snapshot_id, extractor, decoding, content_type,"
                " text_hash, norm_hash, text_size, normalizer, pages, flags, source, created_at)"
                " SELECT snapshot_id, 'forged', decoding, content_type, :digest, :digest, :size,"
                " normalizer, pages, flags, source, created_at FROM extractions WHERE id = 1"
            ),
            {"digest": digest, "size": len(forged)},
        )
    home.citation.write_text(json.dumps({"snapshotId": home.snapshot_id, "quote": FORGED}))
    return "is named neither by the manifest nor by a log entry"


TAMPERING: dict[str, Callable[[Home], str]] = {
    "token": swap_token,
    "signature": break_signature,
    "manifest": damage_manifest,
    "unnamed text": unnamed_text,
}


@pytest.mark.parametrize("tampering", TAMPERING)
def test_a_broken_seal_is_an_integrity_failure_that_names_the_piece(
    tmp_path: Path, tsa: LocalTsa, tampering: str
) -> None:
    home = make_home(tmp_path, tsa)
    assert home.verify()[0] == 0
    piece = TAMPERING[tampering](home)
    code, result = home.verify()
    assert code == 1, result
    assert result["status"] == "integrity_failure"
    assert result["reason"].startswith("capture 1's seal does not hold: ")
    assert piece in result["reason"]
    assert not result["seal"]["intact"]
    text = home.snap("verify", str(home.citation)).output
    assert "integrity failure" in text
    assert piece in text


def test_a_text_extracted_later_is_vouched_for_by_its_log_entry(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    """``snap reextract``'s way: a new extraction recorded with its log entry passes, and the
    seal says the text is not the manifest's; the same row edited afterwards does not pass."""
    home = make_home(tmp_path, tsa)
    from records.repository import record_extraction
    from records.workspace import Workspace
    from snap.config import Settings

    later = f"{FORGED}.".encode()
    digest = "sha256:" + hashlib.sha256(later).hexdigest()
    workspace = Workspace.open(Settings.from_env(home.env))
    try:
        blob = workspace.store.put("text", digest, later, tags={"kind": "text"})
        with workspace.db.session() as session:
            record_extraction(
                session,
                {
                    "snapshot_id": home.snapshot_id,
                    "extractor": "later-extractor",
                    "decoding": "declared:text/plain",
                    "content_type": "text/plain",
                    "text_hash": digest,
                    "norm_hash": digest,
                    "text_size": len(later),
                    "normalizer": "snap-norm@1",
                    "text_version_id": blob.version_id,
                    "pages": [],
                    "flags": [],
                },
            )
    finally:
        workspace.close()
    home.citation.write_text(json.dumps({"snapshotId": home.snapshot_id, "quote": FORGED}))
    code, result = home.verify()
    assert code == 0, result
    assert result["seal"]["intact"]
    assert "extracted after this capture" in result["seal"]["notes"][0]
    with home.engine().begin() as connection:
        connection.execute(sa.text("UPDATE extractions SET extractor = 'edited' WHERE id = 3"))
    code, result = home.verify()
    assert code == 1
    assert "is named neither by the manifest nor by a log entry" in result["reason"]


def test_every_shell_over_verify_reports_the_broken_seal(tmp_path: Path, tsa: LocalTsa) -> None:
    home = make_home(tmp_path, tsa)
    assert home.snap("verify", str(home.citation)).exit_code == 0  # recorded: reverify has it
    piece = swap_token(home)
    from records.workspace import Workspace
    from snap.config import Settings

    settings = Settings.from_env(home.env)
    reverified = home.snap("reverify", "--json")
    assert reverified.exit_code == 1
    [again] = json.loads(reverified.output)["results"]
    assert again["status"] == "integrity_failure"
    assert piece in again["reason"]

    from fastapi.testclient import TestClient

    from snap.service.app import ServiceConfig, create_app

    with TestClient(create_app(ServiceConfig(settings))) as client:
        answered = client.post("/v1/verify", content=home.citation.read_bytes())
    assert answered.status_code == 200
    [served] = answered.json()["results"]
    assert served["status"] == "integrity_failure"
    assert piece in served["reason"]
    assert served["seal"]["intact"] is False

    from snap.mcp import build_server

    workspace = Workspace.open(settings)
    try:
        server = build_server(workspace)
        called = asyncio.run(
            server.call_tool("verify_quote", {"quote": QUOTE, "snapshot_id": home.snapshot_id})
        )
    finally:
        workspace.close()
    structured = called[1] if isinstance(called, tuple) else called
    assert structured["status"] == "integrity_failure"
    assert piece in structured["reason"]
    assert structured["seal"]["intact"] is False

    import snap.api

    with snap.api.Workspace.open(home.path) as opened:
        answer = opened.verify_answer(home.citation)
    [checked] = answer.results
    assert checked.status == "integrity_failure"
    assert piece in (checked.outcome.reason or "")


def test_each_seal_is_read_and_verified_once_per_process(
    tmp_path: Path, tsa: LocalTsa, monkeypatch: pytest.MonkeyPatch
) -> None:
    from records.attest import checks
    from records.inputs import load_verify_input
    from records.inputs.documents import NO_DOCUMENTS
    from records.verify import verify_citations
    from records.workspace import Workspace
    from snap.config import Settings

    home = make_home(tmp_path, tsa)
    computed: list[str] = []
    compute = checks._compute

    def counted(data: bytes, *args: Any) -> Any:
        computed.append(hashlib.sha256(data).hexdigest())
        return compute(data, *args)

    monkeypatch.setattr(checks, "_compute", counted)
    workspace = Workspace.open(Settings.from_env(home.env))
    reads: list[str] = []
    get = workspace.store.get

    def counted_get(kind: str, digest: str, **options: Any) -> bytes:
        reads.append(kind)
        return get(kind, digest, **options)

    monkeypatch.setattr(workspace.store, "get", counted_get)
    try:
        given = load_verify_input(home.citation, NO_DOCUMENTS)
        for _ in range(3):
            report = verify_citations(workspace, given)
            assert report.passed
    finally:
        workspace.close()
    assert len(computed) == 1  # signature and token verified once
    assert reads.count("manifest") == 1
    assert reads.count("timestamp") == 1
    assert reads.count("text") == 3  # the text is read on every run, as before
