"""What only the folder store can show: its files, its temporary files, its permissions."""

from __future__ import annotations

import hashlib
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snap.errors import InputError, IntegrityError, StoreError
from snapshotter.store import FolderStore, blob_key


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_files_live_at_the_digest_key_read_only(tmp_path: Path) -> None:
    store = FolderStore(tmp_path)
    digest = sha256(b"page")
    blob = store.put("raw", digest, b"page", tags={"kind": "ignored"})
    path = tmp_path / blob_key("raw", digest)
    assert blob.key == blob_key("raw", digest)
    assert path.read_bytes() == b"page"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert (blob.version_id, blob.lock_mode, blob.retain_until) == (None, None, None)
    assert store.location == tmp_path.as_uri()


def test_no_temporary_file_is_left_behind(tmp_path: Path) -> None:
    store = FolderStore(tmp_path)
    digest = sha256(b"page")
    store.put("raw", digest, b"page", tags={})
    with pytest.raises(IntegrityError):
        store.put("raw", sha256(b"other"), b"page", tags={})
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [digest[7:]]


def test_an_existing_file_is_never_replaced(tmp_path: Path) -> None:
    store = FolderStore(tmp_path)
    digest = sha256(b"page")
    store.put("raw", digest, b"page", tags={})
    inode = store.path_of("raw", digest).stat().st_ino
    assert not store.put("raw", digest, b"page", tags={}).created
    assert store.path_of("raw", digest).stat().st_ino == inode


def test_iterate_skips_files_that_are_not_blobs(tmp_path: Path) -> None:
    store = FolderStore(tmp_path)
    digest = sha256(b"page")
    store.put("text", digest, b"page", tags={})
    fan_out = store.path_of("text", digest).parent
    (fan_out / ".tmp-abandoned").write_bytes(b"half")
    (fan_out / ("0" * 64)).write_bytes(b"wrong fan-out folder")
    (tmp_path / "README").write_text("not a blob")
    (tmp_path / "pdf" / "sha256" / "ab").mkdir(parents=True)
    assert list(store.iterate()) == [("text", digest)]


def test_an_unusable_root_is_a_store_error(tmp_path: Path) -> None:
    root = tmp_path / "a-file"
    root.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot write"):
        FolderStore(root).put("raw", sha256(b"x"), b"x", tags={})


def test_an_unreadable_source_file_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot read"):
        FolderStore(tmp_path).put("raw", sha256(b"x"), tmp_path / "missing", tags={})


@pytest.mark.parametrize(("kind", "digest"), [("pdf", sha256(b"x")), ("raw", "sha256:../../etc")])
def test_only_valid_addresses_become_paths(tmp_path: Path, kind: str, digest: str) -> None:
    with pytest.raises(InputError):
        FolderStore(tmp_path).get(kind, digest)


@settings(max_examples=40, deadline=None)
@given(content=st.binary(max_size=4096), kind=st.sampled_from(["raw", "text"]))
def test_any_content_round_trips(content: bytes, kind: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = FolderStore(Path(folder))
        digest = sha256(content)
        assert store.put(kind, digest, content, tags={}).size == len(content)
        assert store.get(kind, digest) == content
        assert list(store.iterate()) == [(kind, digest)]
