"""What one check reads: a snapshot's raw bytes and one extraction's text, each at the version
and in the store recorded when they were captured.

An ``Evidence`` is plain data, taken from the database in a short read transaction, so that the
blob I/O and matching that follow run with no transaction open.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from records.vocabulary import BlobState
from snapshotter.errors import BlobNotFound, IntegrityError, SnapError, StoreError
from snapshotter.head_format import BROWSER_PROVENANCE, HEADERS_BLOB
from snapshotter.store import BlobStore, blob_key, canonical_location, open_store
from snapshotter.store.hashing import NullSink


class TextColumns(Protocol):
    """The text of a capture as its snapshot and each extraction record it."""

    @property
    def extractor(self) -> str: ...
    @property
    def normalizer(self) -> str: ...
    @property
    def text_hash(self) -> str | None: ...
    @property
    def norm_hash(self) -> str | None: ...
    @property
    def text_version_id(self) -> str | None: ...
    @property
    def pages(self) -> list[Any]: ...
    @property
    def flags(self) -> list[Any]: ...


class SnapshotColumns(TextColumns, Protocol):
    """What evidence is made of, from a snapshot: the ORM ``Snapshot`` or a plain row of it
    (``records.rows.SnapshotRow``, what the verify path reads)."""

    @property
    def id(self) -> str: ...
    @property
    def raw_hash(self) -> str: ...
    @property
    def raw_version_id(self) -> str | None: ...
    @property
    def store_location(self) -> str: ...


class ExtractionColumns(TextColumns, Protocol):
    """What evidence is made of, from an extraction (``Extraction`` or ``ExtractionRow``)."""

    @property
    def id(self) -> int: ...
    @property
    def code_hash(self) -> str | None: ...
    @property
    def code_version_id(self) -> str | None: ...


class CaptureColumns(Protocol):
    """What a seal is found by, from a capture (``Capture`` or ``CaptureRow``)."""

    @property
    def id(self) -> int: ...
    @property
    def snapshot_id(self) -> str | None: ...
    @property
    def provenance(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class SealRef:
    """The capture a check reads its snapshot through, as its record names the capture's seal
    (its manifest, signature and timestamp token; records.attest): the check reads the seal
    with the blobs and fails as an integrity failure when it does not hold."""

    capture_id: int
    provenance: dict[str, Any]  # the capture's provenance: its manifest, timestamp and blobs

    @classmethod
    def of(cls, capture: CaptureColumns) -> SealRef:
        return cls(capture.id, dict(capture.provenance or {}))


@dataclass(frozen=True)
class Evidence:
    snapshot_id: str
    raw_hash: str
    raw_version_id: str | None
    store_location: str
    extraction_id: int | None
    extractor: str
    normalizer: str
    text_hash: str | None
    norm_hash: str | None
    text_version_id: str | None
    pages: tuple[Any, ...]
    flags: tuple[str, ...]
    seal: SealRef | None = None  # the capture whose seal a check reads with the blobs
    code_hash: str | None = None  # where the text is code (snapshotter.extract.code_spans)
    code_version_id: str | None = None
    # what the text was made from, when the reader asked (``Extraction.source``: the stored raw
    # bytes, or the page a browser rendered); None: not asked
    source: str | None = None

    @classmethod
    def of(cls, snapshot: SnapshotColumns, extraction: ExtractionColumns | None) -> Evidence:
        """The snapshot with one of its extractions (none: the snapshot's own text columns,
        which describe its first extraction)."""
        source: SnapshotColumns | ExtractionColumns = (
            extraction if extraction is not None else snapshot
        )
        return cls(
            snapshot_id=snapshot.id,
            raw_hash=snapshot.raw_hash,
            raw_version_id=snapshot.raw_version_id,
            store_location=snapshot.store_location,
            extraction_id=extraction.id if extraction is not None else None,
            extractor=source.extractor,
            normalizer=source.normalizer,
            text_hash=source.text_hash,
            norm_hash=source.norm_hash,
            text_version_id=source.text_version_id,
            pages=tuple(source.pages or ()),
            flags=tuple(source.flags or ()),
            code_hash=extraction.code_hash if extraction is not None else None,
            code_version_id=extraction.code_version_id if extraction is not None else None,
        )

    @property
    def hashes(self) -> dict[str, str | None]:
        return {"raw": self.raw_hash, "text": self.text_hash, "norm": self.norm_hash}

    def sealed_by(self, capture: CaptureColumns | None) -> Evidence:
        """The evidence read through ``capture`` (a stored capture of this snapshot), whose
        seal is then checked with the blobs; None leaves it unsealed."""
        if capture is None or capture.snapshot_id != self.snapshot_id:
            return self
        return replace(self, seal=SealRef.of(capture))


class StoreResolver:
    """The store each snapshot was written to. A snapshot recorded in another store than the
    configured one is read from its own store when that can be reached; otherwise the check
    stops with exit 3 and one line, because a configuration slip is not damaged evidence.

    Recorded locations are compared as a store opened from them would record them now
    (``canonical_location``), so a snapshot recorded by the absolute path of a folder inside
    the home, before folder stores were recorded relative to it, is in the configured store."""

    def __init__(
        self,
        configured: BlobStore,
        *,
        lock_mode: str,
        lock_days: int,
        home: Path | None = None,
    ) -> None:
        self.configured = configured
        self._lock = (lock_mode, lock_days)
        self._home = home
        self._opened: dict[str, BlobStore | StoreError] = {configured.location: configured}
        self._canonical: dict[str, str] = {}

    def canonical(self, location: str) -> str:
        """Worked out once per recorded location: every check asks, and the answer (a path
        made absolute and compared with the home) cost 10% of a reverify run's time."""
        found = self._canonical.get(location)
        if found is None:
            found = self._canonical[location] = canonical_location(location, home=self._home)
        return found

    def is_configured(self, location: str) -> bool:
        """Whether a recorded location names the configured store."""
        return self.canonical(location) == self.configured.location

    def store_for(self, evidence: Evidence) -> BlobStore:
        location = self.canonical(evidence.store_location)
        opened = self._opened.get(location)
        if opened is None:
            opened = self._open(location)
            self._opened[location] = opened
        if isinstance(opened, StoreError):
            raise StoreError(
                f"snapshot {evidence.snapshot_id} is stored in {location}; the configured store"
                f" is {self.configured.location}, and {location} cannot be reached"
                f" ({opened.message}); if its blobs were moved: snap store relocate {location}"
            )
        return opened

    def check_all(self, evidence: list[Evidence]) -> None:
        """Before anything is checked or recorded: every store needed can be opened."""
        for item in {id(item): item for item in evidence}.values():  # pinned evidence repeats
            self.store_for(item)

    def _open(self, location: str) -> BlobStore | StoreError:
        try:
            store = open_store(
                location, lock_mode=self._lock[0], lock_days=self._lock[1], home=self._home
            )
            store.probe()
        except StoreError as error:
            return error
        except SnapError as error:  # a configuration error too means "cannot be reached"
            return StoreError(error.message)
        return store


@dataclass(frozen=True)
class BlobCheck:
    """One recorded blob as found now: intact, shadowed, damaged or missing."""

    kind: str
    digest: str
    version_id: str | None
    state: BlobState
    detail: str | None = None

    @property
    def holds(self) -> bool:
        """The evidence is intact (a shadowed blob is: its recorded version hashes)."""
        return self.state.holds

    @property
    def key(self) -> str:
        """Where the blob lives in its store (``raw/sha256/ab/…``)."""
        return blob_key(self.kind, self.digest)


def rehash_blob(store: BlobStore, kind: str, digest: str, version_id: str | None = None) -> None:
    """Stream one blob through the store's verified read path; IntegrityError on mismatch."""
    store.read_into(kind, digest, NullSink(), version_id=version_id)


def blob_state(store: BlobStore, kind: str, digest: str, version_id: str | None) -> BlobCheck:
    """Re-hash the recorded version now, then look for anything written over it."""
    try:
        rehash_blob(store, kind, digest, version_id)
    except IntegrityError as error:
        return BlobCheck(kind, digest, version_id, BlobState.DAMAGED, error.message)
    except BlobNotFound as error:
        return BlobCheck(kind, digest, version_id, BlobState.MISSING, error.message)
    on_top = store.shadowing(kind, digest, version_id)
    if on_top is not None:
        return BlobCheck(kind, digest, version_id, BlobState.SHADOWED, on_top)
    return BlobCheck(kind, digest, version_id, BlobState.INTACT)


def recorded_head(provenance: dict[str, Any] | None) -> tuple[str, str, str | None] | None:
    """(kind, digest, recorded version) of a capture's ``headers`` blob, when it has one (a
    capture made before heads were kept, or of a local file, has none). A fetch and an import
    both record ``{"hash", "size", "versionId"}`` (``snapshotter.capture.store_head``)."""
    named = (provenance or {}).get(HEADERS_BLOB)
    if not isinstance(named, dict) or not isinstance(named.get("hash"), str):
        return None
    version = named.get("versionId")
    return "headers", named["hash"], version if isinstance(version, str) else None


def browser_blobs(provenance: dict[str, Any] | None) -> list[tuple[str, str, str | None]]:
    """(kind, digest, recorded version) of every blob a browser capture's provenance names
    (``browser.blobs``: its browser document, screenshot, DOM, rendered text and every
    subresource body; snapshotter.browser)."""
    summary = (provenance or {}).get(BROWSER_PROVENANCE)
    if not isinstance(summary, dict) or not isinstance(summary.get("blobs"), list):
        return []
    found = []
    for item in summary["blobs"]:
        if isinstance(item, dict) and isinstance(item.get("hash"), str):
            version = item.get("versionId")
            kind = str(item.get("kind"))
            found.append((kind, item["hash"], version if isinstance(version, str) else None))
    return found


def capture_blobs(provenance: dict[str, Any] | None) -> list[tuple[str, str, str | None]]:
    """Every blob a stored capture names beside its snapshot's: its ``headers`` blob and, for
    a browser capture, the browser's blobs."""
    head = recorded_head(provenance)
    return ([head] if head is not None else []) + browser_blobs(provenance)


def recorded_blobs(evidence: Evidence) -> list[tuple[str, str, str | None]]:
    """(kind, digest, recorded version) of the raw bytes and, if any, the extraction's text
    and its code spans."""
    blobs = [("raw", evidence.raw_hash, evidence.raw_version_id)]
    if evidence.text_hash is not None:
        blobs.append(("text", evidence.text_hash, evidence.text_version_id))
    if evidence.code_hash is not None:
        blobs.append(("code", evidence.code_hash, evidence.code_version_id))
    return blobs
