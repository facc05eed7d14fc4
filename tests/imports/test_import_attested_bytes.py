"""An archive's bytes are checked against the manifests its attestations sign: a quote changed
in a stored page and in its text record, with the WARC's digests, the WACZ's listing and its
digest all recomputed (``warcio check`` and ``wacz validate`` pass), is imported all the same,
but every blob that differs is an attestation problem naming the capture's URL and time, the
blob and both digests, and the capture says its archive's attestation does not hold for it
(``snap import --json``, ``snap audit``, ``snap show``, its own manifest). A WARC export's own
attestations record is checked the same way."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from snap.cli import cli
from tests.attest.conftest import tsa  # noqa: F401  (fixture)
from tests.attest.tsa import LocalTsa
from tests.imports.sealed import export_two_sealed_captures
from tests.imports.warcs import PAGE

WARC_MEMBER = "archive/data.warc.gz"
ORIGINAL, FORGED = b"origin rests", b"origin RESTS"


@dataclass(frozen=True)
class Exports:
    url: str
    wacz: Path
    warc: Path


@pytest.fixture(scope="module")
def exported(tsa: LocalTsa, tmp_path_factory: pytest.TempPathFactory) -> Exports:  # noqa: F811
    """A page fetched twice (the second capture a revisit of the first's bytes), signed and
    stamped, exported by snap as a WACZ and as a WARC."""
    folder = tmp_path_factory.mktemp("attested-bytes")
    url = export_two_sealed_captures(folder, tsa, ["wacz", "warc"])
    return Exports(url, folder / "evidence.wacz", folder / "evidence.warc.gz")


def forged_warc(
    data: bytes, old: bytes = ORIGINAL, new: bytes = FORGED, *, dated: str | None = None
) -> bytes:
    """``data`` with ``old`` replaced by ``new`` in every record's block (and, ``dated``, every
    record's WARC-Date moved to that year), each record's WARC-Block-Digest and
    WARC-Payload-Digest recomputed, as a careful forger would."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    replaced = 0
    for record in ArchiveIterator(io.BytesIO(data)):
        payload = record.raw_stream.read()
        replaced += old in payload
        payload = payload.replace(old, new)
        headers = record.rec_headers
        if dated is not None and headers.get_header("WARC-Date"):
            headers.replace_header("WARC-Date", dated + headers.get_header("WARC-Date")[4:])
        rewritten = writer.create_warc_record(
            headers.get_header("WARC-Target-URI"),
            record.rec_type,
            payload=io.BytesIO(payload),
            length=len(payload),
            http_headers=record.http_headers,
            warc_headers=headers,
        )
        for name in ("WARC-Block-Digest", "WARC-Payload-Digest"):
            rewritten.rec_headers.remove_header(name)
        writer.ensure_digest(rewritten, block=True, payload=True)
        writer.write_record(rewritten)
    assert replaced >= 1 or dated is not None
    return out.getvalue()


def repackaged(source: Path, target: Path, member: str, data: bytes) -> Path:
    """``source`` with ``member`` replaced by ``data``, its listing's hash and size of it and
    the listing's own digest recomputed."""
    with zipfile.ZipFile(source) as old:
        listing = json.loads(old.read("datapackage.json"))
        for resource in listing["resources"]:
            if resource["path"] == member:
                resource["hash"] = "sha256:" + hashlib.sha256(data).hexdigest()
                resource["bytes"] = len(data)
        relisted = json.dumps(listing).encode()
        digest = json.loads(old.read("datapackage-digest.json"))
        digest["hash"] = "sha256:" + hashlib.sha256(relisted).hexdigest()
        digest.pop("signedData", None)
        changed = {member: data, "datapackage.json": relisted}
        changed["datapackage-digest.json"] = json.dumps(digest).encode()
        with zipfile.ZipFile(target, "w") as new:
            for info in old.infolist():
                new.writestr(info, changed.get(info.filename, old.read(info)))
    return target


def snap_json(home: Path, *args: str, code: int = 0) -> Any:
    done = CliRunner().invoke(cli, [*args, "--json"], env={"SNAP_HOME": str(home)})
    assert done.exit_code == code, done.output
    return json.loads(done.stdout)


def snap_text(home: Path, *args: str) -> str:
    done = CliRunner().invoke(cli, list(args), env={"SNAP_HOME": str(home)})
    assert done.exit_code == 0, done.output
    return str(done.stdout)


def captures(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in report["records"] if r["captureId"] is not None]


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_snaps_own_export_holds_for_every_capture(exported: Exports, tmp_path: Path) -> None:
    for archive in (exported.wacz, exported.warc):
        report = snap_json(tmp_path / archive.name, "import", str(archive))
        assert report["summary"]["attestationProblems"] == []
        assert [r["attestation"] for r in captures(report)] == ["holds", "holds"]
        audited = snap_json(tmp_path / archive.name, "audit", "--url", exported.url)
        for capture in audited["captures"]:
            held = capture["provenance"]["archiveAttestation"]
            assert held.startswith("holds: manifest sha256:"), held
            assert "signed by key sha256:" in held
            assert ", timestamped, in a signed log checkpoint" in held


@pytest.mark.parametrize("kind", ["wacz", "warc"])
def test_a_quote_changed_with_every_digest_recomputed_is_named(
    exported: Exports, tmp_path: Path, kind: str
) -> None:
    if kind == "wacz":
        with zipfile.ZipFile(exported.wacz) as package:
            original = package.read(WARC_MEMBER)
        forged = repackaged(
            exported.wacz, tmp_path / "forged.wacz", WARC_MEMBER, forged_warc(original)
        )
    else:
        forged = tmp_path / "forged.warc.gz"
        forged.write_bytes(forged_warc(exported.warc.read_bytes()))
    home = tmp_path / "home"
    report = snap_json(home, "import", str(forged))
    assert report["summary"]["exitCode"] == 0  # imported all the same: nothing is lost
    assert [r["attestation"] for r in captures(report)] == ["does not hold"] * 2
    problems = report["summary"]["attestationProblems"]
    page = PAGE.replace(ORIGINAL, FORGED)
    raw = [p for p in problems if "the raw bytes imported hash to" in p]
    assert len(raw) == 2, problems  # each capture, named by its URL and time
    for problem in raw:
        assert problem.startswith(f"the capture of {exported.url} at 20")
        assert f"hash to {sha256(page)}, its signed manifest names {sha256(PAGE)}" in problem
    assert any(
        "the text extracted on import (by the same extractor) hashes to" in p for p in problems
    ), problems
    texts = [p for p in problems if "the archive's text record urn:snap:text:sha256:" in p]
    assert texts, problems
    assert all("its signed manifest names sha256:" in p for p in texts)
    assert not any("capture 1" in p or "capture 2" in p for p in problems), problems

    audited = snap_json(home, "audit", "--url", exported.url)
    for capture in audited["captures"]:
        state = capture["provenance"]["archiveAttestation"]
        assert state.startswith("does not hold: the raw bytes imported hash to"), state
    text = snap_text(home, "audit", "--url", exported.url)
    assert text.count("its archive's attestation does not hold: the raw bytes") == 2
    shown = snap_json(home, "show", str(captures(report)[0]["snapshotId"]))
    assert "; its archive's attestation does not hold: " in shown["origin"]
    out = snap_text(home, "import", str(forged))
    assert "attestation problem: the capture of " in out
    assert "attestation problems in the archive (reported;" in out


def test_the_importers_own_manifest_names_what_was_found(exported: Exports, tmp_path: Path) -> None:
    with zipfile.ZipFile(exported.wacz) as package:
        original = package.read(WARC_MEMBER)
    forged = repackaged(exported.wacz, tmp_path / "forged.wacz", WARC_MEMBER, forged_warc(original))
    home = tmp_path / "home"
    report = snap_json(home, "import", str(forged))
    attested = snap_json(home, "attest", str(captures(report)[0]["snapshotId"]))
    assert len(attested["captures"]) == 2
    for capture in attested["captures"]:
        manifest = json.loads(capture["manifest"]["document"])
        assert manifest["import"]["archive"]["attestation"].startswith("does not hold: ")


def test_a_capture_time_changed_in_the_archive_is_not_attested(
    exported: Exports, tmp_path: Path
) -> None:
    """Moved to another second, the page is no capture the archive attests: it says none, and
    the attested captures were not imported as such."""
    data = exported.warc.read_bytes()
    forged = tmp_path / "moved.warc.gz"
    forged.write_bytes(forged_warc(data, dated="2001"))
    report = snap_json(tmp_path / "home", "import", str(forged))
    assert {r["attestation"] for r in captures(report)} == {"none"}
    problems = report["summary"]["attestationProblems"]
    assert sum("no record of the archive was imported as this capture" in p for p in problems) == 2


def test_a_changed_attestations_record_is_said_by_its_name(
    exported: Exports, tmp_path: Path
) -> None:
    """A WARC export's attestations record is named after its SHA-256."""
    data = exported.warc.read_bytes()
    forged = tmp_path / "renamed.warc.gz"
    forged.write_bytes(forged_warc(data, b'"captureId": 1', b'"captureId": 7'))
    problems = snap_json(tmp_path / "home", "import", str(forged))["summary"]["attestationProblems"]
    assert any(
        p.startswith("the archive's attestations record urn:snap:attestations:sha256:")
        for p in problems
    ), problems


def test_a_check_of_the_changed_quote_says_the_attestation_does_not_hold(
    exported: Exports, tmp_path: Path
) -> None:
    """The changed quote is found in what was imported (an import keeps what its archive
    holds); the check's seal says whose seal it is, and that the archive's does not hold."""
    forged = tmp_path / "forged.warc.gz"
    forged.write_bytes(forged_warc(exported.warc.read_bytes()))
    home = tmp_path / "home"
    snap_json(home, "import", str(forged))
    citations = tmp_path / "citations.json"
    quote = "Raise the ratio and the " + FORGED.decode()
    citations.write_text(json.dumps([{"citationId": "c", "url": exported.url, "quote": quote}]))
    result = snap_json(home, "verify", str(citations))["results"][0]
    assert result["status"] == "quote_found", result
    notes = result["seal"]["notes"]
    assert any(n.startswith("imported: its archive's attestation does not hold: ") for n in notes)
    told = snap_text(home, "verify", str(citations)).splitlines()
    assert any(
        line.startswith("✗ capture ")
        and line.endswith(
            "was imported, and its archive's attestation does not hold for it"
            " (snap audit shows what differs)"
        )
        for line in told
    ), told


def test_an_import_exported_again_holds_where_it_is_imported_next(
    exported: Exports, tmp_path: Path
) -> None:
    """snap's own export, imported, exported again by the importer and imported elsewhere:
    the second archive attests the first import (its manifest says import, its time the
    archive's), and holds for what the second import stored."""
    first = tmp_path / "first"
    snap_json(first, "import", str(exported.wacz))
    again = tmp_path / "again.wacz"
    done = CliRunner().invoke(
        cli,
        ["export", "--format", "wacz", "-o", str(again), "--url", exported.url],
        env={"SNAP_HOME": str(first)},
    )
    assert done.exit_code == 0, done.output
    report = snap_json(tmp_path / "second", "import", str(again))
    assert report["summary"]["attestationProblems"] == []
    assert [r["attestation"] for r in captures(report)] == ["holds", "holds"]
