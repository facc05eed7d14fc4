"""Reading snapshot text through the store: digest-checked, decoded and tokenized once."""

from __future__ import annotations

from collections import OrderedDict

from records.models import Snapshot
from snap.errors import BlobNotFound, IntegrityError, StoreError
from snapshotter.store import BlobStore
from snapshotter.store.hashing import NullSink
from verifier import PreparedSource, prepare


def rehash_blob(store: BlobStore, kind: str, digest: str) -> None:
    """Stream one blob through the store's verified read path; IntegrityError on mismatch."""
    store.read_into(kind, digest, NullSink())


class SnapshotTexts:
    """A per-run cache: each snapshot's evidence is read, verified and prepared at most once.

    Both blobs are re-hashed: the text is what quotes are matched against, and the raw bytes
    are the evidence that text was extracted from; a quote is never passed against a snapshot
    whose raw bytes are damaged or gone.  A failure is remembered too, so every citation of a
    damaged snapshot reports ``integrity_failure`` without reading it again.
    """

    def __init__(self, store: BlobStore, *, keep: int = 32) -> None:
        self._store = store
        self._keep = keep  # tokenized texts held at once: memory stays flat on big batches
        self._prepared: OrderedDict[str, PreparedSource | StoreError] = OrderedDict()

    def prepared(self, snapshot: Snapshot) -> PreparedSource:
        """The tokenized text; raises IntegrityError if the stored bytes do not match."""
        if snapshot.text_hash is None:
            raise ValueError(f"snapshot {snapshot.id} has no text")
        cached = self._prepared.get(snapshot.id)
        if cached is None:
            cached = self._load(snapshot.raw_hash, snapshot.text_hash)
            self._prepared[snapshot.id] = cached
            if len(self._prepared) > self._keep:
                self._prepared.popitem(last=False)
        self._prepared.move_to_end(snapshot.id)
        if isinstance(cached, StoreError):
            raise cached
        return cached

    def _load(self, raw_hash: str, text_hash: str) -> PreparedSource | StoreError:
        try:
            rehash_blob(self._store, "raw", raw_hash)
            data = self._store.get("text", text_hash)
        except (IntegrityError, BlobNotFound) as error:
            return error
        return prepare(data.decode("utf-8"))
