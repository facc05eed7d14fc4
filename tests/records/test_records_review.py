"""Defects found in review: each test pins the fixed behaviour."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from records.audit import audit
from records.capture import capture_source
from records.citation_input import parse_document
from records.reverify import refetch_sources, reverify, select_citations
from records.verify import verify_citations
from records.workspace import Workspace
from snap.errors import OffsetError
from tests.http_fixtures import LoopbackServer
from tests.pdf_fixtures import build_pdf
from tests.records.conftest import Backend

QUOTE = "the origin serves only 1 request in 10"


def statuses(workspace: Workspace, document: object) -> list[str]:
    return [r.status for r in verify_citations(workspace, parse_document(document)).results]


def test_reverify_keeps_stale_and_mismatched_citations_failing(
    workspace: Workspace, example_page: Path, tmp_path: Path
) -> None:
    page = capture_source(workspace, str(example_page))
    other_file = tmp_path / "other.txt"
    other_file.write_text("An unrelated note. " * 20)
    other = capture_source(workspace, str(other_file))
    stale = {
        "snapshotId": page.snapshot_id,
        "quote": QUOTE,
        "hashes": {"text": "sha256:" + "1" * 64},
    }
    wrong_pair = {"url": page.url, "snapshotId": other.snapshot_id, "quote": QUOTE}
    assert statuses(workspace, [stale, wrong_pair]) == ["stale_fingerprint", "unknown_snapshot"]
    again = reverify(workspace, select_citations(workspace))
    assert sorted(r.status for r in again.results) == ["stale_fingerprint", "unknown_snapshot"]
    assert not again.passed


def test_refetch_never_reads_local_files_named_by_citations(
    workspace: Workspace, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("private " * 50)
    statuses(workspace, {"url": str(secret), "quote": "private"})
    errors = refetch_sources(workspace, select_citations(workspace))
    assert errors == {str(secret): "only http and https sources are captured again"}
    assert list(workspace.store.iterate()) == []


def test_a_citation_id_survives_its_source_being_captured(
    backend: Backend,
    workspace: Workspace,
    http_server: LoopbackServer,
    example_page: Path,
    tmp_path: Path,
) -> None:
    http_server.route("/cdn", body=example_page.read_bytes())
    citation = {"citationId": "cid-1", "url": http_server.url("/cdn"), "quote": QUOTE.upper()}
    assert statuses(workspace, citation) == ["unknown_snapshot"]
    capture_source(workspace, http_server.url("/cdn"))
    assert statuses(workspace, citation) == ["quote_found"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(citation))
    emitted = tmp_path / "out.json"
    assert backend.snap("verify", "--emit", str(emitted), str(path)).returncode == 0
    assert json.loads(emitted.read_text())["citations"][0]["selector"]["quote"]["exact"] == QUOTE
    done = backend.snap("verify", str(emitted))  # stored text, other capitals: same citation
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_bad_position_is_refused_even_with_stale_hashes(
    backend: Backend, workspace: Workspace, example_page: Path
) -> None:
    page = capture_source(workspace, str(example_page))
    document = {
        "snapshotId": page.snapshot_id,
        "hashes": {"text": "sha256:" + "1" * 64},
        "selector": {
            "quote": {"exact": QUOTE},
            "position": {"unit": "utf16", "start": 0, "end": 99999},
        },
    }
    with pytest.raises(OffsetError, match="past the end"):
        statuses(workspace, document)
    assert select_citations(workspace) == []  # nothing recorded that could break reverify


def test_each_verification_keeps_what_it_checked(workspace: Workspace, example_page: Path) -> None:
    page = capture_source(workspace, str(example_page))
    at_start = {
        "citationId": "p1",
        "snapshotId": page.snapshot_id,
        "selector": {"quote": {"exact": QUOTE}, "position": {"start": 0, "end": len(QUOTE)}},
    }
    anywhere = {"citationId": "p1", "snapshotId": page.snapshot_id, "quote": QUOTE}
    assert statuses(workspace, at_start) == ["position_mismatch"]
    assert statuses(workspace, anywhere) == ["quote_found"]
    checks = audit(workspace, citation_id="p1", url=None, snapshot_id=None).verifications
    assert [c.details["checked"].get("position") for c in checks] == [
        {"start": 0, "end": len(QUOTE), "unit": "codepoint"},
        None,
    ]


def test_an_undecodable_source_is_recorded_as_a_failed_capture(
    backend: Backend, http_server: LoopbackServer
) -> None:
    http_server.route("/bad", body=b"caf\xe9 \xff\xfe broken", content_type="text/plain")
    done = backend.snap("fetch", http_server.url("/bad"))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    audit_run = backend.snap("audit", "--json", "--url", http_server.url("/bad"))
    captures = json.loads(audit_run.stdout)["captures"]
    assert [(c["outcome"], c["httpStatus"]) for c in captures] == [("failed", 200)]


def test_long_ids_nul_characters_and_long_content_types(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    path = tmp_path / "c.json"
    for bad in (
        {"citationId": "c" * 250, "snapshotId": "sha256:" + "a" * 64, "quote": "x"},
        {"snapshotId": "sha256:" + "a" * 64, "quote": "nul\u0000inside"},
    ):
        path.write_text(json.dumps(bad))
        done = backend.snap("verify", str(path))
        assert (done.returncode, done.stderr.count("\n")) == (2, 1), done.stderr
    long_type = "text/plain; charset=utf-8; " + "x" * 300
    http_server.route("/t", body=("A plain note. " * 30).encode(), content_type=long_type)
    assert backend.snap("fetch", http_server.url("/t")).returncode == 0


def test_a_quote_on_several_pages_passes_on_any_of_them(
    workspace: Workspace, tmp_path: Path
) -> None:
    filler = "This page describes the caching layer and how it behaves under load."
    pages = [[filler, "Cold caches cause slow requests."] for _ in range(3)]
    path = tmp_path / "r.pdf"
    path.write_bytes(build_pdf(pages))
    record = capture_source(workspace, str(path))
    for page in ("1", "2", "3"):
        check = {
            "snapshotId": record.snapshot_id,
            "quote": "Cold caches cause slow requests",
            "page": page,
        }
        assert statuses(workspace, check) == ["quote_found"]


def test_a_fresh_sqlite_home_survives_concurrent_first_use(
    tmp_path: Path, example_page: Path
) -> None:
    env = {"SNAP_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "snap", "fetch", "--json", str(example_page)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0] * 4, outputs
    ids = {json.loads(out)["snapshotId"] for out, _ in outputs}
    assert len(ids) == 1  # four captures of one content, one snapshot


def test_a_citation_checked_before_capture_is_pinned_and_can_change(
    workspace: Workspace, http_server: LoopbackServer, example_page: Path
) -> None:
    http_server.route("/cdn", body=example_page.read_bytes())
    url = http_server.url("/cdn")
    citation = {"url": url, "quote": QUOTE}
    assert statuses(workspace, citation) == ["unknown_snapshot"]
    capture_source(workspace, url)
    assert statuses(workspace, citation) == ["quote_found"]
    changed = example_page.read_bytes().replace(b"1 request in 10", b"1 request in 20")
    http_server.route("/cdn", body=changed)
    capture_source(workspace, url)
    [result] = reverify(workspace, select_citations(workspace)).results
    assert result.status == "source_changed"
    assert "captured" in (result.outcome.reason or "")


def test_answers_and_claims_make_distinct_citations(
    workspace: Workspace, example_page: Path
) -> None:
    page = capture_source(workspace, str(example_page))
    claim = {"text": "Origins see a tenth.", "snapshotId": page.snapshot_id, "quote": QUOTE}
    first = verify_citations(workspace, parse_document({"answerId": "a1", "claims": [claim]}))
    second = verify_citations(workspace, parse_document({"answerId": "a2", "claims": [claim]}))
    assert first.results[0].citation_id != second.results[0].citation_id


def test_unusable_inputs_found_by_a_new_user_exit_2(backend: Backend, tmp_path: Path) -> None:
    snapshot = "sha256:" + "a" * 64
    cases = {
        "surrogate.json": f'{{"snapshotId": "{snapshot}", "quote": "free \\ud800 trial"}}',
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "twice.json": json.dumps(
            [
                {"citationId": "c-x", "snapshotId": snapshot, "quote": "one"},
                {"citationId": "c-x", "snapshotId": snapshot, "quote": "two"},
            ]
        ),
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_text(content)
        done = backend.snap("verify", str(path))
        assert (done.returncode, done.stderr.count("\n")) == (2, 1), (name, done.stderr)
        assert "Traceback" not in done.stderr


def test_emit_target_is_checked_before_anything_is_recorded(
    backend: Backend, tmp_path: Path
) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps({"citationId": "c-e", "snapshotId": "sha256:" + "a" * 64, "quote": QUOTE})
    )
    for target in (tmp_path / "no" / "such" / "out.json", path):
        done = backend.snap("verify", "--emit", str(target), str(path))
        assert done.returncode == 2, done.stderr
    assert backend.snap("audit", "c-e").returncode != 0  # nothing was recorded


def test_read_only_commands_do_not_create_a_database(tmp_path: Path) -> None:
    """``verify`` without ``--fetch`` only reads too: a mistyped home is said so, not
    answered with every citation never captured from a new, empty database."""
    home = tmp_path / "typo"
    env = {"SNAP_HOME": str(home), "PATH": "/usr/bin:/bin"}
    citation = tmp_path / "c.json"
    citation.write_text(json.dumps({"url": "https://x.test/a", "quote": QUOTE}))
    for args in (["audit", "c-1"], ["fsck"], ["reverify"], ["verify", str(citation)]):
        done = subprocess.run(
            [sys.executable, "-m", "snap", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 3, done.stderr
        assert "no snap database" in done.stderr
    assert not home.exists()


def test_a_reverify_filter_that_matches_nothing_is_an_error(
    backend: Backend, workspace: Workspace, example_page: Path
) -> None:
    capture_source(workspace, str(example_page))
    done = backend.snap("reverify", "--url", "https://nothing.example/")
    assert done.returncode == 1
    assert "no recorded citation matches" in done.stderr
