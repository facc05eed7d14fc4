"""``snap attest`` on each kind of ID (a citation, a snapshot, an answer) hands over the same
checkable pieces; an export refuses a capture whose seal does not hold and writes nothing; the
inclusion proofs a WARC export carries check with the standard library alone."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from warcio.archiveiterator import ArchiveIterator

from records.attest.attest import CHECK_INCLUSION
from records.attest.signing import KeyType, write_new_key
from snap.cli import cli
from tests.attest.conftest import attesting_env
from tests.attest.tsa import LocalTsa

QUOTE = "The origin serves only 1 request in 10"


def run(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def sealed_home(tmp_path: Path, tsa: LocalTsa) -> tuple[dict[str, str], str]:
    """A signed, stamped capture; an answer of two claims citing it, checked; a checkpoint."""
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    env = attesting_env(home, tsa)
    page = tmp_path / "page.html"
    page.write_text(f"<html><body><main><p>{QUOTE}. The origin rests.</p></main></body></html>")
    snapshot_id = json.loads(run(env, "fetch", "--json", str(page)).output)["snapshotId"]
    answer = {
        "answerId": "answer-1",
        "claims": [
            {"text": "A tenth reaches the origin.", "snapshotId": snapshot_id, "quote": QUOTE},
            {"text": "It rests.", "snapshotId": snapshot_id, "quote": "the origin rests"},
        ],
    }
    (tmp_path / "answer.json").write_text(json.dumps(answer))
    assert run(env, "verify", str(tmp_path / "answer.json")).exit_code == 0
    return env, snapshot_id


def citation_ids(env: dict[str, str]) -> list[str]:
    home = Path(env["SNAP_HOME"])
    engine = sa.create_engine(f"sqlite:///{home / 'snap.db'}")
    try:
        with engine.connect() as connection:
            rows = connection.execute(sa.text("SELECT id FROM citations ORDER BY created_at, id"))
            return [str(row[0]) for row in rows]
    finally:
        engine.dispose()


def export_line_files(folder: Path, line: dict[str, Any]) -> list[Path]:
    """One line of an export's attestations as the files ``check_inclusion.py`` takes: the
    proof, its checkpoint's document and, for a capture, its manifest and token."""
    folder.mkdir()
    proof = line["logProof"]
    pieces = {"proof.json": json.dumps(proof), "checkpoint.json": proof["checkpoint"]["document"]}
    if "captureId" in line:
        pieces["manifest.json"] = line["manifest"]["document"]
    files = []
    for name, text in pieces.items():
        (folder / name).write_text(text)
        files.append(folder / name)
    if "captureId" in line:
        (folder / "manifest.tsr").write_bytes(base64.b64decode(line["timestamp"]["token"]))
        files.append(folder / "manifest.tsr")
    return files


def check_files(out: Path, capture: dict[str, Any]) -> None:
    """Every command ``snap attest`` prints succeeds on the files it wrote (the TSA chain
    among them)."""
    for command in capture["check"]:
        line = command.split("  #")[0].replace("python3", f"{sys.executable} -I -S", 1)
        done = subprocess.run(line, shell=True, cwd=out, capture_output=True, check=False)  # noqa: S602
        assert done.returncode == 0, (line, done.stderr)


@pytest.mark.parametrize("subject", ["citation", "snapshot", "answer"])
def test_attest_takes_a_citation_a_snapshot_or_an_answer(
    tmp_path: Path, tsa: LocalTsa, subject: str
) -> None:
    env, snapshot_id = sealed_home(tmp_path, tsa)
    citations = citation_ids(env)
    assert len(citations) == 2
    given = {"citation": citations[0], "snapshot": snapshot_id, "answer": "answer-1"}[subject]
    out = tmp_path / "out"
    done = run(env, "attest", given, "--json", "--out", str(out))
    assert done.exit_code == 0, done.output
    attested = json.loads(done.output)
    key = {"citation": "citationId", "snapshot": "snapshotId", "answer": "answerId"}[subject]
    assert attested["subject"] == {key: given}
    [capture] = attested["captures"]
    assert json.loads(capture["manifest"]["document"])["snapshotId"] == snapshot_id
    assert capture["signature"]["state"] == "signed"
    assert capture["timestamp"]["state"] == "stamped"
    checks = {v["citationId"] for v in attested["verifications"]}
    assert (
        checks == {"citation": {citations[0]}, "snapshot": set(), "answer": set(citations)}[subject]
    )
    for check in attested["verifications"]:
        assert check["proof"]["checkpoint"] is not None
    check_files(out, capture)
    text = run(env, "attest", given)
    assert text.exit_code == 0
    assert "openssl ts -verify" in text.output


@pytest.mark.parametrize("fmt", ["warc", "wacz", "html"])
def test_an_export_refuses_a_broken_seal_and_writes_nothing(
    tmp_path: Path, tsa: LocalTsa, fmt: str
) -> None:
    env, _snapshot_id = sealed_home(tmp_path, tsa)
    home = Path(env["SNAP_HOME"])
    engine = sa.create_engine(f"sqlite:///{home / 'snap.db'}")
    with engine.begin() as connection:  # the intruder replaces the signature
        provenance = json.loads(
            connection.execute(sa.text("SELECT provenance FROM captures")).scalar_one()
        )
        provenance["manifest"]["signature"]["value"] = base64.b64encode(b"\x30" * 70).decode()
        connection.execute(
            sa.text("UPDATE captures SET provenance = :p"), {"p": json.dumps(provenance)}
        )
    engine.dispose()
    target = tmp_path / f"evidence.{fmt}"
    citation = citation_ids(env)[0]
    done = run(env, "export", "--format", fmt, "-o", str(target), "--citation", citation)
    assert done.exit_code == 1, done.output
    assert "capture 1's seal does not hold: the manifest's signature does not verify" in done.output
    assert "nothing was written" in done.output
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".evidence")] == []


def test_a_warc_export_carries_proofs_checked_with_the_standard_library(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    env, _snapshot_id = sealed_home(tmp_path, tsa)
    target = tmp_path / "evidence.warc.gz"
    done = run(env, "export", "--format", "warc", "-o", str(target), str(tmp_path / "answer.json"))
    assert done.exit_code == 0, done.output
    [(uri, payload)] = [
        (record.rec_headers.get_header("WARC-Target-URI"), record.content_stream().read())
        for record in ArchiveIterator(io.BytesIO(target.read_bytes()))
        if record.rec_type == "resource"
        and record.rec_headers.get_header("WARC-Target-URI").startswith("urn:snap:attestations:")
    ]
    lines = [json.loads(line) for line in payload.decode("utf-8").splitlines()]
    assert {"captureId" in line for line in lines} == {True, False}  # captures and checks
    assert len([line for line in lines if "verificationId" in line]) == 2
    script = tmp_path / "check_inclusion.py"
    script.write_text(CHECK_INCLUSION)
    for number, line in enumerate(lines):
        files = export_line_files(tmp_path / f"line-{number}", line)
        done_check = subprocess.run(
            [sys.executable, "-I", "-S", str(script), *map(str, files)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done_check.returncode == 0, done_check.stderr
        assert "included at position" in done_check.stdout
    capture = next(line for line in lines if "captureId" in line)
    assert capture["timestamp"]["token"]
    checkpoint = capture["logProof"]["checkpoint"]  # its token inlined: when it existed
    (tmp_path / "checkpoint.json").write_text(checkpoint["document"])
    (tmp_path / "checkpoint.tsr").write_bytes(base64.b64decode(checkpoint["timestamp"]["token"]))
    openssl = ["openssl", "ts", "-verify", "-in", "checkpoint.tsr", "-data", "checkpoint.json"]
    stamped = subprocess.run(
        [*openssl, "-CAfile", str(tsa.chain_path)],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert stamped.returncode == 0, stamped.stderr
    forged = dict(lines[0]["logProof"], leaf=base64.b64encode(b"{}").decode())
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    refused = subprocess.run(
        [sys.executable, "-I", "-S", str(script), str(tmp_path / "forged.json")],
        capture_output=True,
        check=False,
    )
    assert refused.returncode != 0
    assert uri.startswith("urn:snap:attestations:sha256:")


def test_the_evidence_page_shows_each_records_inclusion_proof(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    env, _snapshot_id = sealed_home(tmp_path, tsa)
    page = tmp_path / "evidence.html"
    done = run(env, "export", "--format", "html", "-o", str(page), str(tmp_path / "answer.json"))
    assert done.exit_code == 0, done.output
    html = page.read_text()
    # two citations, each with its capture's provenance and the one check of it in its timeline
    assert html.count("Verification timeline") == 2
    assert html.count("the inclusion proof (RFC 9162)") == 4
    for timeline in html.split("Verification timeline")[1:]:
        checks = timeline[: timeline.index("</ol>")]
        assert checks.count("the inclusion proof (RFC 9162)") == checks.count("<li>") == 1
