"""Browser captures of pages on a loopback server, in Debian's Chromium.

What a reader saw is captured (images, a stylesheet, a paragraph a script inserts; not an
element a stylesheet hides), and every request of the page goes through snap's fetcher: a
trap socket that the page names in every way a page can (an image, preconnect, prefetch, a
WebSocket, a POST, a beacon, an iframe) sees no connection at all, because snap's guard
refuses its port and nothing else leaves the browser.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from records.capture import capture_source
from records.fsck import fsck, plan_fsck
from records.models import Capture, Extraction, Verification
from snap.errors import AddressRefused, CaptureError, exit_code_of
from snapshotter.browser import BrowserFailed
from snapshotter.browser.chromium import NETWORK_FLAGS, chromium_flags
from snapshotter.browser.session import BrowserSession
from snapshotter.fetch import DEFAULT_USER_AGENT
from snapshotter.store import blob_key
from tests.browser.conftest import OpenWorkspace, home_env
from tests.http_fixtures import LoopbackServer

PIXEL = bytes.fromhex(  # a 1x1 PNG
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d6a4c70000000049454e44ae426082"
)
WIDE = PIXEL.replace(b"\x00\x00\x00\x01\x00\x00\x00\x01", b"\x00\x00\x00\x01\x00\x00\x00\x01")
STYLE = b".hidden-by-css { display: none } body { background: #fafafa }"
SCRIPTED = "This paragraph was inserted by a script after the page loaded."
PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><title>Fidelity</title>
<link rel="stylesheet" href="/style.css"></head>
<body><main><h1>What the reader saw</h1>
<p>A static paragraph with an image <img src="/one.png" alt=""> and another
<img src="/two.png?x=1" alt="">.</p>
<p class="hidden-by-css">Hidden only by the stylesheet.</p>
<script>
var p = document.createElement("p");
p.textContent = {json.dumps(SCRIPTED)};
document.querySelector("main").appendChild(p);
</script></main></body></html>""".encode()


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def serve_fidelity_page(server: LoopbackServer) -> str:
    server.route("/page", body=PAGE)
    server.route("/style.css", body=STYLE, content_type="text/css")
    server.route("/one.png", body=PIXEL, content_type="image/png")
    server.route("/two.png?x=1", body=PIXEL + b"\0", content_type="image/png")
    return server.url("/page")


def browser_document(workspace: Any, record: Any) -> dict[str, Any]:
    named = record.provenance["browser"]["document"]
    return dict(json.loads(workspace.store.get("browser", named["hash"])))


def test_chromium_is_started_with_its_network_cut_off(tmp_path: Path) -> None:
    flags = chromium_flags(tmp_path)
    assert flags[: len(NETWORK_FLAGS)] == list(NETWORK_FLAGS)
    assert "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" in flags
    assert "--proxy-server=http://127.0.0.1:9" in flags
    assert not [flag for flag in flags if flag.startswith("--proxy-bypass-list")]
    for flag in ("--disable-background-networking", "--disable-component-update", "--no-first-run"):
        assert flag in flags
    assert f"--user-data-dir={tmp_path}" in flags


def test_a_browser_capture_stores_every_subresource_the_screenshot_dom_and_rendered_text(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    url = serve_fidelity_page(http_server)
    workspace = open_workspace()
    record = capture_source(workspace, url, method="browser")

    assert record.method == "browser"
    assert record.snapshot_id == sha256(PAGE)  # the id is the main document's bytes, as ever
    document = browser_document(workspace, record)
    stored = {item["url"]: item for item in document["resources"]}
    for path, body in (("/style.css", STYLE), ("/one.png", PIXEL), ("/two.png?x=1", PIXEL + b"\0")):
        item = stored[http_server.url(path)]
        assert item["outcome"] == "stored"
        assert item["body"]["hash"] == sha256(body)
        assert workspace.store.get("resource", item["body"]["hash"]) == body
        assert item["exchanges"][-1]["response"]["status"] == 200
    # Every request the server saw came from snap's fetcher, never from the browser itself.
    assert {request.headers.get("user-agent") for request in http_server.requests} == {
        DEFAULT_USER_AGENT
    }
    assert sorted(http_server.paths()).count("/one.png") == 1

    rendered = workspace.store.get("text", record.rendered.text_hash)  # type: ignore[union-attr]
    text = rendered.decode()
    assert SCRIPTED in text
    assert "Hidden only by the stylesheet" not in text
    assert "What the reader saw" in text
    assert workspace.store.get("screenshot", document["screenshot"]["hash"]).startswith(
        b"\x89PNG\r\n\x1a\n"
    )
    assert SCRIPTED in workspace.store.get("dom", document["dom"]["hash"]).decode()
    assert document["browser"]["version"] in record.rendered.extractor  # type: ignore[union-attr]

    with workspace.db.reading() as session:
        extractions = session.query(Extraction).order_by(Extraction.id).all()
        capture = session.query(Capture).one()
        assert [e.source for e in extractions] == ["raw", "rendered"]
        assert extractions[1].extractor.startswith("snap-browser@2+chromium@")
        assert capture.method == "browser"

    kinds = {kind for kind, _, _ in _recorded(workspace)}
    assert {"raw", "text", "headers", "resource", "screenshot", "dom", "browser"} <= kinds


def _recorded(workspace: Any) -> list[tuple[str, str, str | None]]:
    return [(blob.kind, blob.digest, blob.version_id) for blob in plan_fsck(workspace).recorded]


def test_fsck_rehashes_a_browser_captures_blobs_and_finds_a_damaged_subresource(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, tmp_path: Path
) -> None:
    workspace = open_workspace()
    record = capture_source(workspace, serve_fidelity_page(http_server), method="browser")
    plan = plan_fsck(workspace)
    assert not plan.orphans
    assert fsck(workspace, plan).ok
    path = Path(workspace.settings.store_url) / blob_key("resource", sha256(STYLE))
    path.chmod(0o644)
    path.write_bytes(STYLE.replace(b"none", b"nope"))
    report = fsck(workspace, plan_fsck(workspace))
    assert not report.ok
    assert [p.blob.kind if p.blob else None for p in report.problems] == ["resource"]
    assert record.snapshot_id in {p.snapshot_id for p in report.problems}


def test_a_quote_from_a_paragraph_a_script_inserted_verifies_against_the_rendered_text(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, tmp_path: Path
) -> None:
    url = serve_fidelity_page(http_server)
    workspace = open_workspace()
    capture_source(workspace, url, method="browser")
    home = Path(workspace.settings.home)
    citation = tmp_path / "citation.json"
    citation.write_text(json.dumps({"url": url, "quote": "inserted by a script after the page"}))
    from snap.cli import cli

    result = CliRunner().invoke(cli, ["verify", "--json", str(citation)], env=home_env(home))
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    checked = report["results"][0]
    assert checked["status"] == "quote_found"
    with workspace.db.reading() as session:
        rendered = session.query(Extraction).filter(Extraction.source == "rendered").one()
        verification = session.query(Verification).one()
        assert verification.extraction_id == rendered.id  # the record says which text


class ConnectionTrap:
    """A loopback socket that counts every connection made to it and answers none."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.server.getsockname()[1])
        self.accepted = 0
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def trap() -> Iterator[ConnectionTrap]:
    opened = ConnectionTrap()
    yield opened
    opened.close()


def test_the_browser_opens_no_connection_of_its_own(
    http_server: LoopbackServer,
    open_workspace: OpenWorkspace,
    trap: ConnectionTrap,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The page names the trap every way it can; snap's guard refuses the trap's port (name
    resolution replaced in-process: loopback is allowed for the page's own server only)."""
    import snapshotter.fetch

    checked = snapshotter.fetch.resolve_checked

    def guard(host: str, port: int, **options: Any) -> str:
        if port == trap.port:
            raise AddressRefused(f"refused to connect to {host}:{port}: the test's trap")
        return checked(host, port, **options)

    monkeypatch.setattr(snapshotter.fetch, "resolve_checked", guard)
    at = f"127.0.0.1:{trap.port}"
    page = f"""<!doctype html><html><head>
<link rel="preconnect" href="http://{at}"><link rel="dns-prefetch" href="http://{at}">
<link rel="prefetch" href="http://{at}/prefetch"><link rel="stylesheet" href="http://{at}/s.css">
</head><body><p>The page still captures.</p><img src="http://{at}/pixel.png">
<iframe src="http://{at}/frame"></iframe>
<script>
try {{ new WebSocket("ws://{at}/socket"); }} catch (e) {{}}
fetch("http://{at}/post", {{method: "POST", body: "x"}}).catch(() => {{}});
navigator.sendBeacon("http://{at}/beacon", "x");
if (navigator.serviceWorker) navigator.serviceWorker.register("/sw.js").catch(() => {{}});
</script></body></html>"""
    http_server.route("/page", body=page.encode())
    workspace = open_workspace()
    record = capture_source(workspace, http_server.url("/page"), method="browser")

    assert trap.accepted == 0
    text = workspace.store.get("text", record.rendered.text_hash).decode()  # type: ignore[union-attr]
    assert "The page still captures." in text
    document = browser_document(workspace, record)
    by_url = {item["url"]: item for item in document["resources"]}
    image = by_url[f"http://{at}/pixel.png"]
    assert image["outcome"] == "refused"
    assert "trap" in image["reason"]
    assert by_url[f"http://{at}/post"]["outcome"] == "refused"
    assert "POST" in by_url[f"http://{at}/post"]["reason"]
    refused_kinds = {item["kind"] for item in document["refused"]}
    assert {"websocket", "service-worker"} <= refused_kinds
    assert http_server.paths() == ["/page"]  # the service worker script was never fetched


def test_a_capture_past_its_deadline_fails_within_the_deadline_and_the_next_one_works(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, session: BrowserSession
) -> None:
    http_server.route("/spin", body=b"<p>Before</p><script>while (true) {}</script><p>After</p>")
    http_server.route("/ok", body=b"<p>A page that renders.</p>")
    capture_source(open_workspace(), http_server.url("/ok"), method="browser")  # warm
    workspace = open_workspace(deadline=4.0)
    started = time.monotonic()
    with pytest.raises(BrowserFailed) as failure:
        capture_source(workspace, http_server.url("/spin"), method="browser")
    elapsed = time.monotonic() - started
    assert elapsed < 4.0 + 1.5, elapsed
    assert exit_code_of(failure.value) == 1
    assert "deadline" in failure.value.message
    with workspace.db.reading() as db:
        failed = db.query(Capture).filter(Capture.outcome == "failed").one()
        assert failed.method == "browser"

    record = capture_source(open_workspace(), http_server.url("/ok"), method="browser")
    assert record.method == "browser"


def test_a_browser_that_crashes_mid_capture_is_a_failed_capture_and_is_replaced(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, session: BrowserSession
) -> None:
    http_server.route("/ok", body=b"<p>Warm up.</p>")
    capture_source(open_workspace(), http_server.url("/ok"), method="browser")
    starts, pid = session.starts, session.pid
    assert pid is not None
    http_server.route("/slow.png", body=PIXEL, content_type="image/png", delay=3.0)
    http_server.route("/crash", body=b'<p>Loading</p><img src="/slow.png">')

    def kill_when_asked() -> None:
        while "/slow.png" not in http_server.paths():
            time.sleep(0.02)
        os.killpg(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_when_asked, daemon=True)
    killer.start()
    workspace = open_workspace(deadline=20.0)
    started = time.monotonic()
    with pytest.raises(CaptureError) as failure:
        capture_source(workspace, http_server.url("/crash"), method="browser")
    assert time.monotonic() - started < 10
    assert exit_code_of(failure.value) == 1
    killer.join(timeout=5)
    record = capture_source(open_workspace(), http_server.url("/ok"), method="browser")
    assert record.method == "browser"
    assert session.starts == starts + 1


def test_a_main_document_that_fails_is_a_failed_browser_capture(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    workspace = open_workspace()
    with pytest.raises(CaptureError) as failure:
        capture_source(workspace, http_server.url("/gone"), method="browser")
    assert exit_code_of(failure.value) == 1
    with workspace.db.reading() as db:
        failed = db.query(Capture).one()
        assert (failed.outcome, failed.method, failed.http_status) == ("failed", "browser", 404)


def test_a_page_that_is_not_html_is_captured_over_http_and_says_so(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    http_server.route("/notes.txt", body=b"plain text notes", content_type="text/plain")
    record = capture_source(open_workspace(), http_server.url("/notes.txt"), method="browser")
    assert record.method == "http"
    assert record.rendered is None
    assert "not rendered" in record.provenance["browser"]["skipped"]


def run_snap(home: Path, *args: str, **env: str) -> Any:
    from snap.cli import cli

    return CliRunner().invoke(cli, list(args), env=home_env(home, **env))


def test_snap_fetch_browser_on_the_command_line(
    http_server: LoopbackServer, tmp_path: Path, chromium: str
) -> None:
    url = serve_fidelity_page(http_server)
    result = run_snap(tmp_path, "fetch", "--browser", "--json", url)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["method"] == "browser"
    assert printed["rendered"]["extractor"].startswith("snap-browser@2+chromium@")
    assert printed["snapshotId"] == sha256(PAGE)
    again = run_snap(tmp_path, "fetch", "--json", url)  # SNAP_CAPTURE unset: HTTP
    assert json.loads(again.output)["method"] == "http"
    assert json.loads(again.output)["snapshotId"] == printed["snapshotId"]  # one snapshot


def test_unusable_browser_settings_are_one_line_and_exit_2(
    http_server: LoopbackServer, tmp_path: Path
) -> None:
    page = tmp_path / "page.html"
    page.write_text("<p>local</p>")
    local = run_snap(tmp_path, "fetch", "--browser", str(page))
    assert local.exit_code == 2
    assert "http(s) URL" in local.output
    bogus = run_snap(tmp_path, "fetch", str(page), SNAP_CAPTURE="sometimes")
    assert bogus.exit_code == 2
    assert "SNAP_CAPTURE must be http, browser or auto" in bogus.output
    http_server.route("/page", body=b"<p>served</p>")
    missing = tmp_path / "no-chromium"
    absent = run_snap(
        tmp_path, "fetch", "--browser", http_server.url("/page"), SNAP_BROWSER=str(missing)
    )
    assert absent.exit_code == 2
    assert "needs Chromium" in absent.output
    assert http_server.paths() == []  # refused before anything was fetched
    auto = run_snap(
        tmp_path,
        "fetch",
        "--json",
        http_server.url("/page"),
        SNAP_CAPTURE="auto",
        SNAP_BROWSER=str(missing),
    )
    assert auto.exit_code == 0, auto.output
    assert json.loads(auto.output)["method"] == "http"  # auto: HTTP when no browser


def test_a_deadline_on_the_command_line_is_exit_1_and_a_recorded_failure(
    http_server: LoopbackServer, tmp_path: Path, chromium: str
) -> None:
    http_server.route("/spin", body=b"<p>Before</p><script>while (true) {}</script>")
    started = time.monotonic()
    result = run_snap(tmp_path, "fetch", "--browser", "--deadline", "8", http_server.url("/spin"))
    assert result.exit_code == 1, result.output
    assert time.monotonic() - started < 8 + 4  # starting Chromium is inside the deadline too
    assert "deadline" in result.output
    audit = run_snap(tmp_path, "audit", "--json", "--url", http_server.url("/spin"))
    captures = json.loads(audit.output)["captures"]
    assert [(c["outcome"], c["method"]) for c in captures] == [("failed", "browser")]
