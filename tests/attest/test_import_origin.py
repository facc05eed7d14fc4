"""An imported capture is an import wherever it is shown or re-exported: an archive whose
warcinfo says ``snap/0.1.0`` is never "captured by snap"; its address, date and software
appear only as what the archive states; WARC and WACZ re-exports name the archive (file,
SHA-256, record id). A WACZ signed by the field's own signer (authsign) imports with its
signature recorded as valid, and as invalid once tampered with."""

from __future__ import annotations

import gzip
import hashlib
import html
import io
import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from warcio.archiveiterator import ArchiveIterator

from snap.cli import cli
from tests.attest.tsa import LocalTsa, issue, local_tsa
from tests.imports.warcs import PAGE, QUOTE, WHEN, CrawlerWarc

URL = "https://example.test/cdn"
ADDRESS = "192.0.2.7"  # the WARC-IP-Address the crawler fixture records
CAPTURED_BY_SNAP = re.compile(r"(?<!not )captured by snap", re.IGNORECASE)


def snap(env: dict[str, str], *args: str) -> str:
    done = CliRunner().invoke(cli, list(args), env=env)
    assert done.exit_code == 0, done.output
    return done.output


def imported_home(tmp_path: Path, software: str | None = "snap/0.1.0") -> dict[str, str]:
    env = {"SNAP_HOME": str(tmp_path / "home")}
    warc = CrawlerWarc(tmp_path / "crawl.warc.gz", software=software)
    warc.response(URL, PAGE)
    warc.write()
    snap(env, "import", str(tmp_path / "crawl.warc.gz"))
    citation = tmp_path / "citation.json"
    citation.write_text(json.dumps({"citationId": "c-imported", "url": URL, "quote": QUOTE}))
    snap(env, "verify", str(citation))
    return env


def page_text(path: Path) -> str:
    """The evidence page as a reader sees it: tags dropped, entities decoded."""
    source = re.sub(r"<(style|script)\b.*?</\1>", " ", path.read_text(), flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", source)).split())


def warc_records(data: bytes) -> list[tuple[str, dict[str, str], bytes]]:
    """(type, WARC headers, payload) of every record."""
    found = []
    for record in ArchiveIterator(io.BytesIO(data)):
        headers = dict(record.rec_headers.headers)
        found.append((record.rec_type, headers, record.content_stream().read()))
    return found


def test_an_archive_that_names_snap_is_never_shown_as_captured_by_snap(tmp_path: Path) -> None:
    env = imported_home(tmp_path)
    snapshot_id = json.loads(snap(env, "audit", "--url", URL, "--json"))["captures"][0][
        "snapshotId"
    ]
    shown = {
        "audit": snap(env, "audit", "--url", URL),
        "audit of the citation": snap(env, "audit", "c-imported"),
        "show": snap(env, "show", snapshot_id, "--headers"),
        "verify": snap(env, "verify", str(tmp_path / "citation.json")),
    }
    snap(
        env,
        "export",
        "--format",
        "html",
        "-o",
        str(tmp_path / "e.html"),
        "--citation",
        "c-imported",
    )
    shown["evidence page"] = page_text(tmp_path / "e.html")
    snap(env, "export", "--format", "warc", "-o", str(tmp_path / "e.warc.gz"), "--url", URL)
    shown["WARC"] = gzip.decompress((tmp_path / "e.warc.gz").read_bytes()).decode(
        "utf-8", "replace"
    )
    for where, text in shown.items():
        assert not CAPTURED_BY_SNAP.search(text), where
        assert ">Server address<" not in text, where
    for where in ("audit", "show", "evidence page", "WARC"):
        assert '"snap/0.1.0"' in shown[where] or "claimed-software: snap/0.1.0" in shown[where]
    # the archive's date is never a fact of a capture: each line that shows it says whose it is
    for where in ("audit", "audit of the citation", "evidence page"):
        text = shown[where]
        for found in re.finditer(re.escape(WHEN[:10]), text):
            context = text[max(0, found.start() - 60) : found.end() + 60]
            assert "archive" in context, (where, context)
    page = shown["evidence page"]
    assert f"Server address, as the archive states {ADDRESS}" in page
    assert "Capture time, as the archive states" in page
    assert page.count(ADDRESS) == 1
    assert f"WARC-IP-Address: {ADDRESS}" not in shown["WARC"]


def test_reexports_of_an_import_name_the_archive_it_came_from(tmp_path: Path) -> None:
    env = imported_home(tmp_path, software="Browsertrix-Crawler 1.2.0")
    archive_digest = (
        "sha256:" + hashlib.sha256((tmp_path / "crawl.warc.gz").read_bytes()).hexdigest()
    )
    record_id = json.loads(snap(env, "audit", "--url", URL, "--json"))["captures"][0]["provenance"][
        "warc"
    ]["recordId"]
    snap(env, "export", "--format", "warc", "-o", str(tmp_path / "again.warc.gz"), "--url", URL)
    snap(env, "export", "--format", "wacz", "-o", str(tmp_path / "again.wacz"), "--url", URL)
    with zipfile.ZipFile(tmp_path / "again.wacz") as package:
        inner = package.read("archive/data.warc.gz")
    for name, data in (("WARC", (tmp_path / "again.warc.gz").read_bytes()), ("WACZ", inner)):
        records = warc_records(data)
        [metadata] = [payload for kind, _, payload in records if kind == "metadata"]
        fields = dict(
            line.split(": ", 1) for line in metadata.decode("utf-8").splitlines() if ": " in line
        )
        assert fields["capture-method"] == "import", name
        assert fields["imported-from-file"] == "crawl.warc.gz", name
        assert fields["imported-from-sha256"] == archive_digest, name
        assert fields["imported-from-record-id"] == record_id, name
        assert fields["archive-claimed-ip-address"] == ADDRESS, name
        assert fields["archive-claimed-software"] == "Browsertrix-Crawler 1.2.0", name
        [response] = [headers for kind, headers, _ in records if kind == "response"]
        assert "WARC-IP-Address" not in response, name
    attested = json.loads(snap(env, "attest", "c-imported", "--json"))
    manifest = json.loads(attested["captures"][0]["manifest"]["document"])
    assert manifest["import"]["archive"]["sha256"] == archive_digest
    assert manifest["import"]["archive"]["recordId"] == record_id


authsign_signer = pytest.importorskip("authsign.signer")
authsign_crypto = pytest.importorskip("authsign.crypto")
authsign_model = pytest.importorskip("authsign.model")
authsign_verifier = pytest.importorskip("authsign.verifier")


def wacz_create(warc: Path, output: Path) -> Path:
    wacz = shutil.which("wacz") or str(Path(sys.executable).parent / "wacz")
    subprocess.run([wacz, "create", "-o", str(output), str(warc)], check=True, timeout=120)
    return output


def sign_with_authsign(
    wacz: Path, tsa: LocalTsa, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """Sign ``wacz`` as browsertrix does: authsign's ``Signer`` (domain key and certificate
    from files, as after its ACME step; here a test CA) over the SHA-256 of datapackage.json,
    stamped by the loopback TSA; its ``SignedHash`` becomes ``signedData``."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    domain = "archive.example.test"
    key = authsign_crypto.create_ecdsa_private_key()
    certificate = issue(tsa.ca_key, tsa.ca, domain, key.public_key(), dns=domain)
    output = folder / "authsign"
    output.mkdir()
    (output / "private-key.pem").write_bytes(
        authsign_crypto.save_private_key(key, authsign_signer.PASSPHRASE)
    )
    (output / "cert.pem").write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM)
        + tsa.ca.public_bytes(serialization.Encoding.PEM)
    )
    signer = authsign_signer.Signer(
        domain, "nobody@example.test", 0, output=str(output), timestamping=[{"url": tsa.url}]
    )
    with zipfile.ZipFile(wacz) as package:
        listing = package.read("datapackage.json")
        digest = json.loads(package.read("datapackage-digest.json"))
    created = datetime.now(UTC).replace(microsecond=0)
    request = authsign_model.SignReq(hash=digest["hash"], created=created)
    signed = json.loads(signer(request).model_dump_json())
    assert digest["hash"] == "sha256:" + hashlib.sha256(listing).hexdigest()
    digest["signedData"] = signed
    rewrite(wacz, wacz, "datapackage-digest.json", json.dumps(digest).encode())
    return signed


def rewrite(source: Path, target: Path, member: str, data: bytes) -> None:
    with zipfile.ZipFile(source) as old:
        members = [(info, old.read(info)) for info in old.infolist()]
    with zipfile.ZipFile(target, "w") as new:
        for info, content in members:
            new.writestr(info, data if info.filename == member else content)


@pytest.fixture(scope="module")
def chained_tsa() -> Iterator[LocalTsa]:
    with local_tsa(include_chain=True) as running:
        yield running


def test_a_wacz_signed_by_the_fields_signer_imports_as_verified(
    tmp_path: Path, chained_tsa: LocalTsa, monkeypatch: pytest.MonkeyPatch
) -> None:
    tsa = chained_tsa
    warc = CrawlerWarc(tmp_path / "crawl.warc.gz", software=None)  # no warcinfo: the package's
    warc.response(URL, PAGE)
    warc.write()
    package = wacz_create(warc.path, tmp_path / "crawl.wacz")
    signed = sign_with_authsign(package, tsa, tmp_path, monkeypatch)
    roots = tmp_path / "roots.yaml"
    fingerprint = authsign_crypto.get_fingerprint(tsa.ca)
    roots.write_text(
        f"domain_cert_roots:\n  - {fingerprint}\ntimestamp_cert_roots:\n  - {fingerprint}\n"
    )
    assert authsign_verifier.Verifier(str(roots))(signed)  # the field's verifier accepts it

    env = {"SNAP_HOME": str(tmp_path / "home")}
    snap(env, "import", str(package))
    capture = json.loads(snap(env, "audit", "--url", URL, "--json"))["captures"][0]
    provenance = capture["provenance"]
    assert provenance["archiveSignature"].startswith(
        "valid: signed by domain archive.example.test, root sha256:"
    )
    with zipfile.ZipFile(package) as opened:
        packager = json.loads(opened.read("datapackage.json"))["software"]
    assert provenance["warc"]["software"] == packager  # no warcinfo: datapackage.json names it
    assert provenance["warc"]["package"] == {
        "file": "crawl.wacz",
        "sha256": "sha256:" + hashlib.sha256(package.read_bytes()).hexdigest(),
        "software": packager,
    }
    text = snap(env, "audit", "--url", URL)
    assert f'captured by "{packager}" at the time that archive states' in text

    tampered = tmp_path / "tampered.wacz"
    with zipfile.ZipFile(package) as opened:
        digest = json.loads(opened.read("datapackage-digest.json"))
    value = bytearray(digest["signedData"]["signature"].encode())
    value[10] = ord("A") if value[10] != ord("A") else ord("B")
    digest["signedData"]["signature"] = value.decode()
    rewrite(package, tampered, "datapackage-digest.json", json.dumps(digest).encode())
    env = {"SNAP_HOME": str(tmp_path / "other")}
    snap(env, "import", str(tampered))
    capture = json.loads(snap(env, "audit", "--url", URL, "--json"))["captures"][0]
    assert capture["provenance"]["archiveSignature"].startswith("invalid:")
