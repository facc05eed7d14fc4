"""``snap export --format wacz``: ``wacz validate`` passes, and the package carries the pages,
the index and the citations as W3C annotations pointing at the records."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

from tests.exports.support import capture_and_cite, records_of, run_json, tool
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend


def test_wacz_validates_and_carries_pages_index_and_annotations(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    out = tmp_path / "evidence.wacz"
    code, summary = run_json(
        backend, "export", "--format", "wacz", "-o", str(out), "--citation", "c-edge"
    )
    assert code == 0, summary
    assert summary["counts"]["pages"] == 1
    assert summary["counts"]["annotations"] == 2

    validated = tool("wacz", "validate", "-f", str(out))
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "Validation succeeded" in validated.stdout

    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        files = {name: archive.read(name) for name in names}
        warc_info = archive.getinfo("archive/data.warc.gz")
    assert warc_info.compress_type == zipfile.ZIP_STORED  # records readable by offset
    assert set(names) == {
        "archive/data.warc.gz",
        "indexes/index.cdx",
        "pages/pages.jsonl",
        "annotations/annotations.jsonl",
        "attestations/attestations.jsonl",  # manifests, tokens and log proofs (records.attest)
        "datapackage.json",
        "datapackage-digest.json",
    }
    package = json.loads(files["datapackage.json"])
    assert package["wacz_version"] == "1.1.1"
    for resource in package["resources"]:
        data = files[resource["path"]]
        assert resource["hash"] == "sha256:" + hashlib.sha256(data).hexdigest()
        assert resource["bytes"] == len(data)
    digest = json.loads(files["datapackage-digest.json"])
    assert digest["hash"] == "sha256:" + hashlib.sha256(files["datapackage.json"]).hexdigest()

    pages = [json.loads(line) for line in files["pages/pages.jsonl"].splitlines()]
    assert pages[0]["format"] == "json-pages-1.0"
    assert len(pages) == 2
    assert pages[1]["url"] == http_server.url("/page")
    assert pages[1]["title"] == "Caching at the edge"
    assert pages[1]["ts"] == record["fetchedAt"]

    index = [line.split(" ", 2) for line in files["indexes/index.cdx"].decode().splitlines()]
    entries = [json.loads(fields) for _, _, fields in index]
    final = [e for e in entries if e["url"] == http_server.url("/page")]
    assert [e["digest"] for e in final] == [record["snapshotId"]]
    assert all(e.get("mime") != "application/warc-fields" for e in entries)

    warc = tmp_path / "inner.warc.gz"
    warc.write_bytes(files["archive/data.warc.gz"])
    response = next(
        h
        for h, _, _ in records_of(warc)
        if h["WARC-Type"] == "response" and h["WARC-Payload-Digest"] == record["snapshotId"]
    )
    notes = [json.loads(line) for line in io.BytesIO(files["annotations/annotations.jsonl"])]
    quoting, assessing = notes
    assert quoting["motivation"] == "quoting"
    assert quoting["id"].endswith("c-edge")
    assert quoting["body"]["value"] == "At 90% the origin sees a tenth of the requests."
    state = quoting["target"]["state"]
    assert state["type"] == "TimeState"
    assert state["sourceDate"] == record["fetchedAt"]
    assert "<" + state["cached"] + ">" == response["WARC-Record-ID"]
    selectors = {s["type"]: s for s in quoting["target"]["selector"]}
    assert selectors["TextQuoteSelector"]["exact"] == "the origin serves only 1 request in 10"
    assert assessing["motivation"] == "assessing"
    assert assessing["body"][0]["value"] == "quote_found"
    assert assessing["target"][0] == quoting["id"]
    assert assessing["target"][1]["state"]["cached"] == state["cached"]
