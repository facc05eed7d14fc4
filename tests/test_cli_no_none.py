"""What the commands print never shows Python's ``None`` for something that is not there: a
citation that names its snapshot and no URL, a snapshot with no text, an archived record
without a record id each say so in words (``-``, ``none``, "without a WARC-Record-ID")."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.snap_cli import run_snap

NEVER_CAPTURED = ["sha256:zz", "sha256:" + "a" * 64]


@pytest.fixture
def env(home_env: dict[str, str]) -> dict[str, str]:
    return home_env


def printed(args: list[str], env: dict[str, str], code: int = 0) -> str:
    done = run_snap(args, env)
    assert done.returncode == code, done.stdout + done.stderr
    assert "None" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("snapshot_id", NEVER_CAPTURED)
def test_a_citation_of_a_snapshot_alone(
    env: dict[str, str], tmp_path: Path, snapshot_id: str
) -> None:
    citation = tmp_path / "citation.json"
    document = {"citationId": "alone", "snapshotId": snapshot_id, "quote": "hello"}
    citation.write_text(json.dumps(document))
    printed(["verify", str(citation)], env, 1)
    reverified = printed(["reverify"], env, 1)
    assert f"the cited snapshot {snapshot_id} was never captured\n" in reverified
    audited = printed(["audit", "alone"], env)
    assert "\n  url     -\n" in audited


def test_a_snapshot_without_text(env: dict[str, str], tmp_path: Path) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(random.Random(5).randbytes(300))
    fetched = run_snap(["fetch", str(blob), "--json"], env)
    assert fetched.returncode == 0, fetched.stderr
    snapshot_id = json.loads(fetched.stdout)["snapshotId"]
    audited = printed(["audit", "--snapshot", snapshot_id], env)
    assert "\n  text hash none\n  norm hash none\n" in audited


def test_an_archived_record_without_a_record_id(env: dict[str, str], tmp_path: Path) -> None:
    body = b"<html><body><p>A record its archive gave no WARC-Record-ID.</p></body></html>"
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    warc = tmp_path / "no-id.warc"
    warc.write_bytes(
        b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.test/no-id\r\n"
        b"WARC-Date: 2024-05-01T12:00:00Z\r\nContent-Type: application/http; msgtype=response\r\n"
        b"Content-Length: %d\r\n\r\n%s\r\n\r\n" % (len(http), http)
    )
    printed(["import", str(warc)], env)
    audited = printed(["audit", "--url", "http://example.test/no-id", "--json"], env)
    snapshot_id = json.loads(audited)["snapshots"][0]["snapshotId"]
    audited = printed(["audit", "--url", "http://example.test/no-id"], env)
    assert "(sha256 sha256:" in audited
    assert ", response without a WARC-Record-ID), captured by" in audited
    headers = printed(["show", "--headers", snapshot_id], env)
    assert ", record without a WARC-Record-ID), captured by" in headers.splitlines()[0]
