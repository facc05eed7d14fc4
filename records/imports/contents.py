"""What an archive's records hold, read once before anything is imported, for checking its
bytes against the manifests its attestations sign (``records.imports.attested``): a capture
is recorded, and sealed naming what its archive attests, as soon as its response is read,
while the records of its text and headers blobs come after it, and a WARC export's own
attestations end the file.

Read per WARC: the SHA-256 of the payload of each record named after a blob of snap's
(``urn:snap:<kind>:sha256:<hex>``: the text, headers, screenshot, DOM, browser document), of
each ``response`` record's payload (a browser capture's subresource bodies), and the payload
of a ``urn:snap:attestations:…`` record. Payloads are hashed as recorded, never decoded: snap's
exports record each blob byte for byte. A WARC that breaks off is read up to there; saying so
is the import's (``records.imports.warc``), which reads it again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import IO, Any

from records.imports.attestations import MAX_ATTESTATIONS, Attestations, read_attestations
from records.imports.sources import Archive, WarcSource
from snapshotter.errors import SnapError
from snapshotter.store.hashing import digest_of, sha256_of

CHUNK_SIZE = 1024 * 1024
BLOB_NAME = "urn:snap:"  # + kind + ":" + digest: a record of one of snap's blobs
ATTESTATIONS_NAME = "urn:snap:attestations:"  # a WARC export's attestations (JSON lines)


@dataclass
class ArchiveContents:
    """``named``: record name (``urn:snap:text:sha256:…``) → SHA-256 of the first record's
    payload under it; ``bodies``: the SHA-256 of every response payload; ``attestations``:
    what the WARCs' attestations records say."""

    named: dict[str, str] = field(default_factory=dict)
    bodies: set[str] = field(default_factory=set)
    attestations: Attestations = field(default_factory=Attestations)


def read_contents(archive: Archive) -> ArchiveContents:
    """Every WARC of ``archive`` read as far as it can be (see the module docstring)."""
    contents = ArchiveContents()
    for source in archive.warcs:
        try:
            with archive.open(source) as handle:
                _read_warc(handle, source, contents)
        except (SnapError, OSError):  # it cannot be opened again: the import's to say
            continue
    return contents


def _read_warc(handle: IO[bytes], source: WarcSource, contents: ArchiveContents) -> None:
    from warcio.archiveiterator import ArchiveIterator

    records = ArchiveIterator(handle)
    while True:
        try:
            record = next(records)
            _read_record(record, source, contents)
        except StopIteration:
            return
        except Exception:  # damage: the import reads it again and says so
            return


def _read_record(record: Any, source: WarcSource, contents: ArchiveContents) -> None:
    name = str(record.rec_headers.get_header("WARC-Target-URI") or "")
    if name.startswith(ATTESTATIONS_NAME):
        data = record.raw_stream.read(MAX_ATTESTATIONS + 1)
        label = f"the attestations record of {source.name}"
        if len(data) > MAX_ATTESTATIONS:
            contents.attestations.problems.append(f"{label} is too large to check")
            return
        contents.named.setdefault(name, sha256_of(data))
        contents.attestations.extend(read_attestations(data, label))
    elif name.startswith(BLOB_NAME):
        contents.named.setdefault(name, _digest(record.raw_stream))
    elif record.rec_type == "response":
        contents.bodies.add(_digest(record.raw_stream))


def _digest(stream: IO[bytes]) -> str:
    hasher = hashlib.sha256()
    while chunk := stream.read(CHUNK_SIZE):
        hasher.update(chunk)
    return digest_of(hasher)
