"""The headers blob is evidence like the others: fsck re-hashes it, and an export refuses it
damaged."""

from __future__ import annotations

import json
from pathlib import Path

import sqlalchemy as sa

from tests.exports.support import capture_and_cite, records_of, run_json, tool
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend


def test_fsck_checks_the_headers_blob(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    code, report = run_json(backend, "fsck")
    assert code == 0, report
    assert report["blobsChecked"] == 4  # raw, text, headers and the manifest
    assert report["states"]["intact"] == 4
    assert report["orphans"] == []
    if backend.name != "embedded":
        return  # a locked S3 version cannot be damaged in place (see Backend.corrupt)
    digest = record["provenance"]["headersBlob"]["hash"]
    code, audited = run_json(backend, "audit", "c-edge")
    assert code == 0, audited
    heads = [b for b in audited["snapshot"]["blobs"] if b["kind"] == "headers"]
    assert [(b["digest"], b["intact"]) for b in heads] == [(digest, True)]
    backend.corrupt("headers", digest)
    code, audited = run_json(backend, "audit", "c-edge")
    assert code == 1  # the audit re-hashes the exchanges too
    assert [b["intact"] for b in audited["snapshot"]["blobs"] if b["kind"] == "headers"] == [False]
    code, report = run_json(backend, "fsck")
    assert code == 1
    assert [p["kind"] for p in report["problems"]] == ["headers"]
    out = tmp_path / "refused.warc.gz"
    done = backend.snap("export", "--format", "warc", "-o", str(out), "--citation", "c-edge")
    assert done.returncode == 1
    assert f"headers/sha256/{digest[7:9]}/{digest[7:]}" in done.stderr
    assert not out.exists()


def test_a_capture_recorded_before_heads_were_kept_still_exports(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    with backend.sql() as connection:  # as an older snap recorded it: no headersBlob
        rows = connection.execute(sa.text("SELECT id, provenance FROM captures")).all()
        for capture_id, provenance in rows:
            stored = provenance if isinstance(provenance, dict) else json.loads(provenance)
            stored.pop("headersBlob", None)
            connection.execute(
                sa.text("UPDATE captures SET provenance = :p WHERE id = :i"),
                {"p": json.dumps(stored), "i": capture_id},
            )
    out = tmp_path / "old.warc.gz"
    code, summary = run_json(
        backend, "export", "--format", "warc", "-o", str(out), "--citation", "c-edge"
    )
    assert code == 0, summary
    assert tool("warcio", "check", str(out)).returncode == 0
    records = records_of(out)
    # the provenance no longer names the headers blob, but the capture's manifest still does:
    # it is written all the same (the last resource before the attestations), so the manifest
    # can be checked from the export
    assert [h["WARC-Type"] for h, _, _ in records] == [
        "warcinfo", "response", "metadata", "conversion", "resource", "resource",
    ]  # fmt: skip
    digest = record["provenance"]["headersBlob"]["hash"]
    assert records[4][0]["WARC-Target-URI"] == "urn:snap:headers:" + digest
    response, body, http = records[1]
    assert response["WARC-Payload-Digest"] == record["snapshotId"]
    assert http.get_statuscode() == "200"
    assert http.get_header("Content-Type") == "text/html; charset=utf-8"
    assert http.get_header("Content-Length") == str(len(body))


def test_show_headers_prints_every_exchange_from_the_blob(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    """``snap show --headers`` reads the headers blob (re-hashed): each hop's request as sent
    and response as received, in order; damaged, it is refused like any blob."""
    record = capture_and_cite(backend, http_server, tmp_path)
    code, shown = run_json(backend, "show", record["snapshotId"], "--headers")
    assert code == 0, shown
    exchanges = shown["exchanges"]
    assert [e["status"] for e in exchanges] == [301, 200]  # /old redirects to /page
    assert exchanges[0]["request"]["line"].startswith("GET /old HTTP/1.1")
    final = {name.lower(): value for name, value in exchanges[-1]["response"]["headers"]}
    assert final["content-encoding"] == "gzip"
    assert final["transfer-encoding"] == "chunked"
    text = backend.snap("show", record["snapshotId"], "--headers")
    assert text.returncode == 0
    assert "HTTP/1.1 301" in text.stdout or "HTTP/1.0 301" in text.stdout
    if backend.name != "embedded":
        return
    backend.corrupt("headers", record["provenance"]["headersBlob"]["hash"])
    damaged = backend.snap("show", record["snapshotId"], "--headers")
    assert damaged.returncode == 1
    assert len(damaged.stderr.strip().splitlines()) == 1
