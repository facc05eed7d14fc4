"""A store batch (``snapshotter.store.batch``) stores exactly what the same puts store one by
one, shows nothing at a content address before ``flush``, and leaves nothing after
``discard``."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import snapshotter.store.batch as batch_module
from snapshotter.errors import IntegrityError
from snapshotter.store import FolderStore
from snapshotter.store.batch import FolderBatch, ImmediateBatch, batched

KINDS = ("raw", "text", "headers", "manifest")


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def contents(store: FolderStore) -> dict[tuple[str, str], bytes]:
    return {(kind, d): store.get(kind, d) for kind, d in store.iterate()}


def leftovers(root: Path) -> list[Path]:
    return list(root.rglob(".tmp-*"))


puts = st.lists(st.tuples(st.sampled_from(KINDS), st.binary(max_size=64)), min_size=0, max_size=12)


@settings(max_examples=40, deadline=None)
@given(
    before=puts, during=puts, syncfs=st.booleans(), unnamed_at_once=st.sampled_from([0, 2, 1024])
)
def test_a_flushed_batch_stores_what_single_puts_store(
    before: list[tuple[str, bytes]],
    during: list[tuple[str, bytes]],
    syncfs: bool,
    unnamed_at_once: int,
) -> None:
    """Whether the blobs wait in unnamed files, named ones, or both (``unnamed_at_once``)."""
    with tempfile.TemporaryDirectory() as name:
        single = FolderStore(Path(name) / "single")
        grouped = FolderStore(Path(name) / "batch")
        for kind, data in before:  # already stored when the batch starts
            single.put(kind, digest(data), data, tags={})
            grouped.put(kind, digest(data), data, tags={})
        expected = [single.put(kind, digest(data), data, tags={}) for kind, data in during]
        stored_before = contents(grouped)
        batch = batched(grouped)
        assert isinstance(batch, FolderBatch)
        original, original_limit = batch_module._durability, batch_module.UNNAMED_AT_ONCE
        if not syncfs:
            batch_module._durability = lambda _root: batch_module._EachFsync()
        batch_module.UNNAMED_AT_ONCE = unnamed_at_once
        try:
            got = [batch.put(kind, digest(data), data, tags={}) for kind, data in during]
            assert contents(grouped) == stored_before  # nothing at an address before flush
            batch.flush()
        finally:
            batch_module._durability, batch_module.UNNAMED_AT_ONCE = original, original_limit
        assert contents(grouped) == contents(single)
        assert [(b.kind, b.digest, b.size) for b in got] == [
            (b.kind, b.digest, b.size) for b in expected
        ]
        assert [b.created for b in got] == [b.created for b in expected]
        assert leftovers(grouped.root) == []


def test_discard_leaves_nothing(tmp_path: Path) -> None:
    store = FolderStore(tmp_path / "store")
    batch = batched(store)
    batch.put("raw", digest(b"abc"), b"abc", tags={})
    batch.discard()
    batch.flush()  # nothing left to make durable
    assert list(store.iterate()) == []
    assert leftovers(store.root) == []


def test_bytes_that_do_not_match_their_digest_are_refused_at_put(tmp_path: Path) -> None:
    batch = batched(FolderStore(tmp_path / "store"))
    with pytest.raises(IntegrityError):
        batch.put("raw", digest(b"abc"), b"abd", tags={})
    batch.put("raw", digest(b"abc"), b"abc", tags={})
    with pytest.raises(IntegrityError):  # the same address again, other bytes
        batch.put("raw", digest(b"abc"), b"abd", tags={})


def test_a_blob_linked_by_another_writer_meanwhile_is_checked_not_replaced(
    tmp_path: Path,
) -> None:
    store = FolderStore(tmp_path / "store")
    batch = batched(store)
    batch.put("raw", digest(b"abc"), b"abc", tags={})
    FolderStore(tmp_path / "store").put("raw", digest(b"abc"), b"abc", tags={})  # a 2nd process
    batch.flush()
    assert store.get("raw", digest(b"abc")) == b"abc"
    assert leftovers(store.root) == []


def test_a_store_without_deferred_writes_is_batched_as_is(tmp_path: Path) -> None:
    class Plain:
        location = "plain:"

        def __init__(self) -> None:
            self.puts: list[str] = []

        def put(self, kind: str, digest: str, source: object, *, tags: object) -> str:
            self.puts.append(digest)
            return digest

    plain = Plain()
    batch = batched(plain)  # type: ignore[arg-type]
    assert isinstance(batch, ImmediateBatch)
    batch.put("raw", digest(b"x"), b"x", tags={})
    assert plain.puts == [digest(b"x")]  # stored (and durable) before flush
    batch.flush()


def test_blobs_wait_in_unnamed_files_where_the_system_has_them(tmp_path: Path) -> None:
    """Nothing beside the blob's address while it waits (no ``.tmp-`` file to create and
    remove); at flush it is linked there, whole and read-only."""
    if not batch_module._unnamed_files_linkable():
        pytest.skip("no O_TMPFILE, syncfs or /proc/self/fd here: named files are used")
    store = FolderStore(tmp_path / "store")
    batch = batched(store)
    blob = batch.put("raw", digest(b"abc"), b"abc", tags={})
    target = store.path_of("raw", digest(b"abc"))
    assert list(target.parent.iterdir()) == []
    batch.flush()
    assert store.get("raw", digest(b"abc")) == b"abc"
    assert (blob.size, blob.created) == (3, True)
    assert target.stat().st_mode & 0o777 == 0o444
    assert list(target.parent.iterdir()) == [target]


def test_a_discarded_batch_closes_its_unnamed_files(tmp_path: Path) -> None:
    store = FolderStore(tmp_path / "store")
    opened = len(list(Path("/proc/self/fd").iterdir())) if Path("/proc/self/fd").is_dir() else 0
    batch = batched(store)
    for n in range(5):
        batch.put("raw", digest(bytes([n])), bytes([n]), tags={})
    batch.discard()
    if Path("/proc/self/fd").is_dir():
        assert len(list(Path("/proc/self/fd").iterdir())) == opened
    batch.flush()
    assert list(store.iterate()) == []


def test_a_batch_looks_each_folder_up_once_and_still_makes_new_ones_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_fan_out: dict[str, list[bytes]] = {}
    for n in range(2000):  # three bodies whose digests share their fan-out folder
        data = str(n).encode()
        same = by_fan_out.setdefault(digest(data)[7:9], [])
        same.append(data)
        if len(same) == 3:
            break
    looked_up: list[Path] = []
    real = batch_module.make_missing_dirs

    def make_missing_dirs(folder: Path) -> list[Path]:
        looked_up.append(folder)
        return real(folder)

    synced: list[Path] = []
    monkeypatch.setattr(batch_module, "make_missing_dirs", make_missing_dirs)
    monkeypatch.setattr(batch_module, "_durability", lambda _root: Recording(synced))
    store = FolderStore(tmp_path / "store")
    batch = batched(store)
    for data in same:
        batch.put("raw", digest(data), data, tags={})
    batch.flush()
    folder = store.path_of("raw", digest(same[0])).parent
    assert looked_up == [folder]
    assert folder.parent in synced  # the new fan-out folder's entry is made durable
    assert sorted(d for _, d in store.iterate()) == sorted(digest(data) for data in same)


class Recording:
    def __init__(self, synced: list[Path]) -> None:
        self.synced = synced

    def files(self, paths: list[Path | int]) -> None:
        batch_module._EachFsync().files(paths)

    def folders(self, paths: list[Path]) -> None:
        self.synced.extend(paths)
        batch_module._EachFsync().folders(paths)
