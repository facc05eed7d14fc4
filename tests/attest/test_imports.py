"""A WARC written by another tool imports as "import" everywhere it is shown: its manifest,
snap audit, snap show and the evidence page name the archive and say the archive's date,
address and software are what it states, never a capture by snap."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from snap.cli import cli
from tests.imports.warcs import PAGE, QUOTE, SOFTWARE, WHEN, CrawlerWarc


def test_a_crawler_warc_is_shown_as_imported(tmp_path: Path) -> None:
    env = {"SNAP_HOME": str(tmp_path / "home")}
    warc = CrawlerWarc(tmp_path / "crawl.warc.gz")
    warc.request("https://example.test/cdn")
    warc.response("https://example.test/cdn", PAGE)
    warc.write()
    runner = CliRunner()
    imported = runner.invoke(cli, ["import", "--json", str(tmp_path / "crawl.warc.gz")], env=env)
    assert imported.exit_code == 0, imported.output
    audited = runner.invoke(cli, ["audit", "--url", "https://example.test/cdn", "--json"], env=env)
    report = json.loads(audited.output)
    capture = report["captures"][0]
    snapshot_id = capture["snapshotId"]
    attested = json.loads(runner.invoke(cli, ["attest", snapshot_id, "--json"], env=env).output)
    manifest = json.loads(attested["captures"][0]["manifest"]["document"])
    assert manifest["method"] == "import"
    assert manifest["capturedAt"] is None
    assert manifest["import"]["archive"]["fileName"] == "crawl.warc.gz"
    assert manifest["import"]["archive"]["sha256"].startswith("sha256:")
    assert manifest["import"]["archiveClaims"]["software"] == SOFTWARE
    assert manifest["import"]["archiveClaims"]["ipAddress"] == "192.0.2.7"
    assert "peer" not in manifest

    text = runner.invoke(cli, ["audit", "--url", "https://example.test/cdn"], env=env).output
    assert "imported from crawl.warc.gz" in text
    assert f'captured by "{SOFTWARE}" at the time that archive states' in text
    shown = runner.invoke(cli, ["show", snapshot_id, "--headers"], env=env).output
    assert shown.startswith("# imported from crawl.warc.gz")
    assert "not captured by snap" in shown

    citation = tmp_path / "citation.json"
    citation.write_text(json.dumps({"url": "https://example.test/cdn", "quote": QUOTE}))
    assert runner.invoke(cli, ["verify", str(citation)], env=env).exit_code == 0
    page = tmp_path / "evidence.html"
    done = runner.invoke(
        cli, ["export", "--format", "html", "-o", str(page), str(citation)], env=env
    )
    assert done.exit_code == 0, done.output
    html = page.read_text()
    assert "Server address, as the archive states" in html
    assert ">Server address<" not in html
    assert "Captured by, as the archive states" in html
    assert "not captured by snap" in html
    assert WHEN[:10] in html
    assert "Manifest signature" in html


def test_a_reexport_of_an_import_says_where_it_came_from(tmp_path: Path) -> None:
    import gzip

    env = {"SNAP_HOME": str(tmp_path / "home")}
    warc = CrawlerWarc(tmp_path / "crawl.warc.gz")
    record_id = warc.response("https://example.test/cdn", PAGE)
    warc.write()
    runner = CliRunner()
    assert runner.invoke(cli, ["import", str(tmp_path / "crawl.warc.gz")], env=env).exit_code == 0
    out = tmp_path / "again.warc.gz"
    done = runner.invoke(
        cli,
        ["export", "--format", "warc", "-o", str(out), "--url", "https://example.test/cdn"],
        env=env,
    )
    assert done.exit_code == 0, done.output
    text = gzip.decompress(out.read_bytes()).decode("utf-8", "replace")
    assert "capture-method: import" in text
    assert "imported-from-file: crawl.warc.gz" in text
    assert f"imported-from-record-id: {record_id}" in text
    assert "archive-claimed-ip-address: 192.0.2.7" in text
    assert "WARC-IP-Address: 192.0.2.7" not in text
    assert f"archive-claimed-software: {SOFTWARE}" in text
