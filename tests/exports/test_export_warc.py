"""``snap export --format warc``: what the other side checks with warcio, on both backends."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.exports.support import (
    PAGE,
    QUOTE,
    capture_and_cite,
    records_of,
    run_json,
    tool,
)
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend


def test_warc_passes_warcio_and_carries_the_capture(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    snapshot_id = record["snapshotId"]
    out = tmp_path / "evidence.warc.gz"
    code, summary = run_json(
        backend, "export", "--format", "warc", "-o", str(out), "--citation", "c-edge"
    )
    assert code == 0, summary
    assert summary["sha256"] == "sha256:" + hashlib.sha256(out.read_bytes()).hexdigest()
    assert summary["counts"]["snapshots"] == 1
    assert summary["counts"]["citations"] == 1

    checked = tool("warcio", "check", "-v", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "digest pass" in checked.stdout
    assert "fail" not in checked.stdout
    indexed = tool(
        "warcio", "index", "-f", "warc-type,warc-target-uri,warc-payload-digest", str(out)
    )
    assert indexed.returncode == 0, indexed.stderr
    lines = [json.loads(line) for line in indexed.stdout.splitlines()]
    assert [line["warc-type"] for line in lines] == [
        "warcinfo", "request", "response", "request", "response", "metadata", "conversion",
        "resource",  # the headers blob, byte for byte
        "resource",  # the attestations: manifests, tokens, inclusion proofs
    ]  # fmt: skip
    head = record["provenance"]["headersBlob"]["hash"]
    assert lines[-2]["warc-target-uri"] == "urn:snap:headers:" + head
    assert lines[-2]["warc-payload-digest"] == head
    assert lines[-1]["warc-target-uri"].startswith("urn:snap:attestations:sha256:")

    records = records_of(out)
    by_type = {headers["WARC-Type"]: (headers, body, http) for headers, body, http in records}
    response, body, http = by_type["response"]  # the last response: the final hop
    assert response["WARC-Target-URI"] == http_server.url("/page")
    assert response["WARC-Payload-Digest"] == snapshot_id
    assert "sha256:" + hashlib.sha256(body).hexdigest() == snapshot_id
    assert body == PAGE
    assert response["WARC-Date"] == record["fetchedAt"]
    assert response["WARC-IP-Address"] == "127.0.0.1"
    # the head as captured, decoded body declared consistently
    assert http.protocol == "HTTP/1.1"
    assert http.get_statuscode() == "200"
    names = [name for name, _ in http.headers]
    assert http.get_header("X-Archive-Orig-Content-Encoding") == "gzip"
    assert http.get_header("X-Archive-Orig-Transfer-Encoding") == "chunked"
    assert "Content-Encoding" not in names
    assert "Transfer-Encoding" not in names
    assert http.get_header("Content-Length") == str(len(PAGE))
    cookies = [value for name, value in http.headers if name.lower() == "set-cookie"]
    assert cookies == ["a=1", "b=2"]
    assert names.index("X-Served-By") < names.index("X-Archive-Orig-Transfer-Encoding")

    requests = [(h, http) for h, _, http in records if h["WARC-Type"] == "request"]
    final_request, request_head = requests[-1]
    assert final_request["WARC-Concurrent-To"] == response["WARC-Record-ID"]
    assert request_head.protocol == "GET"
    assert request_head.statusline == "/page HTTP/1.1"
    assert request_head.get_header("Accept-Encoding") == "gzip, deflate"
    redirect = next(h for h, _, http in records if h["WARC-Type"] == "response")
    assert redirect["WARC-Target-URI"] == http_server.url("/old")

    metadata, fields, _ = by_type["metadata"]
    assert metadata["Content-Type"] == "application/warc-fields"
    text = fields.decode("utf-8")
    assert f"snap-snapshot-id: {snapshot_id}" in text
    assert f"redirect: 301 {http_server.url('/old')} -> {http_server.url('/page')}" in text
    assert "user-agent: snap/" in text
    assert "ip-address: 127.0.0.1" in text

    conversion, converted, _ = by_type["conversion"]
    assert conversion["WARC-Target-URI"] == "urn:snap:text:" + record["hashes"]["text"]
    assert conversion["WARC-Refers-To"] == response["WARC-Record-ID"]
    assert QUOTE in converted.decode("utf-8")


def test_second_capture_of_the_same_bytes_is_a_revisit(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    code, again = run_json(backend, "fetch", http_server.url("/old"))
    assert code == 0
    assert again["snapshotId"] == record["snapshotId"]
    out = tmp_path / "all.warc.gz"
    code, summary = run_json(
        backend, "export", "--format", "warc", "-o", str(out), "--url", http_server.url("/old")
    )
    assert code == 0, summary
    assert summary["counts"]["captures"] == 2
    assert tool("warcio", "check", str(out)).returncode == 0
    records = records_of(out)
    revisits = [h for h, _, _ in records if h["WARC-Type"] == "revisit"]
    assert len(revisits) == 1
    assert revisits[0]["WARC-Payload-Digest"] == record["snapshotId"]
    assert [h["WARC-Type"] for h, _, _ in records].count("conversion") == 1


def test_local_file_is_a_resource_record(backend: Backend, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(PAGE)
    code, record = run_json(backend, "fetch", str(page))
    assert code == 0, record
    assert "headersBlob" not in record["provenance"]
    out = tmp_path / "local.warc"
    code, summary = run_json(
        backend, "export", "--format", "warc", "-o", str(out), "--snapshot", record["snapshotId"]
    )
    assert code == 0, summary
    assert tool("warcio", "check", str(out)).returncode == 0
    records = records_of(out)
    types = [h["WARC-Type"] for h, _, _ in records]
    assert types == ["warcinfo", "resource", "metadata", "conversion", "resource"]
    resource, body, http = records[1]
    assert http is None
    assert body == PAGE
    assert resource["WARC-Target-URI"] == page.resolve().as_uri()
    assert resource["WARC-Payload-Digest"] == record["snapshotId"]


def test_damaged_blob_is_refused_and_nothing_is_written(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    backend.corrupt("raw", record["hashes"]["raw"])
    out = tmp_path / "damaged.warc.gz"
    done = backend.snap("export", "--format", "warc", "-o", str(out), "--citation", "c-edge")
    assert done.returncode == 1, done.stderr
    assert "integrity failure" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".damaged")]


def test_output_is_never_overwritten_without_force(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    capture_and_cite(backend, http_server, tmp_path)
    out = tmp_path / "kept.warc.gz"
    out.write_bytes(b"precious")
    args = ["export", "--format", "warc", "-o", str(out), "--citation", "c-edge"]
    done = backend.snap(*args)
    assert done.returncode == 2
    assert "--force" in done.stderr
    assert out.read_bytes() == b"precious"
    assert backend.snap(*args, "--force").returncode == 0
    assert tool("warcio", "check", str(out)).returncode == 0


def test_selection_errors_are_one_line(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    out = str(tmp_path / "x.warc.gz")
    cases = [
        ((), 2, "exactly one"),
        (("--citation", "c-edge", "--snapshot", record["snapshotId"]), 2, "exactly one"),
        (("--citation", "c-nope"), 1, "no citation"),
        (("--url", "http://127.0.0.1:9/never"), 1, "no stored capture"),
    ]
    for selection, code, words in cases:
        done = backend.snap("export", "--format", "warc", "-o", out, *selection)
        assert done.returncode == code, (selection, done.stderr)
        assert words in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert not Path(out).exists()
    page = tmp_path / "page.html"
    done = backend.snap("export", "--format", "html", "-o", str(page), "--citation", "c-edge")
    assert done.returncode == 0, done.stderr
    assert page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


def test_answer_file_selects_everything_it_cites(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    answer = tmp_path / "answer.json"
    answer.write_text(
        json.dumps(
            {
                "answerId": "a-1",
                "claims": [
                    {"text": "A tenth.", "url": http_server.url("/old"), "quote": QUOTE},
                    {"text": "Never seen.", "url": "http://127.0.0.1:9/none", "quote": "x y"},
                ],
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "answer.warc.gz"
    code, summary = run_json(backend, "export", "--format", "warc", "-o", str(out), str(answer))
    assert code == 0, summary  # never checked: the snapshot of the URL it cites still comes
    assert summary["snapshotIds"] == [record["snapshotId"]]
    assert summary["citationIds"] == []
    assert len(summary["notRecorded"]) == 2  # both claims: neither was ever checked
    assert "claims[1]" in summary["notRecorded"][1]
    text = backend.snap("export", "--format", "warc", "-o", str(out), "--force", str(answer))
    assert "never checked): claims[0], claims[1]" in text.stdout

    assert backend.snap("verify", str(answer)).returncode == 1  # the second claim fails
    code, summary = run_json(
        backend, "export", "--format", "warc", "-o", str(out), "--force", str(answer)
    )
    assert code == 0, summary
    assert summary["snapshotIds"] == [record["snapshotId"]]
    assert len(summary["citationIds"]) == 2
    assert summary["notRecorded"] == []
    assert summary["counts"]["verifications"] == 2
