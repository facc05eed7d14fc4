"""A time-stamping authority that does not answer fails no capture, but ``snap fetch`` says so
on standard error: the other side's expert pointed SNAP_TSA_URL at a closed port and got exit 0
and not a word, until ``snap audit`` said "no trusted timestamp" later."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from click.testing import CliRunner

from records.attest.signing import KeyType, write_new_key
from snap.cli import cli
from tests.attest.tsa import LocalTsa

WARNING = "snap: warning: "


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def pages(tmp_path: Path, count: int) -> list[str]:
    paths = []
    for number in range(count):
        page = tmp_path / f"page{number}.html"
        page.write_text(f"<html><body><main><p>Page {number} says its piece.</p></main></body>")
        paths.append(str(page))
    return paths


def env_of(tmp_path: Path, tsa_url: str | None) -> dict[str, str]:
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    return {"SNAP_HOME": str(home), **({"SNAP_TSA_URL": tsa_url} if tsa_url else {})}


def test_an_authority_that_does_not_answer_is_said_once_after_the_captures(
    tmp_path: Path, tsa: LocalTsa
) -> None:
    env = env_of(tmp_path, f"http://127.0.0.1:{closed_port()}/tsa")
    env["SNAP_TSA_CHAIN"] = str(tsa.chain_path)
    one = CliRunner().invoke(cli, ["fetch", "--json", pages(tmp_path, 1)[0]], env=env)
    assert one.exit_code == 0, one.output
    assert json.loads(one.stdout)["snapshotId"].startswith("sha256:")  # stdout stays JSON
    [line] = one.stderr.splitlines()
    assert line.startswith(f"{WARNING}the capture is stored and signed without a trusted")
    assert "snap log checkpoint" in line
    many = CliRunner().invoke(cli, ["fetch", *pages(tmp_path, 3)[1:]], env=env)
    assert many.exit_code == 0, many.output
    [line] = many.stderr.splitlines()
    assert line.startswith(f"{WARNING}2 captures are stored and signed without a trusted")


def test_no_warning_when_stamped_or_when_no_authority_is_set(tmp_path: Path, tsa: LocalTsa) -> None:
    stamped = env_of(tmp_path / "a", tsa.url) | {"SNAP_TSA_CHAIN": str(tsa.chain_path)}
    unset = env_of(tmp_path / "b", None)
    for env in (stamped, unset):
        done = CliRunner().invoke(cli, ["fetch", pages(tmp_path, 1)[0]], env=env)
        assert done.exit_code == 0, done.output
        assert WARNING not in done.stderr
