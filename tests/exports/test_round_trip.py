"""Export → import into an empty snap home: the same snapshot ids, the citation verifies again
there, and what was imported exports again and passes warcio."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.exports.support import QUOTE, records_of, run_json, serve_page, tool
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend


@pytest.mark.parametrize(
    ("fmt", "cited"), [("warc", "/page"), ("wacz", "/page"), ("warc", "/old"), ("wacz", "/old")]
)
def test_export_then_import_gives_the_same_snapshots(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path, fmt: str, cited: str
) -> None:
    """``/old`` redirects to ``/page``: a citation of the redirecting URL verifies on the other
    side too, against the page it led to (not the redirect's own body)."""
    serve_page(http_server)
    url = http_server.url(cited)
    code, record = run_json(backend, "fetch", url)
    assert code == 0, record
    citation = tmp_path / "citation.json"
    citation.write_text(json.dumps({"citationId": "c-page", "url": url, "quote": QUOTE}))
    assert backend.snap("verify", str(citation)).returncode == 0
    out = tmp_path / ("evidence.wacz" if fmt == "wacz" else "evidence.warc.gz")
    code, summary = run_json(
        backend, "export", "--format", fmt, "-o", str(out), "--citation", "c-page"
    )
    assert code == 0, summary
    http_server.close()  # the other side has only the archive

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SNAP_", "AWS_"))}
    other = Backend("embedded", env | {"SNAP_HOME": str(tmp_path / "other")})
    code, imported = run_json(other, "import", str(out))
    assert code == 0, imported
    code, audited = run_json(other, "audit", "--snapshot", record["snapshotId"])
    assert code == 0, audited
    assert audited["snapshot"]["snapshotId"] == record["snapshotId"]
    code, report = run_json(other, "verify", str(citation))
    assert code == 0, report
    assert report["results"][0]["snapshotId"] == record["snapshotId"]

    again = tmp_path / "again.warc.gz"
    code, summary = run_json(other, "export", "--format", "warc", "-o", str(again), "--url", url)
    assert code == 0, summary
    assert tool("warcio", "check", str(again)).returncode == 0
    response = next(h for h, _, _ in records_of(again) if h["WARC-Type"] == "response")
    assert response["WARC-Payload-Digest"] == record["snapshotId"]
