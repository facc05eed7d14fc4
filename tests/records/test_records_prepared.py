"""Prepared sources kept across processes (records.prepared): a damaged, truncated or foreign
entry is rebuilt and the answers do not change; writers at once leave whole entries; the folder
stays bounded; snap verify and snap reverify load from it, and SNAP_PREPARED_CACHE=off turns it
off."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import records.texts
import verifier.packed
from records.prepared import KEY_SIZE, SUFFIX, PreparedFolder, read_or_make_key
from records.texts import PreparedCache
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend
from verifier import CodeSpans, PreparedSource, prepare
from verifier.packed import pack

TEXTS = [
    f"Text {n}: the origin serves only 1 request in {n}0, and NASA’s 5'000 MW [1] 👩\u200d💻. " * 40
    for n in range(1, 5)
]
QUOTES = ["serves only 1 request in 10", "NASA’s 5'000 MW", "serves only 2 requests", "nasa"]


def digest_of(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def answers(source: PreparedSource) -> list[object]:
    return [source.check(quote) for quote in QUOTES]


def counting_prepare(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the texts records tokenize (rather than load)."""
    prepared: list[str] = []

    def counted(text: str, code: CodeSpans | None = None) -> PreparedSource:
        prepared.append(text)
        return prepare(text, code)

    monkeypatch.setattr(records.texts, "prepare", counted)
    return prepared


def test_an_entry_is_loaded_by_the_next_process_with_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared = counting_prepare(monkeypatch)
    text = TEXTS[0]
    first = PreparedCache(max_code_points=0, folder=PreparedFolder(tmp_path))
    expected = answers(first.prepared(digest_of(text), text.encode()))
    assert len(prepared) == 1
    assert PreparedFolder(tmp_path).entry_path(digest_of(text)).is_file()
    later = PreparedCache(max_code_points=0, folder=PreparedFolder(tmp_path))  # a new process
    assert answers(later.prepared(digest_of(text), text.encode())) == expected
    assert len(prepared) == 1  # loaded, not tokenized again


def flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def foreign_version(path: Path) -> None:
    """An entry packed by another version of the tokenizer, under the same name."""
    text = TEXTS[0]
    saved = verifier.packed.PACKED_ID
    verifier.packed.PACKED_ID = "snap-prepared@0 snap-verifier@2"
    try:
        data = pack(prepare(text), f"{digest_of(text)} {path.parent.parent.name}")
    finally:
        verifier.packed.PACKED_ID = saved
    path.write_bytes(data)


def another_texts_entry(path: Path) -> None:
    """A sound entry of another text put under this text's name."""
    other = PreparedFolder(path.parents[2])
    other.save(digest_of(TEXTS[1]), prepare(TEXTS[1]))
    path.write_bytes(other.entry_path(digest_of(TEXTS[1])).read_bytes())


def empty(path: Path) -> None:
    path.write_bytes(b"")


def forged_without_the_key(path: Path) -> None:
    """Another text's tokens under this text's name and binding, sealed by someone who can
    write the folder but does not hold the home's secret (their own key, or none)."""
    binding = f"{digest_of(TEXTS[0])} {path.parent.parent.name}"
    path.write_bytes(pack(prepare(TEXTS[1]), binding, key=b"k" * KEY_SIZE))


def sealed_without_a_key(path: Path) -> None:
    path.write_bytes(pack(prepare(TEXTS[0]), f"{digest_of(TEXTS[0])} {path.parent.parent.name}"))


@pytest.mark.parametrize(
    "damage",
    [
        flip,
        truncate,
        foreign_version,
        another_texts_entry,
        empty,
        forged_without_the_key,
        sealed_without_a_key,
    ],
)
def test_a_damaged_or_foreign_entry_is_rebuilt_and_the_answers_do_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[Path], None]
) -> None:
    text = TEXTS[0]
    expected = answers(prepare(text))
    PreparedCache(max_code_points=0, folder=PreparedFolder(tmp_path)).prepared(
        digest_of(text), text.encode()
    )
    entry = PreparedFolder(tmp_path).entry_path(digest_of(text))
    damage(entry)
    prepared = counting_prepare(monkeypatch)
    cache = PreparedCache(max_code_points=0, folder=PreparedFolder(tmp_path))
    assert answers(cache.prepared(digest_of(text), text.encode())) == expected
    assert prepared == [text]  # the entry was not trusted: the text was tokenized again
    rebuilt = PreparedFolder(tmp_path).load(digest_of(text), text)
    assert rebuilt is not None  # and its entry written again, whole
    assert answers(rebuilt) == expected


def write_and_read(folder: str, rounds: int) -> list[bool]:
    """One process of several writing and reading the same entries at once: whether each load
    found a sound entry (None is a miss; a wrong answer fails)."""
    cache_folder = PreparedFolder(Path(folder))
    found = []
    for round_ in range(rounds):
        for text in TEXTS:
            loaded = cache_folder.load(digest_of(text), text)
            found.append(loaded is not None)
            if loaded is not None:
                assert answers(loaded) == answers(prepare(text))
            if round_ % 2 == 0:
                cache_folder.save(digest_of(text), prepare(text))
    return found


def test_writers_at_once_leave_whole_entries(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(4, mp_context=context) as pool:
        runs = [pool.submit(write_and_read, str(tmp_path), 6) for _ in range(4)]
        found = [hit for run in runs for hit in run.result(timeout=300)]
    assert any(found)
    entries = list(tmp_path.glob(f"*/*/*{SUFFIX}"))
    assert len(entries) == len(TEXTS)
    assert not [path for path in tmp_path.glob("*/*/*") if not path.name.endswith(SUFFIX)]
    for text in TEXTS:
        loaded = PreparedFolder(tmp_path).load(digest_of(text), text)
        assert loaded is not None
        assert answers(loaded) == answers(prepare(text))


def test_the_folder_stays_bounded_and_keeps_what_was_used_last(tmp_path: Path) -> None:
    sizes = []
    for text in TEXTS:
        PreparedFolder(tmp_path).save(digest_of(text), prepare(text))
        sizes.append(PreparedFolder(tmp_path).entry_path(digest_of(text)).stat().st_size)
    for path in tmp_path.glob(f"*/*/*{SUFFIX}"):
        os.utime(path, (1_000_000, 1_000_000))  # all used long ago ...
    PreparedFolder(tmp_path).load(digest_of(TEXTS[0]), TEXTS[0])  # ... but the first, now
    bounded = PreparedFolder(tmp_path, max_bytes=sizes[0] * 2 + sizes[1] // 2)
    extra = "Another text altogether, saved last. " * 40
    bounded.save(digest_of(extra), prepare(extra))
    held = sum(path.stat().st_size for path in tmp_path.glob(f"*/*/*{SUFFIX}"))
    assert held <= bounded.max_bytes * 3 // 4
    assert bounded.load(digest_of(TEXTS[0]), TEXTS[0]) is not None  # used last: kept
    assert bounded.load(digest_of(TEXTS[3]), TEXTS[3]) is None


def test_a_folder_that_cannot_be_written_is_a_miss(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    cache = PreparedCache(max_code_points=0, folder=PreparedFolder(blocked))
    text = TEXTS[0]
    assert answers(cache.prepared(digest_of(text), text.encode())) == answers(prepare(text))


ARTICLE = b"""<!DOCTYPE html><html><head><title>Caching</title></head><body><article>
<h1>Caching at the edge</h1><p>A cache hit ratio of 90 percent means the origin serves only
1 request in 10. Raising it to 99 percent means the origin serves only 1 request in 100.</p>
</article></body></html>"""


def cite(backend: Backend, server: LoopbackServer, tmp_path: Path) -> Path:
    server.route("/cdn", body=ARTICLE)
    done = backend.snap("fetch", server.url("/cdn"), "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    path = tmp_path / "citation.json"
    quote = {"url": server.url("/cdn"), "snapshotId": record["snapshotId"]}
    path.write_text(json.dumps(quote | {"citationId": "c-1", "quote": "serves only 1 request"}))
    return path


def test_verify_and_reverify_load_prepared_sources_from_the_folder(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    citation = cite(backend, http_server, tmp_path)
    prepared = counting_prepare(monkeypatch)
    done = backend.snap("verify", str(citation))
    assert done.returncode == 0, done.stderr
    assert len(prepared) == 1
    assert list((Path(backend.env["SNAP_HOME"]) / "prepared").glob(f"*/*/*{SUFFIX}"))
    # reverify --enqueue with no broker runs each item in process as a worker does (run_item)
    for command in (["verify", str(citation)], ["reverify"], ["reverify", "--enqueue"]):
        done = backend.snap(*command, "--json")
        assert done.returncode == 0, done.stderr
        assert "quote_found" in done.stdout
    assert len(prepared) == 1  # later commands loaded the text's tokens


def test_snap_prepared_cache_off_keeps_nothing(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    citation = cite(backend, http_server, tmp_path)
    prepared = counting_prepare(monkeypatch)
    backend.env["SNAP_PREPARED_CACHE"] = "off"
    for command in (["verify", str(citation)], ["reverify"]):
        done = backend.snap(*command)
        assert done.returncode == 0, done.stderr
    assert len(prepared) == 2  # each command tokenized the text
    assert not (Path(backend.env["SNAP_HOME"]) / "prepared").exists()


def test_snap_prepared_cache_names_the_folder(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    citation = cite(backend, http_server, tmp_path)
    backend.env["SNAP_PREPARED_CACHE"] = str(tmp_path / "elsewhere")
    done = backend.snap("verify", str(citation))
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "elsewhere").glob(f"*/*/*{SUFFIX}"))
    assert not (Path(backend.env["SNAP_HOME"]) / "prepared").exists()


def test_the_secret_is_the_homes_own_beside_the_folder_and_made_once(tmp_path: Path) -> None:
    folder = PreparedFolder(tmp_path / "prepared")
    key = folder.key()
    assert key is not None
    assert len(key) == KEY_SIZE
    assert folder.key_file == tmp_path / "prepared.key"  # outside the folder it seals
    assert (folder.key_file.stat().st_mode & 0o777) == 0o600
    assert PreparedFolder(tmp_path / "prepared").key() == key  # the next process reads it
    assert read_or_make_key(tmp_path / "other" / "prepared.key") != key  # another home's differs


def test_a_secret_that_cannot_be_read_turns_the_folder_off_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short secret (a writer killed mid-write) is as none: nothing is loaded or saved, and
    it is read once, not waited for again on each load."""
    (tmp_path / "prepared.key").write_bytes(b"short")
    reads: list[Path] = []
    monkeypatch.setattr(
        "records.prepared.read_or_make_key", lambda path: reads.append(path) or None
    )
    folder = PreparedFolder(tmp_path / "prepared")
    text = TEXTS[0]
    folder.save(digest_of(text), prepare(text))
    assert folder.load(digest_of(text), text) is None
    assert not (tmp_path / "prepared").exists()
    assert reads == [tmp_path / "prepared.key"]
