"""An archive's bytes checked against the manifests its attestations sign: a quote changed in
a stored page, its WARC digests and the WACZ's listing recomputed, passes ``warcio check`` and
``wacz validate``, but not this.

An imported capture is matched to the capture an attestation vouches for by URL (requested or
served) and capture time, as the export wrote its response record. Then:

- the raw bytes imported hash to the manifest's ``raw`` blob;
- the text extracted on import hashes to its ``text`` blob, when it was extracted by the same
  extractor (another extractor may give other text from the same bytes: then the archive's own
  text record stands for it);
- every other blob it names is a record of the archive whose payload hashes to it: a record
  named after it (``urn:snap:<kind>:<digest>``: text, headers, screenshot, DOM, browser
  document), or a response's body (a browser capture's subresource).

Each difference is an attestation problem naming the capture's URL and time, the blob and both
digests; a blob the archive does not carry is said too (not compared). The capture is imported
all the same (an import claims nothing of its own) and its provenance says whether its
archive's attestation holds for it (``archiveAttestation``, ``ArchiveAttestation``): ``none``,
``holds: …`` or ``does not hold: …`` and why, which its own manifest then names, and which
``snap show``, ``snap audit`` and a check's seal notes repeat.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from records.attest.manifest import ARCHIVE_ATTESTATION
from records.imports.attestations import Attestations, AttestedCapture
from records.imports.contents import ATTESTATIONS_NAME, ArchiveContents
from records.urls import canonical_url
from records.vocabulary import ArchiveAttestation
from snapshotter.capture import SnapshotRecord
from snapshotter.times import parse_time

SUBRESOURCE = "resource"  # a browser capture's subresource body: a response record's payload
NOT_COMPARED = "(not compared)"  # ends the problem of a blob the archive does not carry

Key = tuple[str, datetime]


class AttestationCheck:
    """The attestations of one archive, checked against its records before anything is
    imported and against each capture as it is imported (``mark``)."""

    def __init__(self, attestations: Attestations, contents: ArchiveContents) -> None:
        self.captures = attestations.captures
        self._problems = list(attestations.problems) + _named_problems(contents)
        self._archive = [_archive_problems(capture, contents) for capture in self.captures]
        self._by_key: dict[Key, list[int]] = {}
        for index, capture in enumerate(self.captures):
            for key in _keys(capture):
                self._by_key.setdefault(key, []).append(index)
        self._matched: set[int] = set()
        self._imported: dict[int, list[str]] = {}

    def mark(self, snapshot: SnapshotRecord) -> tuple[SnapshotRecord, ArchiveAttestation]:
        """``snapshot`` with ``archiveAttestation`` in its provenance (whether the archive's
        attestation of this URL at this time holds for the bytes imported), and that state."""
        state, detail = self._state(snapshot)
        provenance = {**snapshot.provenance, ARCHIVE_ATTESTATION: detail}
        return dataclasses.replace(snapshot, provenance=provenance), state

    def problems(self) -> list[str]:
        """Every problem found, once each: the lines', then per attested capture what its
        archive holds and what was imported as it, then what was never imported."""
        found = list(self._problems)
        for index, capture in enumerate(self.captures):
            own = self._imported.get(index, []) + self._archive[index]
            found += [f"{capture.label}: {problem}" for problem in own]
            if index not in self._matched and _importable(capture):
                found.append(
                    f"{capture.label}: no record of the archive was imported as this capture,"
                    " so its raw bytes were not compared with its manifest"
                )
        return list(dict.fromkeys(found))

    def _state(self, snapshot: SnapshotRecord) -> tuple[ArchiveAttestation, str]:
        key = _key(snapshot.url, snapshot.fetched_at)
        indexes = self._by_key.get(key, []) if key is not None else []
        if not indexes:
            return ArchiveAttestation.NONE, str(ArchiveAttestation.NONE)
        reasons: list[str] = []
        for index in indexes:
            self._matched.add(index)
            capture = self.captures[index]
            differences = _import_differences(capture, snapshot)
            known = self._imported.setdefault(index, [])
            known += [difference for difference in differences if difference not in known]
            reasons += [*differences, *capture.problems, *_compared(self._archive[index])]
        if reasons:
            broken = ArchiveAttestation.BROKEN
            return broken, f"{broken}: " + "; ".join(dict.fromkeys(reasons))
        holding = "; ".join(
            f"manifest {self.captures[index].manifest} names these raw bytes"
            f"{' and their text' if _text_compared(self.captures[index], snapshot) else ''},"
            f" {self.captures[index].seal}"
            for index in indexes
        )
        holds = ArchiveAttestation.HOLDS
        return holds, f"{holds}: {holding} (checked offline: whose key and which TSA are not)"


def _keys(capture: AttestedCapture) -> list[Key]:
    if capture.moment is None:
        return []
    return [(canonical_url(url), capture.moment) for url in capture.urls]


def _key(url: str, when: str) -> Key | None:
    try:
        return canonical_url(url), parse_time(when)
    except ValueError:
        return None


def _importable(capture: AttestedCapture) -> bool:
    """Whether an import would make a capture of it: http and https only (a local file's
    ``resource`` record is not imported)."""
    return any(url.lower().startswith(("http://", "https://")) for url in capture.urls)


def _import_differences(capture: AttestedCapture, snapshot: SnapshotRecord) -> list[str]:
    """The raw bytes and text imported against the manifest's raw and text blobs."""
    raw = capture.blob("raw")
    if raw is None:
        return ["its manifest names no raw bytes"]
    found = []
    if raw.digest != snapshot.raw_hash:
        found.append(
            f"the raw bytes imported hash to {snapshot.raw_hash}, its signed manifest names"
            f" {raw.digest}"
        )
    text = capture.blob("text")
    if text is not None and _text_compared(capture, snapshot) and text.digest != snapshot.text_hash:
        found.append(
            f"the text extracted on import (by the same extractor) hashes to"
            f" {snapshot.text_hash}, its signed manifest names {text.digest}"
        )
    return found


def _text_compared(capture: AttestedCapture, snapshot: SnapshotRecord) -> bool:
    """Whether the text imported can be compared with the manifest's: extracted alike."""
    same = capture.extractor is not None and capture.extractor == snapshot.extractor
    return same and capture.blob("text") is not None


def _archive_problems(capture: AttestedCapture, contents: ArchiveContents) -> list[str]:
    """Each blob the manifest names that the archive holds other bytes for, or not at all."""
    found = []
    for blob in capture.blobs:
        if blob.kind == "raw":
            continue  # the response imported as the capture: compared as it is imported
        if blob.kind == SUBRESOURCE:
            if blob.digest not in contents.bodies:
                found.append(
                    f"no response record of the archive holds the subresource body"
                    f" {blob.digest} its signed manifest names {NOT_COMPARED}"
                )
            continue
        name = f"urn:snap:{blob.kind}:{blob.digest}"
        actual = contents.named.get(name)
        if actual is None:
            found.append(
                f"the archive holds no {blob.kind} record {name}, whose bytes its signed"
                f" manifest names {NOT_COMPARED}"
            )
        elif actual != blob.digest:
            found.append(
                f"the archive's {blob.kind} record {name} hashes to {actual}, its signed"
                f" manifest names {blob.digest}"
            )
    return found


def _compared(problems: list[str]) -> list[str]:
    """The blobs that differ, for an imported capture's provenance: a blob only missing (not
    compared) does not make its attestation fail."""
    return [problem for problem in problems if not problem.endswith(NOT_COMPARED)]


def _named_problems(contents: ArchiveContents) -> list[str]:
    """A WARC export's attestations record is named after its own SHA-256."""
    return [
        f"the archive's attestations record {name} hashes to {actual}"
        for name, actual in contents.named.items()
        if name.startswith(ATTESTATIONS_NAME) and name.removeprefix(ATTESTATIONS_NAME) != actual
    ]
