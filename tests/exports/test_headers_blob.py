"""The headers blob is evidence like the others: fsck re-hashes it, and an export refuses it
damaged."""

from __future__ import annotations

from pathlib import Path

from tests.exports.support import capture_and_cite, run_json
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend


def test_fsck_checks_the_headers_blob(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    code, report = run_json(backend, "fsck")
    assert code == 0, report
    assert report["blobsChecked"] == 3  # raw, text and headers
    assert report["states"]["intact"] == 3
    assert report["orphans"] == []
    if backend.name != "embedded":
        return  # a locked S3 version cannot be damaged in place (see Backend.corrupt)
    digest = record["provenance"]["headersBlob"]["hash"]
    backend.corrupt("headers", digest)
    code, report = run_json(backend, "fsck")
    assert code == 1
    assert [p["kind"] for p in report["problems"]] == ["headers"]
    out = tmp_path / "refused.warc.gz"
    done = backend.snap("export", "--format", "warc", "-o", str(out), "--citation", "c-edge")
    assert done.returncode == 1
    assert f"headers/sha256/{digest[7:9]}/{digest[7:]}" in done.stderr
    assert not out.exists()
