"""The evidence page in a real browser: Debian's headless Chromium opens it from a file:// URL.

The rendered DOM must hold the marked quote and the status in words, the inline style must
pass the page's Content-Security-Policy, and the page must make no network request at all.

How requests are observed: Chromium runs with snap's own launcher flags (``NETWORK_FLAGS``:
every host name resolves to nothing, the proxy is a closed loopback port, background networking
and component updates off), so nothing it asks for can leave the machine, and its own net log
says who asked for each request: one the page asks for has the page's origin as initiator
(``null`` for a file:// page) and file:// in its isolation key; the browser's own services
(network time, the component updater, the account list: Chromium 156 asks for these even with
--disable-background-networking and --disable-component-update) have "not an origin".
A control page that loads an image shows the net log does see a page's request. file://
reads never go through a proxy. Screenshots are kept in tests/artifacts/ (ignored by git).

Chromium comes from Debian (``apt-get install chromium``), installed by tests/run.sh before
pytest runs; tests themselves never install anything, so without it these tests are skipped,
saying so.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from pypdf import PdfReader

from records.attest.signing import KeyType, write_new_key
from snapshotter.browser.chromium import NETWORK_FLAGS
from tests.attest.conftest import tsa  # noqa: F401  (fixture: the loopback TSA)
from tests.attest.tsa import LocalTsa
from tests.exports.conftest import CHANGED, FOUND, Home, recorded_article
from tests.exports.html_dom import parsed
from tests.http_fixtures import LoopbackServer
from verifier.status import Status

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture(scope="session")
def chromium() -> str:
    found = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if found is None:
        pytest.skip(
            "SKIPPED LOUDLY: Debian's chromium is not installed; tests/run.sh installs it "
            "(apt-get install -y chromium) before pytest, or install it yourself"
        )
    return found


@dataclass
class Run:
    done: subprocess.CompletedProcess[str]
    requests: list[dict[str, Any]]  # every URL request in Chromium's net log


def run_chromium(chromium: str, profile: Path, page: Path, *extra: str) -> Run:
    """Chromium on ``page`` with snap's launcher flags (``NETWORK_FLAGS``), so nothing can leave
    the machine even at start-up, and a net log of every request it starts."""
    profile.mkdir(parents=True, exist_ok=True)
    net_log = profile / "net-log.json"
    done = subprocess.run(
        [
            chromium,
            *NETWORK_FLAGS,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            f"--log-net-log={net_log}",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Run(done, url_requests(net_log))


def url_requests(net_log: Path) -> list[dict[str, Any]]:
    """The parameters of every URL request job the net log records (url, initiator, …)."""
    log = json.loads(net_log.read_text(encoding="utf-8"))
    names = {number: name for name, number in log["constants"]["logEventTypes"].items()}
    return [
        event["params"]
        for event in log["events"]
        if names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in event.get("params", {})
    ]


def from_the_page(request: dict[str, Any]) -> bool:
    """Asked for by a document (not by the browser's own services)."""
    return request.get("initiator") != "not an origin" or "file://" in str(
        request.get("network_isolation_key")
    )


def assert_no_request_from_the_page(runs: list[Run]) -> None:
    requests = [request for run in runs for request in run.requests]
    assert [r["url"] for r in requests if from_the_page(r)] == []


def rendered(chromium: str, tmp_path: Path, page: Path, shot: Path) -> tuple[str, str]:
    """The DOM Chromium built from ``page`` and its console output; a screenshot in ``shot``.
    Asserts the page made no request in either run."""
    dom = run_chromium(chromium, tmp_path / "profile-dom", page, "--dump-dom")
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    picture = run_chromium(
        chromium,
        tmp_path / "profile-shot",
        page,
        f"--screenshot={shot}",
        "--window-size=1200,1800",
        "--hide-scrollbars",
    )
    assert_no_request_from_the_page([dom, picture])
    return dom.done.stdout, dom.done.stderr + picture.done.stderr


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def write_page(home: Home, tmp_path: Path, name: str, citation_id: str) -> Path:
    path = tmp_path / f"{name}.html"
    path.write_text(home.page(citation_id), encoding="utf-8")
    return path


def test_the_page_renders_the_marked_quote_and_status_offline_with_no_request(
    chromium: str, home: Home, http_server: LoopbackServer, tmp_path: Path
) -> None:
    url = recorded_article(home, http_server)
    [result] = home.verify({"citationId": "c-found", "url": url, "quote": FOUND})
    assert result["status"] == "quote_found"
    http_server.close()  # from here on, the page has nothing on this machine to reach either
    page = write_page(home, tmp_path, "found", "c-found")
    shot = ARTIFACTS / "evidence-page-found.png"
    dom_text, stderr = rendered(chromium, tmp_path, page, shot)
    dom = parsed(dom_text)
    assert dom.inside["mark"] == [FOUND]
    assert f"Status: {Status.QUOTE_FOUND.headline}" in dom_text
    assert dom.links() == [f"{url}#:~:text=the%20origin%20serves%20only%201%20request%20in%2010"]
    assert not [src for _, attrs in dom.tags for name, src in attrs.items() if name == "src"]
    assert not [line for line in console_lines(stderr) if "Content Security Policy" in line]
    assert png_size(shot) == (1200, 1800)


def test_the_page_prints(
    chromium: str, home: Home, http_server: LoopbackServer, tmp_path: Path
) -> None:
    url = recorded_article(home, http_server)
    home.verify({"citationId": "c-found", "url": url, "quote": FOUND})
    home.verify({"citationId": "c-changed", "url": url, "quote": CHANGED}, name="second.json")
    page = tmp_path / "two.html"
    page.write_text(home.page("c-found", "c-changed"), encoding="utf-8")
    pdf = ARTIFACTS / "evidence-page-two-citations.pdf"
    pdf.parent.mkdir(parents=True, exist_ok=True)
    pdf.unlink(missing_ok=True)
    run = run_chromium(
        chromium,
        tmp_path / "profile",
        page,
        f"--print-to-pdf={pdf}",
        "--no-pdf-header-footer",
    )
    assert_no_request_from_the_page([run])
    pages = [page.extract_text() for page in PdfReader(pdf).pages]
    # each citation starts a printed page; the link target is written out on paper
    assert [text.split("\n")[0] for text in pages if text.startswith("Citation")] == [
        "Citation c-changed"
    ]
    assert pages[0].startswith("Evidence for 2 citations")
    assert any(f"<{url}#:~:text=" in " ".join(text.split()) for text in pages)


def test_a_quote_not_found_renders_the_differing_word_marked(
    chromium: str, home: Home, http_server: LoopbackServer, tmp_path: Path
) -> None:
    url = recorded_article(home, http_server)
    [result] = home.verify({"citationId": "c-changed", "url": url, "quote": CHANGED})
    assert result["status"] == "not_found"
    page = write_page(home, tmp_path, "not-found", "c-changed")
    dom_text, stderr = rendered(chromium, tmp_path, page, ARTIFACTS / "evidence-page-not-found.png")
    dom = parsed(dom_text)
    # only the differing word: the source's struck through, the quote's beside it
    assert dom.inside["del"] == ["[-100]"]
    assert dom.inside["ins"] == ["[+1000]"]
    assert ">[-100]</del>" in dom_text
    assert ">[+1000]</ins>" in dom_text
    assert f"Status: {Status.NOT_FOUND.headline}" in dom_text
    assert not [line for line in console_lines(stderr) if "Content Security Policy" in line]


def test_the_net_log_does_see_a_page_that_makes_a_request(chromium: str, tmp_path: Path) -> None:
    """The control: without this, "no request seen" could mean "requests not seen"."""
    page = tmp_path / "control.html"
    page.write_text(
        '<!DOCTYPE html><html lang="en"><title>control</title>'
        '<img src="http://snap-control.invalid/pixel.png" alt="">',
        encoding="utf-8",
    )
    run = run_chromium(chromium, tmp_path / "profile", page, "--dump-dom")
    asked = [r["url"] for r in run.requests if from_the_page(r)]
    assert asked == ["http://snap-control.invalid/pixel.png"]


# --- the seals and proofs the page carries, checked from the page alone -------------------


def test_the_page_carries_its_seals_and_proofs_checked_with_openssl_alone(
    chromium: str,
    tsa: LocalTsa,  # noqa: F811  (the fixture)
    home: Home,
    http_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    """The data the page embeds, as Chromium parsed it (a data block is never run, and the
    page's policy reports nothing): the manifest's signature verifies with ``cryptography``,
    its token and the checkpoint's with ``openssl ts -verify`` against the test's TSA; and the
    files the page saves, with the commands it prints, check in a folder of their own."""
    write_new_key(Path(home.env["SNAP_HOME"]) / "signing-key.pem", KeyType.ECDSA_P256)
    home.env |= {"SNAP_TSA_URL": tsa.url, "SNAP_TSA_CHAIN": str(tsa.chain_path)}
    url = recorded_article(home, http_server)
    [result] = home.verify({"citationId": "c-found", "url": url, "quote": FOUND})
    assert result["status"] == "quote_found"
    http_server.close()
    page = write_page(home, tmp_path, "sealed", "c-found")
    run = run_chromium(chromium, tmp_path / "profile", page, "--dump-dom")
    assert [r["url"] for r in run.requests if from_the_page(r)] == []
    assert not [line for line in console_lines(run.done.stderr) if "Content Security" in line]
    dom = parsed(run.done.stdout)
    [lines] = dom.data_blocks()
    [capture] = [line for line in lines if "captureId" in line]
    [check] = [line for line in lines if "verificationId" in line]
    assert json.loads(base64.b64decode(check["logProof"]["leaf"]))["citationId"] == "c-found"

    manifest = capture["manifest"]["document"].encode("utf-8")
    assert capture["manifest"]["sha256"] == "sha256:" + hashlib.sha256(manifest).hexdigest()
    signature = capture["signature"]
    key = serialization.load_pem_public_key(signature["publicKey"].encode("ascii"))
    assert isinstance(key, ec.EllipticCurvePublicKey)
    key.verify(base64.b64decode(signature["value"]), manifest, ec.ECDSA(hashes.SHA256()))
    with pytest.raises(InvalidSignature):
        key.verify(base64.b64decode(signature["value"]), manifest + b" ", ec.ECDSA(hashes.SHA256()))
    folder = tmp_path / "by-hand"
    folder.mkdir()
    assert stamped(folder, "manifest", manifest, capture["timestamp"]["token"], tsa)
    assert not stamped(folder, "changed", manifest + b" ", capture["timestamp"]["token"], tsa)
    for line in (capture, check):
        checkpoint = line["logProof"]["checkpoint"]
        document = checkpoint["document"].encode("utf-8")
        signed = checkpoint["signature"]
        key = serialization.load_pem_public_key(signed["publicKey"].encode("ascii"))
        assert isinstance(key, ec.EllipticCurvePublicKey)
        key.verify(base64.b64decode(signed["value"]), document, ec.ECDSA(hashes.SHA256()))
        assert stamped(folder, "checkpoint", document, checkpoint["timestamp"]["token"], tsa)

    saved = tmp_path / "saved"
    saved.mkdir()
    for name, data in dom.saved().items():
        (saved / name).write_bytes(data)
    (saved / "tsa-chain.pem").write_bytes(tsa.chain_path.read_bytes())
    [commands] = re.findall(
        r'<pre class="commands"><code>(.*?)</code></pre>', run.done.stdout, re.S
    )
    shown = html.unescape(commands).splitlines()
    assert any(c.startswith("openssl dgst -sha256 -verify capture-") for c in shown)
    assert any(c.startswith("openssl ts -verify -in capture-") for c in shown)
    assert any(c.startswith("python3 check_inclusion.py verification-") for c in shown)
    for command in shown:
        done = subprocess.run(
            ["bash", "-c", command], cwd=saved, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    manifest_file = saved / f"capture-{capture['captureId']}.manifest.json"
    manifest_file.write_bytes(manifest.replace(b"http", b"HTTP", 1))
    forged = [c for c in shown if "-data " + manifest_file.name in c]
    assert forged
    for command in forged:
        done = subprocess.run(["bash", "-c", command], cwd=saved, capture_output=True, check=False)
        assert done.returncode != 0, command  # the check could fail: it reads the saved file


def stamped(folder: Path, name: str, data: bytes, token: str, authority: LocalTsa) -> bool:
    """``openssl ts -verify`` of ``token`` (base64) over ``data``, against the test's CA."""
    (folder / f"{name}.json").write_bytes(data)
    (folder / f"{name}.tsr").write_bytes(base64.b64decode(token))
    done = subprocess.run(
        [
            "openssl", "ts", "-verify",
            "-in", str(folder / f"{name}.tsr"),
            "-data", str(folder / f"{name}.json"),
            "-CAfile", str(authority.chain_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    return done.returncode == 0 and "Verification: OK" in done.stdout
