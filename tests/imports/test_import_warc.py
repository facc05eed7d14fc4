"""``snap import`` of crawler-written WARCs and WACZs, on both backends, through the real CLI."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from records.models import Capture, Snapshot
from tests.imports.warcs import OTHER, PAGE, QUOTE, SOFTWARE, CrawlerWarc, crawl, sha256_id
from tests.records.conftest import Backend

CDN = "http://example.test/cdn"


def run_json(backend: Backend, *args: str) -> tuple[int, dict[str, Any]]:
    done = backend.snap(*args, "--json")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def by_type(report: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["type"], r["uri"], r["outcome"]): r for r in report["records"]}


def counts(backend: Backend) -> tuple[int, int]:
    workspace = backend.workspace()
    try:
        with workspace.db.reading() as session:
            captures = session.scalar(select(func.count()).select_from(Capture))
            snapshots = session.scalar(select(func.count()).select_from(Snapshot))
    finally:
        workspace.close()
    return int(captures or 0), int(snapshots or 0)


def test_crawler_warc_becomes_captures_like_a_fetch(backend: Backend, tmp_path: Path) -> None:
    warc = crawl(tmp_path / "crawl.warc.gz")
    code, report = run_json(backend, "import", str(warc.path))
    assert code == 0, report
    records = by_type(report)
    first = records[("response", CDN, "imported")]
    # The snapshot is the content-decoded body, as snap fetch stores it (gzip and chunks undone).
    assert first["snapshotId"] == sha256_id(PAGE)
    assert records[("response", "http://example.test/other", "imported")]["snapshotId"] == (
        sha256_id(OTHER)
    )
    revisit = records[("revisit", CDN, "imported")]
    assert revisit["snapshotId"] == first["snapshotId"]
    assert revisit["captureId"] != first["captureId"]
    gone = records[("revisit", "http://example.test/gone", "skipped")]
    assert "not in this archive" in gone["reason"]
    assert report["summary"] == {
        "imported": 3,
        "exists": 0,
        "skipped": 6,  # 3 requests, 2 metadata, the unresolved revisit (warcinfo: not listed)
        "refused": 0,
        "damaged": [],
        "attestationProblems": [],  # a WARC carries none
        "exitCode": 0,
    }

    audit = run_json(backend, "audit", "--url", CDN)[1]
    captures = {c["fetchedAt"]: c for c in audit["captures"]}
    assert set(captures) == {"2024-05-01T12:00:00Z", "2024-05-02T08:30:00Z"}
    original = captures["2024-05-01T12:00:00Z"]
    assert original["httpStatus"] == 200
    provenance = original["provenance"]
    assert provenance["ip"] == "192.0.2.7"
    assert provenance["statusLine"] == "HTTP/1.1 200 OK"
    assert provenance["warc"]["software"] == SOFTWARE
    assert provenance["warc"]["recordId"] == warc.response_ids[0]
    assert provenance["warc"]["offset"] == first["offset"]
    assert provenance["warc"]["file"] == "crawl.warc.gz"
    assert provenance["warc"]["payloadDigestChecked"] is True
    head = headers_blob(backend, provenance["headersBlob"]["hash"])
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Transfer-Encoding: chunked" in head
    assert b"Content-Encoding: gzip" in head


def headers_blob(backend: Backend, digest: str) -> bytes:
    workspace = backend.workspace()
    try:
        return workspace.store.get("headers", digest)
    finally:
        workspace.close()


def test_import_twice_records_nothing_twice(backend: Backend, tmp_path: Path) -> None:
    warc = crawl(tmp_path / "crawl.warc.gz")
    assert run_json(backend, "import", str(warc.path))[0] == 0
    before = counts(backend)
    assert before == (3, 2)
    code, again = run_json(backend, "import", str(warc.path))
    assert code == 0
    assert again["summary"]["imported"] == 0
    assert again["summary"]["exists"] == 3
    assert counts(backend) == before


def citation(tmp_path: Path, snapshot_id: str, quote: str) -> Path:
    path = tmp_path / "citation.json"
    name = hashlib.sha256(quote.encode()).hexdigest()[:8]
    document = {"citationId": f"c-{name}", "url": CDN, "snapshotId": snapshot_id}
    path.write_text(json.dumps(document | {"quote": quote}), encoding="utf-8")
    return path


def test_citation_verifies_against_an_imported_snapshot(backend: Backend, tmp_path: Path) -> None:
    warc = crawl(tmp_path / "crawl.warc.gz")
    run_json(backend, "import", str(warc.path))
    found = backend.snap("verify", str(citation(tmp_path, sha256_id(PAGE), QUOTE)))
    assert found.returncode == 0, found.stdout + found.stderr
    assert "quote found" in found.stdout
    changed = QUOTE.replace("1 request in 10", "1 request in 20")
    refused = backend.snap("verify", str(citation(tmp_path, sha256_id(PAGE), changed)))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "quote found" not in refused.stdout


def test_payload_digest_mismatch_is_refused_and_the_rest_imported(
    backend: Backend, tmp_path: Path
) -> None:
    warc = CrawlerWarc(tmp_path / "tampered.warc.gz")
    warc.response(CDN, PAGE, digest="sha1:" + "B" * 32)  # says another payload
    warc.response("http://example.test/other", OTHER)
    path = warc.write().path
    done = backend.snap("import", str(path))
    assert done.returncode == 1
    refused = [line for line in done.stdout.splitlines() if line.startswith("refused")]
    assert len(refused) == 1
    assert "tampered.warc.gz@" in refused[0]
    assert CDN in refused[0]
    assert "payload digest mismatch" in refused[0]
    assert "imported 1 capture " in done.stdout
    assert counts(backend) == (1, 1)


@pytest.mark.parametrize("spelling", ["hex", "base32"])
def test_a_sha256_digest_of_the_entity_body_matches(tmp_path: Path, spelling: str) -> None:
    """WARC 1.1 defines the payload as the body with the chunk framing removed: a digest of
    that (what some crawlers write) matches as well as warcio's digest of the framed bytes."""
    import base64

    body = gzip.compress(PAGE, mtime=0)
    raw = hashlib.sha256(body).digest()
    value = raw.hex() if spelling == "hex" else base64.b32encode(raw).decode().rstrip("=")
    warc = CrawlerWarc(tmp_path / "entity.warc.gz")
    warc.response(CDN, PAGE, digest=f"sha256:{value}")
    code, report = embedded_import(tmp_path, warc.write().path)
    assert code == 0, report
    assert report["summary"]["imported"] == 1


def embedded_import(tmp_path: Path, path: Path) -> tuple[int, dict[str, Any]]:
    backend = Backend("embedded", {**base_env(), "SNAP_HOME": str(tmp_path / "home")})
    return run_json(backend, "import", str(path))


def base_env() -> dict[str, str]:
    import os

    return {key: value for key, value in os.environ.items() if not key.startswith("SNAP_")}


def test_other_statuses_are_captures_with_their_status(tmp_path: Path) -> None:
    warc = CrawlerWarc(tmp_path / "statuses.warc")
    warc.response(CDN, b"<html><body><p>Not here.</p></body></html>", status="404 Not Found")
    code, report = embedded_import(tmp_path, warc.write().path)
    assert code == 0
    (record,) = [r for r in report["records"] if r["type"] == "response"]
    assert (record["outcome"], record["status"]) == ("imported", 404)


def test_brotli_bodies_are_decoded_like_gzip(tmp_path: Path) -> None:
    """Browsers ask for br, so browser-based crawlers record it: the stored body is decoded."""
    import brotli

    warc = CrawlerWarc(tmp_path / "br.warc.gz")
    body = brotli.compress(PAGE)
    warc.response(CDN, body, gzip_body=False, extra=[("Content-Encoding", "br")])
    warc.response(
        "http://example.test/broken",
        b"not brotli",
        gzip_body=False,
        extra=[("Content-Encoding", "br")],
    )
    code, report = embedded_import(tmp_path, warc.write().path)
    assert code == 1
    outcomes = {r["uri"]: r for r in report["records"]}
    assert outcomes[CDN]["snapshotId"] == sha256_id(PAGE)
    assert outcomes["http://example.test/broken"]["outcome"] == "refused"
    assert "does not decode as br" in outcomes["http://example.test/broken"]["reason"]


def test_an_encoding_snap_does_not_decode_is_refused_in_one_line(tmp_path: Path) -> None:
    """snap stores decoded bodies; a zstd body is refused, not stored still encoded."""
    warc = CrawlerWarc(tmp_path / "zstd.warc.gz")
    warc.response(CDN, b"(zstd bytes)", gzip_body=False, extra=[("Content-Encoding", "zstd")])
    warc.response("http://example.test/other", OTHER)
    code, report = embedded_import(tmp_path, warc.write().path)
    assert code == 1
    (refused,) = [r for r in report["records"] if r["outcome"] == "refused"]
    assert refused["reason"] == "unsupported Content-Encoding 'zstd'"
    assert report["summary"]["imported"] == 1


def wacz_create(warc: Path, output: Path) -> Path:
    wacz = shutil.which("wacz") or str(Path(__import__("sys").executable).parent / "wacz")
    subprocess.run([wacz, "create", "-d", "-o", str(output), str(warc)], check=True, timeout=120)
    return output


def test_wacz_from_wacz_create_imports_each_warc(backend: Backend, tmp_path: Path) -> None:
    warc = crawl(tmp_path / "crawl.warc.gz")
    package = wacz_create(warc.path, tmp_path / "crawl.wacz")
    code, report = run_json(backend, "import", str(package))
    assert code == 0, report
    assert report["kind"] == "wacz"
    imported = {r["snapshotId"] for r in report["records"] if r["outcome"] == "imported"}
    assert imported == {sha256_id(PAGE), sha256_id(OTHER)}
    assert {r["file"] for r in report["records"]} == {"crawl.wacz#archive/crawl.warc.gz"}
    # The same WARC imported bare afterwards is the same records: nothing recorded twice.
    code, bare = run_json(backend, "import", str(warc.path))
    assert code == 0
    assert bare["summary"]["exists"] == 3
    assert counts(backend) == (3, 2)


def rewrite_zip(source: Path, target: Path, change: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            new.writestr(info, change.get(info.filename, old.read(info.filename)))
    return target


def test_a_tampered_wacz_is_refused_whole(tmp_path: Path) -> None:
    warc = crawl(tmp_path / "crawl.warc.gz")
    package = wacz_create(warc.path, tmp_path / "crawl.wacz")
    data = bytearray(warc.path.read_bytes())
    data[len(data) // 2] ^= 0x01
    tampered = rewrite_zip(package, tmp_path / "t.wacz", {"archive/crawl.warc.gz": bytes(data)})
    backend = Backend("embedded", {**base_env(), "SNAP_HOME": str(tmp_path / "home")})
    done = backend.snap("import", str(tampered))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "archive/crawl.warc.gz was changed" in done.stderr
    assert "Traceback" not in done.stderr

    with zipfile.ZipFile(package) as old:
        listing = json.loads(old.read("datapackage.json"))
    listing["resources"][-1]["hash"] = "sha256:" + hashlib.sha256(bytes(data)).hexdigest()
    relisted = rewrite_zip(
        tampered, tmp_path / "r.wacz", {"datapackage.json": json.dumps(listing).encode()}
    )
    done = backend.snap("import", str(relisted))
    assert done.returncode == 2
    assert "datapackage.json was changed" in done.stderr
    assert not (tmp_path / "home" / "store").exists() or counts(backend) == (0, 0)


@pytest.mark.committed  # two processes write
def test_two_imports_at_once_record_each_capture_once(backend: Backend, tmp_path: Path) -> None:
    """Two processes importing one archive race on every insert; each row exists once."""
    warc = crawl(tmp_path / "crawl.warc.gz")
    command = [__import__("sys").executable, "-m", "snap", "import", str(warc.path), "--json"]
    runs = [
        subprocess.Popen(command, env=backend.env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    reports = [json.loads(run.communicate(timeout=120)[0]) for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    imported = [report["summary"]["imported"] for report in reports]
    exists = [report["summary"]["exists"] for report in reports]
    assert sum(imported) == 3
    assert sum(imported) + sum(exists) == 6
    assert counts(backend) == (3, 2)


def test_a_wacz_listed_with_md5_hashes_is_checked_with_md5(tmp_path: Path) -> None:
    warc = crawl(tmp_path / "crawl.warc.gz")
    wacz = shutil.which("wacz") or str(Path(__import__("sys").executable).parent / "wacz")
    package = tmp_path / "md5.wacz"
    command = [wacz, "create", "--hash-type", "md5", "-o", str(package), str(warc.path)]
    subprocess.run(command, check=True, timeout=120, capture_output=True)
    with zipfile.ZipFile(package) as opened:
        listing = json.loads(opened.read("datapackage.json"))
    assert all(r["hash"].startswith("md5:") for r in listing["resources"])
    code, report = embedded_import(tmp_path, package)
    assert code == 0, report
    assert report["summary"]["imported"] == 3


def test_a_revisit_in_one_warc_of_a_wacz_finds_its_original_in_another(tmp_path: Path) -> None:
    first = CrawlerWarc(tmp_path / "one.warc.gz")
    first.response(CDN, PAGE)
    digest = first.last_digest
    first.write()
    second = CrawlerWarc(tmp_path / "two.warc.gz")
    second.revisit(CDN, digest, CDN, "2024-05-01T12:00:00Z", date="2024-06-01T00:00:00Z")
    second.write()
    wacz = shutil.which("wacz") or str(Path(__import__("sys").executable).parent / "wacz")
    package = tmp_path / "two.wacz"
    command = [wacz, "create", "-o", str(package), str(first.path), str(second.path)]
    subprocess.run(command, check=True, timeout=120, capture_output=True)
    code, report = embedded_import(tmp_path, package)
    assert code == 0, report
    revisit = next(r for r in report["records"] if r["type"] == "revisit")
    assert revisit["outcome"] == "imported"
    assert revisit["file"] == "two.wacz#archive/two.warc.gz"
    assert revisit["snapshotId"] == sha256_id(PAGE)


def test_a_redirect_is_captured_as_the_page_it_leads_to(backend: Backend, tmp_path: Path) -> None:
    """Two hops (301 then a relative 302) to a page of the archive: the first URL is recorded as
    snap fetch records a redirect, as the page; a redirect whose page is not in the archive is
    recorded as it stands; a citation of the first URL verifies against the page."""
    warc = CrawlerWarc(tmp_path / "redirects.warc.gz")
    warc.response(
        "http://example.test/a",
        b"moved",
        status="301 Moved Permanently",
        gzip_body=False,
        chunk=False,
        extra=[("Location", "http://example.test/b")],
    )
    warc.response(
        "http://example.test/b",
        b"found",
        status="302 Found",
        gzip_body=False,
        chunk=False,
        extra=[("Location", "/cdn")],
    )
    warc.response(CDN, PAGE)
    warc.response(
        "http://example.test/away",
        b"gone",
        status="302 Found",
        gzip_body=False,
        chunk=False,
        extra=[("Location", "http://elsewhere.test/")],
    )
    code, report = run_json(backend, "import", str(warc.write().path))
    assert code == 0, report
    records = by_type(report)
    page = sha256_id(PAGE)
    assert records[("response", "http://example.test/a", "imported")]["snapshotId"] == page
    assert records[("response", "http://example.test/b", "imported")]["snapshotId"] == page
    away = records[("response", "http://example.test/away", "imported")]
    assert away["snapshotId"] == sha256_id(b"gone")
    quote = tmp_path / "quote.json"
    quote.write_text(json.dumps({"url": "http://example.test/a", "quote": QUOTE}))
    code, verified = run_json(backend, "verify", str(quote))
    assert code == 0, verified
    assert verified["results"][0]["snapshotId"] == page
    code, audited = run_json(backend, "audit", "--url", "http://example.test/a")
    assert code == 0, audited
    [capture] = audited["captures"]
    chain = [hop["url"] for hop in capture["provenance"]["redirectChain"]]
    assert chain == ["http://example.test/a", "http://example.test/b", CDN]
