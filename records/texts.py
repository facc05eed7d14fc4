"""Reading snapshot text through the store: digest-checked, decoded and tokenized once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Protocol

from records.evidence import Evidence, StoreResolver
from records.prepared import PreparedFolder
from snapshotter.errors import BlobNotFound, IntegrityError, StoreError
from snapshotter.extract import code_spans
from snapshotter.store import BlobStore
from snapshotter.store.hashing import NullSink
from verifier import CodeSpans, PreparedSource, prepare


def rehash_blob(store: BlobStore, kind: str, digest: str, version_id: str | None = None) -> None:
    """Stream one blob through the store's verified read path; IntegrityError on mismatch."""
    store.read_into(kind, digest, NullSink(), version_id=version_id)


class PreparedCache:
    """Tokenized texts shared by every run of a process, keyed by the text's SHA-256: in memory
    (``snap serve``, bounded by the code points it holds; ``max_code_points=0`` holds none) and,
    given a ``PreparedFolder``, on disk for the next process (``records.prepared``).

    Only the tokenizing is shared, never the reading: each run still reads both blobs back and
    re-hashes them, and takes a text from here only under the digest those bytes just hashed
    to, so a damaged blob is reported exactly as without the cache.  Tokenizing a 100 KB page
    costs about a hundred times reading and hashing it.  A ``PreparedSource`` is safe to share
    between threads: checks only read it (its lazily built index is assigned whole).
    """

    def __init__(
        self, *, max_code_points: int = 32_000_000, folder: PreparedFolder | None = None
    ) -> None:
        self._max = max_code_points
        self.folder = folder
        self._held = 0
        self._texts: OrderedDict[str, PreparedSource] = OrderedDict()
        self._lock = threading.Lock()

    def prepared(
        self, text_hash: str, data: bytes, code: tuple[str, CodeSpans] | None = None
    ) -> PreparedSource:
        """The tokenized text of ``data``, whose SHA-256 the caller has checked is ``text_hash``,
        with its code spans (``code``: their blob's checked digest and the spans), if any."""
        key = text_hash if code is None else f"{text_hash}+{code[0]}"
        with self._lock:
            cached = self._texts.get(key)
            if cached is not None:
                self._texts.move_to_end(key)
                return cached
        source = self._load(text_hash, data.decode("utf-8"), code)  # outside the lock
        if self._max <= 0:
            return source
        with self._lock:
            if key not in self._texts:
                self._texts[key] = source
                self._held += len(source.source)
            while self._held > self._max and len(self._texts) > 1:
                _, dropped = self._texts.popitem(last=False)
                self._held -= len(dropped.source)
        return source

    def _load(
        self, text_hash: str, text: str, code: tuple[str, CodeSpans] | None
    ) -> PreparedSource:
        """From the folder when it holds a sound entry for this text, else tokenized (and kept
        there for the next process).  A text read with code spans is not kept: an entry names
        only its text's digest, and the spans change what is compared."""
        if self.folder is None or code is not None:
            return prepare(text, code[1] if code is not None else None)
        source = self.folder.load(text_hash, text)
        if source is None:
            source = prepare(text)
            self.folder.save(text_hash, source)
        return source


HELD_BYTES = 96 * 2**20  # tokenized texts one run holds: a few 1 MB pages, dozens of small


def _held_bytes(loaded: PreparedSource | StoreError) -> int:
    return loaded.held_bytes() if isinstance(loaded, PreparedSource) else 0


SEALS_HELD = 4096  # seal states a run remembers (a few hundred bytes each)


class Seal(Protocol):
    """A capture's seal as checked (records.attest.checks.SealState)."""

    @property
    def intact(self) -> bool: ...
    def error(self) -> StoreError: ...
    def to_json(self) -> dict[str, Any]: ...


class SealCheck(Protocol):
    """What the texts need of records.attest.checks.SealChecks, named here so that reading
    texts does not import attestation (which imports the workspace, which names the texts)."""

    def evidence_state(self, store: BlobStore, evidence: Evidence) -> Seal | None: ...


class SnapshotTexts:
    """A per-run cache: each extraction's evidence is read, verified and prepared at most once.

    Both blobs are re-hashed, each at the version recorded at capture and from the store it was
    written to: the text is what quotes are matched against, and the raw bytes are the evidence
    that text was extracted from; a quote is never passed against a snapshot whose raw bytes are
    damaged or gone.  A failure is remembered too, so every citation of a damaged snapshot
    reports ``integrity_failure`` without reading it again.  A store that cannot be reached is
    not remembered as damage: it raises StoreError (exit 3) and nothing is recorded.

    Given ``seals``, the seal of the capture each evidence is read through (``Evidence.seal``)
    is read and checked with the blobs, once per run for each capture and text: a seal that
    does not hold fails the read as an integrity failure (``AttestationFailure``, an
    ``IntegrityError``) that says
    which piece failed (records.attest.checks).
    """

    def __init__(
        self,
        stores: StoreResolver,
        *,
        keep: int = 32,
        max_bytes: int = HELD_BYTES,
        shared: PreparedCache | None = None,
        seals: SealCheck | None = None,
    ) -> None:
        self._stores = stores
        self._shared = shared
        # tokenized texts held at once, by number and by bytes (``PreparedSource.held_bytes``):
        # memory stays flat on big batches, whatever the size of their texts
        self._keep = keep
        self._max_bytes = max_bytes
        self._held = 0
        self._prepared: OrderedDict[tuple[str, str], PreparedSource | StoreError] = OrderedDict()
        self._seals = seals
        self._sealed: OrderedDict[tuple[int, str, str | None], Seal | None] = OrderedDict()
        self._seal_documents: dict[tuple[int, str, str | None], dict[str, Any]] = {}

    def prepared(self, evidence: Evidence) -> PreparedSource:
        """The tokenized text; raises IntegrityError if the stored bytes do not match."""
        if evidence.text_hash is None:
            raise ValueError(f"snapshot {evidence.snapshot_id} has no text")
        key = (evidence.snapshot_id, evidence.text_hash)
        cached = self._prepared.get(key)
        if cached is None:
            cached = self._load(evidence)
            self._hold(key, cached)
        self._prepared.move_to_end(key)
        if isinstance(cached, StoreError):
            raise cached
        state = self.seal(evidence)
        if state is not None and not state.intact:
            raise state.error()
        return cached

    def _hold(self, key: tuple[str, str], loaded: PreparedSource | StoreError) -> None:
        """Remember ``loaded``, forgetting the least recently used texts past the bounds (the
        newest is always kept: it is about to be used)."""
        self._prepared[key] = loaded
        self._held += _held_bytes(loaded)
        while len(self._prepared) > 1 and (
            len(self._prepared) > self._keep or self._held > self._max_bytes
        ):
            _, dropped = self._prepared.popitem(last=False)
            self._held -= _held_bytes(dropped)

    def seal(self, evidence: Evidence) -> Seal | None:
        """The seal of the capture ``evidence`` is read through, checked with the raw bytes and
        text it vouches for; None without seal checks or a capture to check."""
        ref = evidence.seal
        if self._seals is None or ref is None:
            return None
        key = (ref.capture_id, evidence.snapshot_id, evidence.text_hash)
        if key not in self._sealed:
            store = self._stores.store_for(evidence)
            self._sealed[key] = self._seals.evidence_state(store, evidence)
            if len(self._sealed) > SEALS_HELD:
                dropped, _ = self._sealed.popitem(last=False)
                self._seal_documents.pop(dropped, None)
        return self._sealed[key]

    def seal_details(self, evidence: Evidence) -> dict[str, Any] | None:
        """``{"seal": seal(evidence).to_json()}``, made once per capture and text and shared
        by the outcomes of every citation read through it that has no details of its own (a
        few hundred bytes a citation over a large batch): read only."""
        state = self.seal(evidence)
        if state is None or evidence.seal is None:
            return None
        key = (evidence.seal.capture_id, evidence.snapshot_id, evidence.text_hash)
        details = self._seal_documents.get(key)
        if details is None:
            details = self._seal_documents[key] = {"seal": state.to_json()}
        return details

    def _load(self, evidence: Evidence) -> PreparedSource | StoreError:
        store = self._stores.store_for(evidence)
        assert evidence.text_hash is not None
        try:
            rehash_blob(store, "raw", evidence.raw_hash, evidence.raw_version_id)
            data = store.get("text", evidence.text_hash, version_id=evidence.text_version_id)
            code = _code_spans(store, evidence, data)
        except (IntegrityError, BlobNotFound) as error:
            return error
        if self._shared is not None:  # store.get has just checked data against text_hash
            return self._shared.prepared(evidence.text_hash, data, code)
        return prepare(data.decode("utf-8"), code[1] if code is not None else None)


def _code_spans(store: BlobStore, evidence: Evidence, text: bytes) -> tuple[str, CodeSpans] | None:
    """The extraction's code spans, read (digest-checked) from their blob, and its digest; None
    when it has none.  A blob that does not describe this text is damaged evidence."""
    if evidence.code_hash is None:
        return None
    data = store.get("code", evidence.code_hash, version_id=evidence.code_version_id)
    length = len(text.decode("utf-8"))
    spans = code_spans.decode(data, text_length=length, digest=evidence.code_hash)
    return evidence.code_hash, spans
