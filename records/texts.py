"""Reading snapshot text through the store: digest-checked, decoded and tokenized once."""

from __future__ import annotations

from records.models import Snapshot
from snap.errors import IntegrityError
from snapshotter.store import BlobStore
from verifier import PreparedSource, prepare


class _NullSink:
    """Discards bytes: a blob streamed only to be re-hashed never sits in memory whole."""

    def write(self, data: bytes) -> int:
        return len(data)


def rehash_blob(store: BlobStore, kind: str, digest: str) -> None:
    """Stream one blob through the store's verified read path; IntegrityError on mismatch."""
    store.read_into(kind, digest, _NullSink())  # type: ignore[arg-type]


class SnapshotTexts:
    """A per-run cache: each snapshot's text is read, verified and prepared at most once.

    A digest mismatch is remembered too, so every citation of a corrupted snapshot reports
    ``integrity_failure`` without reading it again.
    """

    def __init__(self, store: BlobStore) -> None:
        self._store = store
        self._prepared: dict[str, PreparedSource | IntegrityError] = {}

    def prepared(self, snapshot: Snapshot) -> PreparedSource:
        """The tokenized text; raises IntegrityError if the stored bytes do not match."""
        if snapshot.text_hash is None:
            raise ValueError(f"snapshot {snapshot.id} has no text")
        cached = self._prepared.get(snapshot.id)
        if cached is None:
            cached = self._load(snapshot.text_hash)
            self._prepared[snapshot.id] = cached
        if isinstance(cached, IntegrityError):
            raise cached
        return cached

    def _load(self, text_hash: str) -> PreparedSource | IntegrityError:
        try:
            data = self._store.get("text", text_hash)
        except IntegrityError as error:
            return error
        return prepare(data.decode("utf-8"))

    def loaded(self) -> dict[str, PreparedSource]:
        """Snapshots whose text was read successfully in this run, by id."""
        return {
            key: value for key, value in self._prepared.items() if isinstance(value, PreparedSource)
        }
