"""End to end through the ``snap`` command, against a loopback web server. The tests marked
``real_process`` run every command as a child process (``python -m snap``), as a user's shell
does: the entry point, exit codes and stderr of a real process; the others run it in this
process (tests/snap_cli.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend
from tests.s3_support import make_client

ARTICLE = """<!DOCTYPE html><html><head><title>Caching</title></head><body>
<nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
<article><h1>Caching at the edge</h1>
<p>A cache hit ratio of 90 percent means the origin serves only 1 request in 10.
Raising it to 99 percent means the origin serves only 1 request in 100, a tenfold cut.</p>
<p>Short lifetimes, cookies on static files and query strings that vary per reader all split
the cache into many small entries. Normalizing cache keys often lifts the ratio noticeably.</p>
</article><footer>© 2026 Example</footer></body></html>"""
QUOTE = "the origin serves only 1 request in 10"


def run_json(backend: Backend, *args: str) -> tuple[int, Any]:
    done = backend.snap(*args, "--json")
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout)


def fetch_page(backend: Backend, server: LoopbackServer, body: str = ARTICLE) -> dict[str, Any]:
    server.route("/cdn", body=body.encode())
    code, record = run_json(backend, "fetch", server.url("/cdn"))
    assert code == 0, record
    return record  # type: ignore[no-any-return]


def write_json(tmp_path: Path, document: Any, name: str = "citation.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.real_process
def test_fetch_cite_verify_then_source_changes(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = fetch_page(backend, http_server)
    assert record["snapshotId"] == record["hashes"]["raw"]
    assert record["provenance"]["ip"] == "127.0.0.1"
    citation = write_json(
        tmp_path,
        {
            "citationId": "c-edge",
            "url": http_server.url("/cdn"),
            "snapshotId": record["snapshotId"],
            "quote": QUOTE,
        },
    )
    done = backend.snap("verify", str(citation))
    assert done.returncode == 0, done.stderr
    assert "quote found" in done.stdout
    assert "source verified" not in done.stdout

    fetch_page(backend, http_server, ARTICLE.replace("1 request in 10", "1 request in 20"))
    code, report = run_json(backend, "reverify")
    assert code == 1
    assert [r["status"] for r in report["results"]] == ["source_changed"]
    assert report["summary"]["byStatus"] == {"source_changed": 1}

    code, audit = run_json(backend, "audit", "c-edge")
    assert code == 0
    assert len(audit["captures"]) == 2
    assert [v["status"] for v in audit["verifications"]] == ["quote_found", "source_changed"]


def test_reverify_with_refetch_records_the_new_span(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = fetch_page(backend, http_server)
    citation = write_json(tmp_path, {"snapshotId": record["snapshotId"], "quote": QUOTE})
    assert backend.snap("verify", str(citation)).returncode == 0
    http_server.route("/cdn", body=ARTICLE.replace("<h1>", "<h1>Updated: ").encode())
    code, report = run_json(backend, "reverify", "--refetch")
    assert code == 0, report
    [result] = report["results"]
    assert result["status"] == "quote_found"
    assert result["snapshotId"] != record["snapshotId"]


@pytest.mark.real_process
def test_flipped_byte_is_an_integrity_failure_and_fsck_fails(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = fetch_page(backend, http_server)
    citation = write_json(tmp_path, {"snapshotId": record["snapshotId"], "quote": QUOTE})
    backend.corrupt("text", record["hashes"]["text"])
    code, report = run_json(backend, "verify", str(citation))
    assert code == 1
    [result] = report["results"]
    assert result["status"] == "integrity_failure"
    assert record["hashes"]["text"] in result["reason"]
    code, fsck = run_json(backend, "fsck")
    assert code == 1
    assert len(fsck["problems"]) == 1
    human = backend.snap("fsck")
    assert human.returncode == 1
    assert "1 problem" in human.stdout


def test_fabricated_snapshot_is_unknown(backend: Backend, tmp_path: Path) -> None:
    citation = write_json(tmp_path, {"snapshotId": "sha256:" + "e" * 64, "quote": QUOTE})
    done = backend.snap("verify", str(citation))
    assert done.returncode == 1
    assert "unknown snapshot" in done.stdout
    assert "Could not check the source" in done.stdout


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('{"snapshotId": 5, "quote": "x"}', "snapshotId: expected a string, got a number"),
        (
            '{"snapshotId": "sha256:aa", "selector": {"quote": {"exact": "x"},'
            ' "position": {"start": 9, "end": 3}}}',
            "start (9) is after end (3)",
        ),
        (
            '{"snapshotId": "sha256:aa", "selector": {"quote": {"exact": "x"},'
            ' "position": {"start": "1", "end": 3}}}',
            "selector.position.start: expected a whole number, got a string",
        ),
        ("[]", "empty"),
        ('"just a string"', "expected a JSON object"),
    ],
)
def test_unusable_input_exits_2_with_one_line(
    backend: Backend, tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    done = backend.snap("verify", str(path))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert str(path) in done.stderr
    assert problem in done.stderr


def test_out_of_range_offset_exits_2(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = fetch_page(backend, http_server)
    citation = write_json(
        tmp_path,
        {
            "snapshotId": record["snapshotId"],
            "selector": {
                "quote": {"exact": QUOTE},
                "position": {"unit": "utf16", "start": 0, "end": 99999},
            },
        },
    )
    done = backend.snap("verify", str(citation))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


@pytest.mark.real_process
def test_missing_file_and_failed_fetch_are_one_line_errors(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    done = backend.snap("verify", str(tmp_path / "nope.json"))
    assert (done.returncode, done.stderr.count("\n")) == (2, 1)
    http_server.route("/gone", body=b"missing", status=404)
    done = backend.snap("fetch", http_server.url("/gone"))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "404" in done.stderr
    code, audit = run_json(backend, "audit", "--url", http_server.url("/gone"))
    assert code == 0
    assert [c["outcome"] for c in audit["captures"]] == ["failed"]


def test_minimal_url_quote_with_fetch(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    http_server.route("/cdn", body=ARTICLE.encode())
    citation = write_json(tmp_path, {"url": http_server.url("/cdn"), "quote": QUOTE})
    assert backend.snap("verify", str(citation)).returncode == 1  # never captured: fail closed
    done = backend.snap("verify", "--fetch", str(citation))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.committed
def test_two_processes_verifying_at_once_leave_consistent_rows(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = fetch_page(backend, http_server)
    citations = [
        {"citationId": f"c-{n}", "snapshotId": record["snapshotId"], "quote": QUOTE}
        for n in range(20)
    ]
    path = write_json(tmp_path, citations)
    command = [sys.executable, "-m", "snap", "verify", "--json", str(path)]
    runs = [
        subprocess.Popen(
            command, env=backend.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    for n in (0, 19):
        code, audit = run_json(backend, "audit", f"c-{n}")
        assert code == 0
        assert [v["status"] for v in audit["verifications"]] == ["quote_found"] * 2
    code, snapshot = run_json(backend, "audit", "--snapshot", record["snapshotId"])
    assert len(snapshot["citations"]) == 20


def test_store_init_creates_or_reports_the_store(backend: Backend) -> None:
    code, first = run_json(backend, "store", "init")
    assert code == 0
    assert first["created"] is (backend.name == "embedded")  # the test bucket exists already
    code, again = run_json(backend, "store", "init")
    assert code == 0
    assert again["created"] is False
    if backend.name == "production":
        assert again["objectLock"] is True
        assert again["bucket"] in backend.env["SNAP_STORE"]


@pytest.mark.committed
def test_store_init_reports_a_bucket_without_object_lock(backend: Backend) -> None:
    if backend.name == "embedded":
        pytest.skip("a folder store has no Object Lock to report")
    client = make_client(backend.env["AWS_ENDPOINT_URL"])
    bucket = "snap-unlocked-" + backend.env["SNAP_STORE"].rsplit("/", 1)[-1][:20]
    client.create_bucket(Bucket=bucket)
    env = {**backend.env, "SNAP_STORE": f"s3://{bucket}/x"}
    done = subprocess.run(
        [sys.executable, "-m", "snap", "store", "init"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "WITHOUT Object Lock" in done.stdout


def seconds(wire_time: str) -> str:
    return wire_time.split(".")[0].removesuffix("Z") + "Z"


def test_a_source_changed_by_redirect_says_when_its_url_was_captured_and_where_it_led(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    """The cited URL now redirects to a page captured before: the reason gives the time of
    this URL's latest capture (not the other page's first one) and the page it reached."""
    moved = ARTICLE.replace("1 request in 10", "1 request in 20")
    http_server.route("/new", body=moved.encode())
    code, earlier = run_json(backend, "fetch", http_server.url("/new"))
    assert code == 0, earlier
    fetch_page(backend, http_server)
    cited = {"citationId": "c-moved", "url": http_server.url("/cdn"), "quote": QUOTE}
    assert backend.snap("verify", str(write_json(tmp_path, cited))).returncode == 0
    http_server.redirect("/cdn", http_server.url("/new"))
    time.sleep(1.1)  # reasons give times to the second: the two captures' differ
    code, recaptured = run_json(backend, "fetch", http_server.url("/cdn"))
    assert code == 0, recaptured
    assert recaptured["snapshotId"] == earlier["snapshotId"]  # the same bytes as /new
    code, report = run_json(backend, "reverify", "--url", http_server.url("/cdn"))
    assert code == 1
    [result] = report["results"]
    assert result["status"] == "source_changed"
    assert result["latestCapturedAt"] == seconds(recaptured["fetchedAt"]), result
    assert result["latestCapturedAt"] != seconds(earlier["fetchedAt"])
    assert f"reached by redirect to {http_server.url('/new')}" in result["reason"]
