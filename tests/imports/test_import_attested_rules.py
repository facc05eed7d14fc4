"""The rules ``records.imports.attested`` applies to one imported capture, on records made up
for each case: what is compared, what only said, and what makes an attestation not hold."""

from __future__ import annotations

import hashlib

from records.attest.manifest import ManifestBlob
from records.imports.attestations import Attestations, AttestedCapture
from records.imports.attested import AttestationCheck
from records.imports.contents import ArchiveContents
from records.vocabulary import ArchiveAttestation
from snapshotter.capture import SnapshotRecord
from snapshotter.store.base import StoredBlob
from snapshotter.times import parse_time

URL = "https://example.test/page"
WHEN = "2026-01-02T03:04:05.000006Z"
EXTRACTOR = "snap-html@2"


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


RAW, TEXT, HEAD, SHOT, BODY = (digest(part) for part in (b"raw", b"text", b"head", b"png", b"css"))


def attested(*blobs: ManifestBlob, problems: tuple[str, ...] = ()) -> AttestedCapture:
    return AttestedCapture(
        label=f"the capture of {URL} at {WHEN} (attestations.jsonl line 1)",
        urls=(URL,),
        moment=parse_time(WHEN),
        blobs=(ManifestBlob("raw", RAW, 3), ManifestBlob("text", TEXT, 4), *blobs),
        extractor=EXTRACTOR,
        manifest=digest(b"manifest"),
        problems=problems,
        seal="signed by key sha256:k, timestamped, in a signed log checkpoint",
    )


def imported(raw: str = RAW, text: str = TEXT, extractor: str = EXTRACTOR) -> SnapshotRecord:
    blob = StoredBlob("raw", raw, "raw/key", 3)
    return SnapshotRecord(
        snapshot_id=raw,
        url=URL,
        final_url=URL,
        fetched_at=WHEN,
        status=200,
        content_type="text/html",
        extractor=extractor,
        normalizer="snap-exact@4",
        raw_hash=raw,
        text_hash=text,
        norm_hash=None,
        raw_size=3,
        text_size=4,
        store="home:store",
        raw_blob=blob,
        text_blob=None,
        pages=(),
        flags=(),
        reason=None,
    )


def check(capture: AttestedCapture, contents: ArchiveContents) -> AttestationCheck:
    return AttestationCheck(Attestations(captures=[capture]), contents)


def carrying(**named: str) -> ArchiveContents:
    """An archive holding a record under each ``urn:snap:<kind>:<digest>`` given, whose payload
    hashes to the value, and the capture's text record."""
    return ArchiveContents(named={f"urn:snap:text:{TEXT}": TEXT, **named})


def test_all_that_is_carried_matching_holds() -> None:
    contents = carrying(**{f"urn:snap:headers:{HEAD}": HEAD})
    checked = check(attested(ManifestBlob("headers", HEAD, 4)), contents)
    snapshot, state = checked.mark(imported())
    assert state is ArchiveAttestation.HOLDS
    held = snapshot.provenance["archiveAttestation"]
    assert held.startswith("holds: manifest sha256:")
    assert "names these raw bytes and their text" in held
    assert checked.problems() == []


def test_a_blob_the_archive_does_not_carry_is_said_but_not_held_against_it() -> None:
    checked = check(attested(ManifestBlob("screenshot", SHOT, 3)), carrying())
    _, state = checked.mark(imported())
    assert state is ArchiveAttestation.HOLDS
    problems = checked.problems()
    assert any(f"no screenshot record urn:snap:screenshot:{SHOT}" in p for p in problems)
    assert all(p.endswith("(not compared)") for p in problems), problems


def test_a_record_under_a_blobs_name_with_other_bytes_does_not_hold() -> None:
    other = digest(b"other png")
    checked = check(
        attested(ManifestBlob("screenshot", SHOT, 3)),
        carrying(**{f"urn:snap:screenshot:{SHOT}": other}),
    )
    snapshot, state = checked.mark(imported())
    assert state is ArchiveAttestation.BROKEN
    expected = (
        f"record urn:snap:screenshot:{SHOT} hashes to {other}, its signed manifest names {SHOT}"
    )
    assert expected in snapshot.provenance["archiveAttestation"]
    assert any(expected in p for p in checked.problems())


def test_a_subresource_body_is_looked_for_among_the_responses() -> None:
    capture = attested(ManifestBlob("resource", BODY, 3))
    missing = check(capture, carrying())
    missing.mark(imported())
    assert any(f"subresource body {BODY}" in p for p in missing.problems()), missing.problems()
    contents = carrying()
    contents.bodies.add(BODY)
    found = check(capture, contents)
    found.mark(imported())
    assert found.problems() == []


def test_text_extracted_by_another_extractor_is_not_compared() -> None:
    checked = check(attested(), carrying())
    snapshot, state = checked.mark(imported(text=digest(b"other text"), extractor="snap-html@3"))
    assert state is ArchiveAttestation.HOLDS
    assert "names these raw bytes," in snapshot.provenance["archiveAttestation"]
    _, alike = check(attested(), carrying()).mark(imported(text=digest(b"other text")))
    assert alike is ArchiveAttestation.BROKEN


def test_an_attestation_that_fails_its_own_checks_does_not_hold() -> None:
    capture = attested(problems=("the manifest's signature does not verify",))
    snapshot, state = check(capture, carrying()).mark(imported())
    assert state is ArchiveAttestation.BROKEN
    assert snapshot.provenance["archiveAttestation"] == (
        "does not hold: the manifest's signature does not verify"
    )


def test_another_url_or_time_is_no_capture_the_archive_attests() -> None:
    checked = check(attested(), carrying())
    later = imported()
    for other in (
        SnapshotRecord(**{**later.__dict__, "url": URL + "?b"}),
        SnapshotRecord(**{**later.__dict__, "fetched_at": "2026-01-02T03:04:06Z"}),
    ):
        snapshot, state = checked.mark(other)
        assert state is ArchiveAttestation.NONE
        assert snapshot.provenance["archiveAttestation"] == "none"
    problems = checked.problems()
    assert problems == [
        f"the capture of {URL} at {WHEN} (attestations.jsonl line 1): no record of the archive"
        " was imported as this capture, so its raw bytes were not compared with its manifest"
    ]
    _, state = checked.mark(imported())
    assert state is ArchiveAttestation.HOLDS
    assert checked.problems() == []
