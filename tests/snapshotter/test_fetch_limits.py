"""The size cap: declared, streamed, and after decompression (a gzip bomb is refused)."""

from __future__ import annotations

import gzip
import hashlib
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from snap.errors import FetchError, TooLarge
from snapshotter import fetch as fetch_module
from snapshotter.fetch import FetchOptions, fetch, fetching
from tests.http_fixtures import LoopbackServer

MIB = 1024 * 1024
TEXT = ("The quick brown fox jumps over the lazy dog. " * 200).encode()


@pytest.fixture
def discarded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sizes of the temporary files fetch threw away, so a test can bound the disk used."""
    sizes: list[int] = []
    real = fetch_module._discard

    def record(path: Path) -> None:
        if path.exists():
            sizes.append(path.stat().st_size)
        real(path)

    monkeypatch.setattr(fetch_module, "_discard", record)
    return sizes


def test_declared_oversize_is_refused_before_reading(
    http_server: LoopbackServer,
    options: Callable[..., FetchOptions],
    workdir: Path,
    discarded: list[int],
) -> None:
    http_server.route("/big", body=b"x" * 2048)
    with pytest.raises(TooLarge, match="2048 bytes, more than the 1000-byte cap") as caught:
        fetch(http_server.url("/big"), options(max_bytes=1000), workdir=workdir)
    assert caught.value.status == 200
    assert caught.value.final_url == http_server.url("/big")
    assert discarded == []  # no temporary file was even created
    assert list(workdir.iterdir()) == []


def test_chunked_oversize_is_refused_at_the_cap(
    http_server: LoopbackServer,
    options: Callable[..., FetchOptions],
    workdir: Path,
    discarded: list[int],
) -> None:
    def endless() -> Iterator[bytes]:
        for _ in range(64):  # 4 MiB in all, far over the cap
            yield b"y" * 65536

    http_server.route("/stream", body=endless, content_type="text/plain")
    with pytest.raises(TooLarge, match="larger than the 1048576-byte cap"):
        fetch(http_server.url("/stream"), options(max_bytes=MIB), workdir=workdir)
    assert discarded
    assert max(discarded) <= MIB
    assert list(workdir.iterdir()) == []


def test_body_exactly_at_the_cap_is_accepted(
    http_server: LoopbackServer, options: Callable[..., FetchOptions]
) -> None:
    http_server.route("/exact", body=b"z" * 4096, chunked=True)
    with fetching(http_server.url("/exact"), options(max_bytes=4096)) as fetched:
        assert fetched.size == 4096


def test_gzip_body_is_stored_decoded(
    http_server: LoopbackServer, options: Callable[..., FetchOptions]
) -> None:
    http_server.route("/gz", body=gzip.compress(TEXT), headers={"Content-Encoding": "gzip"})
    with fetching(http_server.url("/gz"), options()) as fetched:
        assert fetched.path.read_bytes() == TEXT
        assert fetched.raw_digest == "sha256:" + hashlib.sha256(TEXT).hexdigest()
    assert http_server.requests[0].headers["accept-encoding"] == "gzip, deflate"


def test_multi_member_gzip_is_decoded_whole(
    http_server: LoopbackServer, options: Callable[..., FetchOptions]
) -> None:
    body = gzip.compress(TEXT[:1000]) + gzip.compress(TEXT[1000:])
    http_server.route("/gz2", body=body, headers={"Content-Encoding": "gzip"})
    with fetching(http_server.url("/gz2"), options()) as fetched:
        assert fetched.path.read_bytes() == TEXT


@pytest.mark.parametrize("wbits", [zlib.MAX_WBITS, -zlib.MAX_WBITS], ids=["zlib", "raw"])
def test_deflate_body_is_decoded(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], wbits: int
) -> None:
    compressor = zlib.compressobj(wbits=wbits)
    body = compressor.compress(TEXT) + compressor.flush()
    http_server.route("/deflate", body=body, headers={"Content-Encoding": "deflate"})
    with fetching(http_server.url("/deflate"), options()) as fetched:
        assert fetched.path.read_bytes() == TEXT


def test_truncated_gzip_is_a_failed_capture(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    body = gzip.compress(TEXT)[:-20]
    http_server.route("/cut", body=body, headers={"Content-Encoding": "gzip"})
    with pytest.raises(FetchError, match="ends before its end marker"):
        fetch(http_server.url("/cut"), options(), workdir=workdir)
    assert list(workdir.iterdir()) == []


def test_unsupported_encoding_is_refused(
    http_server: LoopbackServer, options: Callable[..., FetchOptions]
) -> None:
    http_server.route("/br", body=b"\x0b\x02\x80", headers={"Content-Encoding": "br"})
    with pytest.raises(FetchError, match="unsupported Content-Encoding 'br'"):
        fetch(http_server.url("/br"), options())


@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
def test_gzip_bomb_is_refused_without_unpacking(
    http_server: LoopbackServer,
    options: Callable[..., FetchOptions],
    workdir: Path,
    discarded: list[int],
    chunked: bool,
) -> None:
    bomb = gzip.compress(bytes(10 * MIB), compresslevel=9)
    assert len(bomb) < 20 * 1024  # small on the wire, 10 MiB unpacked
    http_server.route(
        "/bomb",
        body=bomb,
        chunked=chunked,
        headers={"Content-Encoding": "gzip"},
        content_type="text/html",
    )
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge, match="larger than the 1048576-byte cap"):
            fetch(http_server.url("/bomb"), options(max_bytes=MIB), workdir=workdir)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * MIB  # never anywhere near the 10 MiB the bomb unpacks to
    assert discarded
    assert max(discarded) <= MIB
    assert list(workdir.iterdir()) == []


def test_local_file_over_the_cap_is_refused(
    tmp_path: Path, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    source = tmp_path / "big.bin"
    source.write_bytes(b"\0" * 5000)
    with pytest.raises(TooLarge) as caught:
        fetch(str(source), options(max_bytes=4096), workdir=workdir)
    assert caught.value.url == source.resolve().as_uri()
    assert list(workdir.iterdir()) == []
