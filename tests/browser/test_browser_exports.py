"""What a browser capture exports: the WARC holds every subresource (pywb replays them from
the archive alone), the screenshot, DOM, browser document and rendered text; the evidence page
shows the screenshot beside the marked quote; ``snap show --screenshot`` writes the PNG."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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
