"""``snap attest`` hands over what the other side checks with standard tools: the exported
token verifies with ``openssl ts -verify``, the signature with ``openssl dgst``, the inclusion
proof with a script of the standard library only; a token replaced in the store is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from records.attest.signing import KeyType, write_new_key
from snap.cli import cli
from tests.attest.conftest import attesting_env
from tests.attest.test_merkle import standalone_inclusion
from tests.attest.tsa import LocalTsa


def test_attest_exports_pieces_that_standard_tools_check(tmp_path: Path, tsa: LocalTsa) -> None:
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    env = attesting_env(home, tsa)
    page = tmp_path / "page.html"
    page.write_text("<main><p>The origin serves only 1 request in 10.</p></main>")
    runner = CliRunner()
    fetched = runner.invoke(cli, ["fetch", "--json", str(page)], env=env)
    assert fetched.exit_code == 0, fetched.output
    snapshot_id = json.loads(fetched.output)["snapshotId"]
    assert runner.invoke(cli, ["log", "checkpoint"], env=env).exit_code == 0
    out = tmp_path / "out"
    result = runner.invoke(cli, ["attest", snapshot_id, "--json", "--out", str(out)], env=env)
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    capture = document["captures"][0]
    assert capture["timestamp"]["state"] == "stamped"
    assert (out / "tsa-chain.pem").is_file()  # written by snap: the chain it checks against
    assert capture["proof"]["checkpoint"]["timestamp"]["state"] == "stamped"
    for command in capture["check"]:
        line = command.split("  #")[0].replace("python3", sys.executable, 1)
        done = subprocess.run(line, shell=True, cwd=out, capture_output=True, check=False)  # noqa: S602
        assert done.returncode == 0, (line, done.stderr)
    proof = capture["proof"]
    import base64

    assert standalone_inclusion(
        proof["position"],
        proof["treeSize"],
        base64.b64decode(proof["leaf"]),
        proof["path"],
        json.loads(proof["checkpoint"]["document"])["rootHash"].removeprefix("sha256:"),
    )


def test_attest_refuses_a_token_of_another_document(tmp_path: Path, tsa: LocalTsa) -> None:
    home = tmp_path / "home"
    env = attesting_env(home, tsa)
    runner = CliRunner()
    pages = []
    for text in ("first page", "second page"):
        page = tmp_path / f"{text.replace(' ', '-')}.html"
        page.write_text(f"<main><p>{text}</p></main>")
        pages.append(json.loads(runner.invoke(cli, ["fetch", "--json", str(page)], env=env).output))
    # the intruder (triggers do not cover captures) gives capture 1 the token of capture 2
    import sqlalchemy as sa

    engine = sa.create_engine(f"sqlite:///{home / 'snap.db'}")
    with engine.begin() as connection:
        rows = connection.execute(sa.text("SELECT id, provenance FROM captures ORDER BY id")).all()
        first, second = (json.loads(row[1]) for row in rows)
        first["timestamp"] = second["timestamp"]
        connection.execute(
            sa.text("UPDATE captures SET provenance = :p WHERE id = :id"),
            {"p": json.dumps(first), "id": rows[0][0]},
        )
    engine.dispose()
    result = runner.invoke(cli, ["attest", pages[0]["snapshotId"]], env=env)
    assert result.exit_code == 1
    assert "stamps another digest" in result.output


def test_audit_and_fsck_refuse_a_swapped_token(tmp_path: Path, tsa: LocalTsa) -> None:
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ED25519)
    env = attesting_env(home, tsa)
    runner = CliRunner()
    ids = []
    for text in ("first page", "second page"):
        page = tmp_path / f"{text.replace(' ', '-')}.html"
        page.write_text(f"<main><p>{text}</p></main>")
        ids.append(json.loads(runner.invoke(cli, ["fetch", "--json", str(page)], env=env).output))
    audited = runner.invoke(cli, ["audit", "--snapshot", ids[0]["snapshotId"], "--json"], env=env)
    assert audited.exit_code == 0, audited.output
    seal = json.loads(audited.output)["captures"][0]["seal"]
    assert seal["intact"]
    assert seal["signature"].startswith("valid")
    assert seal["timestamp"].startswith("valid")
    assert runner.invoke(cli, ["fsck"], env=env).exit_code == 0
    import sqlalchemy as sa

    engine = sa.create_engine(f"sqlite:///{home / 'snap.db'}")
    with engine.begin() as connection:
        rows = connection.execute(sa.text("SELECT id, provenance FROM captures ORDER BY id")).all()
        first, second = (json.loads(row[1]) for row in rows)
        first["timestamp"] = second["timestamp"]
        connection.execute(
            sa.text("UPDATE captures SET provenance = :p WHERE id = :id"),
            {"p": json.dumps(first), "id": rows[0][0]},
        )
    engine.dispose()
    audited = runner.invoke(cli, ["audit", "--snapshot", ids[0]["snapshotId"]], env=env)
    assert audited.exit_code == 1
    assert "stamps another digest" in audited.output
    checked = runner.invoke(cli, ["fsck", "--json"], env=env)
    assert checked.exit_code == 1
    assert any(
        "stamps another digest" in p["problem"] for p in json.loads(checked.output)["problems"]
    )
    assert runner.invoke(cli, ["log", "verify"], env=env).exit_code == 1  # the row changed too


def test_per_batch_manifests_are_stamped_through_the_checkpoint(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    env = attesting_env(home, tsa) | {"SNAP_TSA_PER": "batch"}
    page = tmp_path / "page.html"
    page.write_text("<main><p>batched</p></main>")
    runner = CliRunner()
    before = len(tsa.requests)
    fetched = json.loads(runner.invoke(cli, ["fetch", "--json", str(page)], env=env).output)
    assert fetched["provenance"]["timestamp"]["state"] == "batched"
    assert len(tsa.requests) == before + 1  # the checkpoint at the end of the command only
    out = tmp_path / "out"
    result = runner.invoke(
        cli, ["attest", fetched["snapshotId"], "--json", "--out", str(out)], env=env
    )
    assert result.exit_code == 0, result.output
    [capture] = json.loads(result.output)["captures"]
    # no token of its own: the manifest is tied to the checkpoint's time by the log's leaf
    inclusion = next(c for c in capture["check"] if "check_inclusion.py" in c)
    assert " capture-1.checkpoint.json capture-1.manifest.json  #" in inclusion
    assert any("capture-1.checkpoint.tsr" in c for c in capture["check"])
    for command in capture["check"]:
        line = command.split("  #")[0].replace("python3", f"{sys.executable} -I -S", 1)
        done = subprocess.run(line, shell=True, cwd=out, capture_output=True, check=False)  # noqa: S602
        assert done.returncode == 0, (line, done.stderr)
