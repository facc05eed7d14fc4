"""What a browser capture exports: the WARC holds every subresource (pywb replays them from
the archive alone), the screenshot, DOM, browser document and rendered text; the evidence page
shows the screenshot beside the marked quote; ``snap show --screenshot`` writes the PNG."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from records.capture import capture_source
from snapshotter.capture import SnapshotRecord
from tests.browser.conftest import OpenWorkspace
from tests.browser.test_browser_capture import (
    PAGE,
    PIXEL,
    SCRIPTED,
    STYLE,
    run_snap,
    serve_fidelity_page,
    sha256,
)
from tests.exports.test_headers_blob_exported import (
    exported,
    manifest_blobs,
    unchecked_blobs,
    written,
)
from tests.http_fixtures import LoopbackServer


def captured_and_cited(
    server: LoopbackServer, open_workspace: OpenWorkspace, tmp_path: Path
) -> tuple[SnapshotRecord, Path, str]:
    url = serve_fidelity_page(server)
    workspace = open_workspace()
    record = capture_source(workspace, url, method="browser")
    home = Path(workspace.settings.home)
    citation = tmp_path / "citation.json"
    quote = "inserted by a script after the page loaded"
    citation.write_text(json.dumps({"citationId": "c-seen", "url": url, "quote": quote}))
    verified = run_snap(home, "verify", str(citation))
    assert verified.exit_code == 0, verified.output
    return record, home, url


def records_of(archive: Path) -> list[Any]:
    with archive.open("rb") as stream:
        return [
            (
                r.rec_type,
                r.rec_headers.get_header("WARC-Target-URI"),
                r.rec_headers.get_header("WARC-Payload-Digest"),
                r.content_stream().read(),
            )
            for r in ArchiveIterator(stream)
        ]


def test_the_warc_holds_every_subresource_and_the_browser_blobs(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, tmp_path: Path
) -> None:
    record, home, url = captured_and_cited(http_server, open_workspace, tmp_path)
    archive = tmp_path / "evidence.warc.gz"
    exported = run_snap(
        home, "export", "--format", "warc", "-o", str(archive), "--citation", "c-seen"
    )
    assert exported.exit_code == 0, exported.output
    written = records_of(archive)
    responses = {uri: (digest, body) for kind, uri, digest, body in written if kind == "response"}
    assert responses[url] == (record.snapshot_id, PAGE)
    for path, body in (("/style.css", STYLE), ("/one.png", PIXEL), ("/two.png?x=1", PIXEL + b"\0")):
        assert responses[http_server.url(path)] == (sha256(body), body)
    resources = {uri.split(":")[2]: body for kind, uri, _, body in written if kind == "resource"}
    assert resources["screenshot"].startswith(b"\x89PNG")
    assert SCRIPTED.encode() in resources["dom"]
    assert json.loads(resources["browser"])["format"] == "snap-browser-capture/1"
    conversions = [body.decode() for kind, _, _, body in written if kind == "conversion"]
    assert any(SCRIPTED in text for text in conversions)  # the rendered text
    check = subprocess.run(
        [str(Path(sys.executable).with_name("warcio")), "check", str(archive)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_pywb_replays_the_subresources_from_the_archive_alone(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, tmp_path: Path
) -> None:
    from tests.exports.test_replay import NO_PROXY, add_collection, timestamp, wayback

    record, home, url = captured_and_cited(http_server, open_workspace, tmp_path)
    archive = tmp_path / "evidence.wacz"
    exported = run_snap(
        home, "export", "--format", "wacz", "-o", str(archive), "--citation", "c-seen"
    )
    assert exported.exit_code == 0, exported.output
    replay = tmp_path / "pywb"
    replay.mkdir()
    add_collection(replay, "case", archive)
    http_server.requests.clear()
    ts = timestamp(record.fetched_at)
    with wayback(replay) as base:
        for path, body in (("/style.css", STYLE), ("/one.png", PIXEL)):
            with NO_PROXY.open(f"{base}/case/{ts}id_/{http_server.url(path)}", timeout=30) as got:
                assert got.read() == body
        with NO_PROXY.open(f"{base}/case/{ts}id_/{url}", timeout=30) as got:
            assert "sha256:" + hashlib.sha256(got.read()).hexdigest() == record.snapshot_id
    assert http_server.requests == []  # replayed from the archive, not from the live server


def test_the_evidence_page_shows_the_screenshot_beside_the_marked_quote(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, tmp_path: Path
) -> None:
    record, home, _ = captured_and_cited(http_server, open_workspace, tmp_path)
    page = tmp_path / "evidence.html"
    exported = run_snap(home, "export", "--format", "html", "-o", str(page), "--citation", "c-seen")
    assert exported.exit_code == 0, exported.output
    html = page.read_text()
    assert '<img src="data:image/png;base64,' in html
    assert "img-src data:" in html
    assert "img-src 'none'" not in html
    screenshot = record.provenance["browser"]["blobs"][1]
    assert screenshot["kind"] == "screenshot"
    assert screenshot["hash"] in html
    assert html.index("<mark") < html.index('<figure class="screenshot"')


def test_snap_show_screenshot_writes_the_png(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, tmp_path: Path
) -> None:
    record, home, _ = captured_and_cited(http_server, open_workspace, tmp_path)
    out = tmp_path / "shot.png"
    shown = run_snap(home, "show", "--screenshot", record.snapshot_id, "-o", str(out), "--json")
    assert shown.exit_code == 0, shown.output
    png = out.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert (
        "sha256:" + json.loads(shown.output)["sha256"]
        == record.provenance["browser"]["blobs"][1]["hash"]
    )
    http_server.route("/plain", body=b"<p>Only over HTTP.</p>")
    plain = run_snap(home, "fetch", "--json", http_server.url("/plain"))
    other = json.loads(plain.output)["snapshotId"]
    missing = run_snap(home, "show", "--screenshot", other, "-o", str(tmp_path / "none.png"))
    assert missing.exit_code == 1
    assert "no browser capture" in missing.output


# --- a page a script rewrites, captured over HTTP then in the browser, cited both ways ---------

SOURCE_ONLY = "Raw sentence yankee is in the source only."
DRAWN = "Replaced sentence zulu is what readers saw."
SWAPPED = f"""<!doctype html><html><head><meta charset="utf-8"><title>Swapped</title></head>
<body><main><h1>Swapped by a script</h1>
<p id="swap">{SOURCE_ONLY}</p>
<p>Static sentence alpha is in both texts.</p>
<script>document.getElementById("swap").textContent = {json.dumps(DRAWN)};</script>
</main></body></html>""".encode()


@dataclass(frozen=True)
class TwoTexts:
    """The swapped page captured over HTTP, then in the browser (the same bytes: one
    snapshot, two captures, two extractions), and two citations checked: ``c-drawn`` by URL
    (the rendered text, newest), ``c-source`` pinned to the source's text by its hash."""

    home: Path
    url: str
    http: SnapshotRecord
    browser: SnapshotRecord
    answer: Path

    @property
    def source_text(self) -> str:
        return str(self.http.text_hash)

    @property
    def rendered_text(self) -> str:
        assert self.browser.rendered is not None
        return self.browser.rendered.text_hash


@pytest.fixture
def two_texts(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, tmp_path: Path
) -> TwoTexts:
    http_server.route("/swapped", body=SWAPPED)
    url = http_server.url("/swapped")
    workspace = open_workspace()
    http = capture_source(workspace, url)
    browser = capture_source(workspace, url, method="browser")
    assert http.snapshot_id == browser.snapshot_id
    assert browser.rendered is not None
    assert browser.rendered.text_hash != http.text_hash
    home = Path(workspace.settings.home)
    answer = tmp_path / "answer.json"
    answer.write_text(
        json.dumps(
            [
                {"citationId": "c-drawn", "url": url, "quote": DRAWN},
                {
                    "citationId": "c-source",
                    "url": url,
                    "snapshotId": http.snapshot_id,
                    "hashes": {"text": http.text_hash},
                    "selector": {"quote": {"exact": SOURCE_ONLY}},
                },
            ]
        )
    )
    verified = run_snap(home, "verify", "--json", str(answer))
    assert verified.exit_code == 0, verified.output
    results = {r["citationId"]: r for r in json.loads(verified.output)["results"]}
    assert {k: r["status"] for k, r in results.items()} == {
        "c-drawn": "quote_found",
        "c-source": "quote_found",
    }
    return TwoTexts(home, url, http, browser, answer)


def capture_id_of(home: Path, record: SnapshotRecord) -> int:
    """The id of the capture ``record`` was recorded as (the one made by its method)."""
    audited = run_snap(home, "audit", "--json", "--snapshot", record.snapshot_id)
    captures = json.loads(audited.output)["captures"]
    [found] = [c["captureId"] for c in captures if c["method"] == record.method]
    return int(found)


@pytest.mark.parametrize("fmt", ["warc", "wacz"])
def test_the_export_holds_the_capture_the_checks_read_and_every_blob_its_manifest_names(
    two_texts: TwoTexts, tmp_path: Path, fmt: str
) -> None:
    """The auditor's check (``unchecked_blobs``: every blob each exported manifest names is a
    record's payload, hashed from the export alone) on a browser capture whose manifest names
    two texts: the source's, which the pinned citation was checked against, and the rendered
    one. The capture exported is the one both checks read, not the first HTTP capture."""
    out = tmp_path / f"evidence.{'wacz' if fmt == 'wacz' else 'warc.gz'}"
    done = run_snap(
        two_texts.home, "export", "--json", "--format", fmt, "-o", str(out), str(two_texts.answer)
    )
    assert done.exit_code == 0, done.output
    warc, attestations = exported(fmt, out)
    browser_capture = capture_id_of(two_texts.home, two_texts.browser)
    assert [line["captureId"] for line in attestations if "captureId" in line] == [browser_capture]
    [document] = [json.loads(line["manifest"]["document"]) for line in attestations[:1]]
    assert document["method"] == "browser"
    texts = [blob["sha256"] for blob in document["blobs"] if blob["kind"] == "text"]
    assert sorted(texts) == sorted([two_texts.source_text, two_texts.rendered_text])
    kinds = {blob["kind"] for blob in manifest_blobs(attestations)}
    assert {"raw", "text", "headers", "browser", "screenshot", "dom"} <= kinds
    assert unchecked_blobs(warc, attestations) == []

    records = written(warc)
    conversions = {r.uri: r for r in records if r.headers["WARC-Type"] == "conversion"}
    for digest, words in ((two_texts.source_text, SOURCE_ONLY), (two_texts.rendered_text, DRAWN)):
        text = conversions[f"urn:snap:text:{digest}"]
        assert text.sha256 == digest
        assert words in text.payload.decode()
    [metadata] = [r for r in records if r.headers["WARC-Type"] == "metadata"]
    extractions = sorted(  # snap-extraction: ID SOURCE DIGEST EXTRACTOR
        tuple(line.split(" ")[2:4])
        for line in metadata.payload.decode().splitlines()
        if line.startswith("snap-extraction:")
    )
    assert extractions == [("raw", two_texts.source_text), ("rendered", two_texts.rendered_text)]

    page = tmp_path / "evidence.html"
    shown = run_snap(
        two_texts.home, "export", "--format", "html", "-o", str(page), str(two_texts.answer)
    )
    assert shown.exit_code == 0, shown.output
    html = page.read_text()
    blocks = re.findall(r'<script type="application/json" id="[^"]+">(.*?)</script>', html, re.S)
    on_page = {
        line["captureId"] for block in blocks for line in json.loads(block) if "captureId" in line
    }
    assert on_page == {browser_capture}  # the page and the archives show the same capture
    assert f"Capture shown</dt><dd>capture {browser_capture}, browser" in html


def test_the_page_says_which_text_was_checked_and_that_the_screenshot_differs_in_kind(
    two_texts: TwoTexts, tmp_path: Path
) -> None:
    drawn, source = (
        citation_article(two_texts, tmp_path, citation) for citation in ("c-drawn", "c-source")
    )
    browser_capture = capture_id_of(two_texts.home, two_texts.browser)
    assert "The page as the browser capture rendered it" not in drawn + source

    assert 'class="warn"' not in drawn
    assert "<h3>In the text checked: the rendered text (extraction" in drawn
    assert "The quote was checked against the text the browser rendered in this capture" in drawn

    assert "<h3>In the text checked: the source&#x27;s text (extraction" in source
    [warning] = re.findall(r'<p class="warn"[^>]*>(.*?)</p>', source, re.S)
    assert "Checked against the source, not against what the browser drew." in warning
    assert "the text the browser rendered" in warning
    assert "may never have been shown to a reader" in warning
    assert source.index('class="warn"') < source.index("<mark>") < source.index("<img")
    caption = re.search(r"<figcaption>(.*?)</figcaption>", source, re.S)
    assert caption is not None
    assert f"browser capture {browser_capture}" in caption.group(1)
    assert "not against this rendering" in caption.group(1)
    assert "Checked against: the text extracted from the source as captured" in source
    assert f"read through browser capture {browser_capture}" in source

    audited = run_snap(two_texts.home, "audit", "c-source")
    assert audited.exit_code == 0, audited.output
    lines = audited.output.splitlines()
    [check] = [line for line in lines if "quote found at" in line]
    assert f"(source text), through capture {browser_capture}" in check
    assert any(f"browser  capture {browser_capture}" in line for line in lines)
    assert any(line.strip().startswith("extraction") and "rendered text" in line for line in lines)


def citation_article(two_texts: TwoTexts, tmp_path: Path, citation_id: str) -> str:
    page = tmp_path / f"{citation_id}.html"
    done = run_snap(
        two_texts.home, "export", "--format", "html", "-o", str(page), "--citation", citation_id
    )
    assert done.exit_code == 0, done.output
    return page.read_text()
