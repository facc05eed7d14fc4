"""``snap attest --out`` and ``snap log consistency --out`` write into a folder the user names
by the rule of every file snap writes there (``records.output_files.write_files_into``): the
same evidence written twice is kept as it is, and a file holding something else (an older
proof someone was handed, which still checks) is never replaced without ``--force``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from records.attest.signing import KeyType, write_new_key
from snap.cli import cli


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ED25519)
    return {"SNAP_HOME": str(home)}


def fetch(env: dict[str, str], tmp_path: Path, name: str) -> str:
    """A page captured and a checkpoint made (each fetch ends with one)."""
    page = tmp_path / f"{name}.html"
    page.write_text(f"<html><body><main><p>The page called {name}.</p></main></body></html>")
    done = CliRunner().invoke(cli, ["fetch", "--json", str(page)], env=env)
    assert done.exit_code == 0, done.output
    return str(json.loads(done.output)["snapshotId"])


def snap(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def attested_once(env: dict[str, str], tmp_path: Path) -> tuple[str, Path]:
    """A page captured and attested into ``evidence/``: its snapshot id and the folder."""
    snapshot = fetch(env, tmp_path, "first")
    out = tmp_path / "evidence"
    assert snap(env, "attest", snapshot, "--out", str(out)).exit_code == 0
    return snapshot, out


def test_attest_into_the_same_folder_twice_keeps_the_same_files(
    env: dict[str, str], tmp_path: Path
) -> None:
    snapshot, out = attested_once(env, tmp_path)
    before = {path.name: path.stat().st_ino for path in out.iterdir()}
    again = snap(env, "attest", snapshot, "--out", str(out))
    assert again.exit_code == 0, again.output
    assert {path.name: path.stat().st_ino for path in out.iterdir()} == before  # not rewritten


def test_attest_refuses_to_replace_an_older_proof_unless_forced(
    env: dict[str, str], tmp_path: Path
) -> None:
    snapshot, out = attested_once(env, tmp_path)
    handed_over = contents(out)
    fetch(env, tmp_path, "second")  # the log grows: the proof is now against a newer checkpoint
    refused = snap(env, "attest", snapshot, "--out", str(out))
    assert refused.exit_code == 2, refused.output
    assert "exists with other content" in refused.output
    assert refused.output.rstrip().endswith("give --force to replace it")
    assert contents(out) == handed_over
    forced = snap(env, "attest", snapshot, "--out", str(out), "--force")
    assert forced.exit_code == 0, forced.output
    replaced = contents(out)
    assert replaced.keys() == handed_over.keys()
    changed = {name for name in replaced if replaced[name] != handed_over[name]}
    assert any(name.endswith(".proof.json") for name in changed)


def test_log_consistency_refuses_a_file_with_other_content_unless_forced(
    env: dict[str, str], tmp_path: Path
) -> None:
    fetch(env, tmp_path, "first")
    fetch(env, tmp_path, "second")
    out = tmp_path / "proof"
    assert snap(env, "log", "consistency", "1", "2", "--out", str(out)).exit_code == 0
    assert snap(env, "log", "consistency", "1", "2", "--out", str(out)).exit_code == 0
    script = out / "check_consistency.py"
    script.write_text("# edited by hand\n")
    refused = snap(env, "log", "consistency", "1", "2", "--out", str(out))
    assert refused.exit_code == 2, refused.output
    assert f"{script} exists with other content" in refused.output
    assert script.read_text() == "# edited by hand\n"
    forced = snap(env, "log", "consistency", "1", "2", "--out", str(out), "--force")
    assert forced.exit_code == 0, forced.output
    assert "hashlib" in script.read_text()


@pytest.mark.parametrize("command", [("attest", "sha256:00000000"), ("log", "consistency", "1")])
def test_force_without_out_is_a_usage_error(env: dict[str, str], command: tuple[str, ...]) -> None:
    done = snap(env, *command, "--force")
    assert done.exit_code == 2
    assert "--force goes with --out FOLDER" in done.output
