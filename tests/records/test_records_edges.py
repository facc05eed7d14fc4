"""Edges found by testing snap as a new user would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from records.capture import capture_source
from records.citation_input import parse_document
from records.reverify import reverify, select_citations
from records.verify import verify_citations
from records.workspace import Workspace
from snap.cli import cli
from snapshotter.store import blob_key
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend

QUOTE = "the origin serves only 1 request in 10"


def test_reverify_keeps_a_citation_that_was_wrong_in_its_own_snapshot_broken(
    backend: Backend, workspace: Workspace, http_server: LoopbackServer, example_page: Path
) -> None:
    http_server.route("/cdn", body=example_page.read_bytes())
    url = http_server.url("/cdn")
    record = capture_source(workspace, url)
    wrong_place = {
        "url": url,
        "snapshotId": record.snapshot_id,
        "selector": {"quote": {"exact": QUOTE}, "position": {"start": 0, "end": len(QUOTE)}},
    }
    report = verify_citations(workspace, parse_document(wrong_place))
    assert report.results[0].status == "position_mismatch"
    http_server.route("/cdn", body=example_page.read_bytes().replace(b"<h1>", b"<h1>New: "))
    capture_source(workspace, url)
    again = reverify(workspace, select_citations(workspace))
    assert [r.status for r in again.results] == ["position_mismatch"]


def test_missing_raw_evidence_fails_the_check(
    backend: Backend, workspace: Workspace, example_page: Path
) -> None:
    if backend.name == "production":
        pytest.skip("a locked S3 object version cannot be deleted, by design")
    record = capture_source(workspace, str(example_page))
    (Path(workspace.settings.store_url) / blob_key("raw", record.raw_hash)).unlink()
    report = verify_citations(
        workspace, parse_document({"snapshotId": record.snapshot_id, "quote": QUOTE})
    )
    assert report.results[0].status == "integrity_failure"
    done = backend.snap("audit", "--snapshot", record.snapshot_id)
    assert done.returncode == 1
    assert "MISSING" in done.stdout


def test_fetch_from_model_output_never_reads_local_files(backend: Backend, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the origin serves only 1 request in 10 " * 20)
    for url in (str(secret), secret.as_uri()):
        citation = tmp_path / "c.json"
        citation.write_text(json.dumps({"url": url, "quote": QUOTE}))
        done = backend.snap("verify", "--fetch", "--json", str(citation))
        assert done.returncode == 1
        [result] = json.loads(done.stdout)["results"]
        assert result["status"] == "unknown_snapshot"
    assert "only http and https" in result["reason"]


def test_a_failed_fetch_says_why(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    http_server.route("/gone", status=404, body=b"no")
    citation = tmp_path / "c.json"
    citation.write_text(json.dumps({"url": http_server.url("/gone"), "quote": QUOTE}))
    done = backend.snap("verify", "--fetch", "--json", str(citation))
    [result] = json.loads(done.stdout)["results"]
    assert result["status"] == "unknown_snapshot"
    assert "could not capture" in result["reason"]
    assert "404" in result["reason"]


def test_same_bytes_at_two_urls_are_two_citations(
    backend: Backend, workspace: Workspace, http_server: LoopbackServer, example_page: Path
) -> None:
    for path in ("/a", "/b"):
        http_server.route(path, body=example_page.read_bytes())
        capture_source(workspace, http_server.url(path))
    document = [{"url": http_server.url(p), "quote": QUOTE} for p in ("/a", "/b")]
    report = verify_citations(workspace, parse_document(document))
    assert [r.status for r in report.results] == ["quote_found"] * 2
    assert len({r.citation_id for r in report.results}) == 2
    assert [r.url for r in report.results] == [http_server.url("/a"), http_server.url("/b")]


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "a", "b"],
        ["fetch"],
        ["fetch", "--max-bytes", "abc", "x"],
        ["reverify", "--since", "yesterday"],
        ["bogus"],
        ["--bogus"],
    ],
)
def test_usage_errors_are_one_line_with_exit_2(args: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, args, env={"SNAP_HOME": str(tmp_path)})
    assert result.exit_code == 2
    assert result.output.count("\n") == 1, result.output
    assert result.output.startswith("snap: error: ")


def test_a_bad_flag_value_is_a_configuration_error(tmp_path: Path) -> None:
    env = {"SNAP_HOME": str(tmp_path), "SNAP_ALLOW_PRIVATE": "maybe"}
    result = CliRunner().invoke(cli, ["fsck"], env=env)
    assert result.exit_code == 2
    assert "SNAP_ALLOW_PRIVATE must be 1 or 0" in result.output


@pytest.mark.committed
def test_input_from_stdin_and_with_a_byte_order_mark(backend: Backend, tmp_path: Path) -> None:
    document = json.dumps({"snapshotId": "sha256:" + "a" * 64, "quote": QUOTE})
    done = subprocess.run(
        [sys.executable, "-m", "snap", "verify", "--json", "-"],
        input=document,
        env=backend.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["results"][0]["status"] == "unknown_snapshot"
    with_bom = tmp_path / "bom.json"
    with_bom.write_bytes(b"\xef\xbb\xbf" + document.encode())
    assert backend.snap("verify", str(with_bom)).returncode == 1
