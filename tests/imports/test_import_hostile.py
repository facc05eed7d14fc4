"""Hostile input to ``snap import``: one line and a documented exit code, never a traceback,
and what was read before the damage stays imported."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from records.imports.payload import PayloadRefused, parse_digest
from snap.errors import TooLarge
from snapshotter.fetch import spool_body
from tests.imports.warcs import OTHER, PAGE, CrawlerWarc, crawl

CDN = "http://example.test/cdn"


def snap_import(
    tmp_path: Path, target: Path | str, *, as_json: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAP_")}
    env["SNAP_HOME"] = str(tmp_path / "home")
    return subprocess.run(
        [sys.executable, "-m", "snap", "import", str(target), *(["--json"] if as_json else [])],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def one_error_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("snap: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_missing_path(tmp_path: Path) -> None:
    line = one_error_line(snap_import(tmp_path, tmp_path / "nothing.warc.gz"), 2)
    assert "no such file" in line


def test_a_folder(tmp_path: Path) -> None:
    line = one_error_line(snap_import(tmp_path, tmp_path), 2)
    assert "is a folder" in line


def test_garbage_bytes(tmp_path: Path) -> None:
    path = tmp_path / "garbage.bin"
    path.write_bytes(os.urandom(4096).replace(b"PK", b"pk").replace(b"\x1f\x8b", b"xx"))
    line = one_error_line(snap_import(tmp_path, path), 2)
    assert "is not a WARC" in line


def test_garbage_named_like_a_warc(tmp_path: Path) -> None:
    path = tmp_path / "garbage.warc.gz"
    path.write_bytes(b"\x1f\x8b" + os.urandom(4096))
    done = snap_import(tmp_path, path)
    line = one_error_line(done, 2)
    assert "garbage.warc.gz is damaged: not a valid gzip stream" in line


def no_magic(data: bytes) -> bytes:
    """Bytes that start like no archive snap knows (so only the name makes them a WARC)."""
    return b"x" + data[1:] if data.startswith((b"\x1f\x8b", b"PK", b"WARC/")) else data


NOT_WARCS = {  # what a file named like a WARC holds; random, but the same on every run
    "random bytes": no_magic(random.Random(1).randbytes(4000)),
    "gzip of random bytes": gzip.compress(random.Random(2).randbytes(4000)),
    "text with escapes": b"hello \x1b[31mred\x07\r\nand more\r\n",
}


@pytest.mark.parametrize("name", ["fake.warc.gz", "fake.warc"])
@pytest.mark.parametrize("content", NOT_WARCS.values(), ids=list(NOT_WARCS))
def test_a_file_named_like_a_warc_that_is_none_is_one_line(
    tmp_path: Path, name: str, content: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    done = snap_import(tmp_path, path, as_json=False)
    assert done.returncode == 2
    assert done.stdout == ""  # nothing was read: no summary of nothing imported
    assert done.stderr == f"snap: error: {path} is not a WARC (.warc, .warc.gz) or WACZ file\n"


def test_garbage_after_a_record_keeps_the_summary_and_quotes_no_bytes(tmp_path: Path) -> None:
    warc = CrawlerWarc(tmp_path / "plain.warc", gzip_records=False)
    warc.response("http://example.test/other", OTHER, gzip_body=False, chunk=False)
    data = warc.write().path.read_bytes()
    garbage = b"\x1b[2J\x9b\xce\xa9 not a record \x07\r\n" + no_magic(
        random.Random(3).randbytes(500)
    )
    broken = tmp_path / "broken.warc"
    broken.write_bytes(data + garbage)
    done = snap_import(tmp_path, broken, as_json=False)
    assert done.returncode == 2
    assert done.stdout.startswith("imported 1 capture from"), done.stdout
    (line,) = done.stderr.splitlines()
    assert line.startswith("snap: error: broken.warc is damaged after offset "), line
    assert line.endswith(": what follows is not a WARC record (records before it were imported)")


def test_a_warc_broken_in_its_first_record_is_only_the_error(tmp_path: Path) -> None:
    path = tmp_path / "headless.warc"
    path.write_bytes(b"WARC/1.1\r\n" + no_magic(random.Random(4).randbytes(500)))
    done = snap_import(tmp_path, path, as_json=False)
    assert done.returncode == 2
    assert done.stdout == "", done.stdout
    (line,) = done.stderr.splitlines()
    assert line.startswith("snap: error: headless.warc is damaged after offset 0: "), line
    assert "records before it were imported" not in line
    assert line.isprintable()


def test_a_truncated_gzip_keeps_what_came_before(tmp_path: Path) -> None:
    warc = crawl(tmp_path / "crawl.warc.gz")
    data = warc.path.read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    done = snap_import(tmp_path, cut)
    line = one_error_line(done, 2)
    assert "cut.warc.gz is damaged: the gzip stream ends inside a record" in line
    assert json.loads(done.stdout)["error"]["exitCode"] == 2


def test_a_plain_warc_cut_inside_a_payload(tmp_path: Path) -> None:
    warc = CrawlerWarc(tmp_path / "plain.warc", gzip_records=False)
    warc.response("http://example.test/other", OTHER, gzip_body=False, chunk=False)
    warc.response(CDN, PAGE * 50, gzip_body=False, chunk=False)
    data = warc.write().path.read_bytes()
    cut = tmp_path / "cut.warc"
    cut.write_bytes(data[: len(data) - 2000])
    done = snap_import(tmp_path, cut)
    line = one_error_line(done, 2)
    assert "cut.warc is damaged after offset" in line
    assert "bytes before this record's end" in line
    assert json.loads(done.stdout)["summary"]["imported"] == 1


def test_huge_headers_are_refused_and_the_rest_imported(tmp_path: Path) -> None:
    warc = CrawlerWarc(tmp_path / "huge.warc.gz")
    warc.response(CDN, PAGE, extra=[("X-Padding", "a" * 400_000)])
    warc.response("http://example.test/other", OTHER)
    done = snap_import(tmp_path, warc.write().path)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    (refused,) = [r for r in report["records"] if r["outcome"] == "refused"]
    assert "the HTTP head is" in refused["reason"]
    assert report["summary"]["imported"] == 1


def test_a_wacz_that_is_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "broken.wacz"
    path.write_bytes(b"PK\x03\x04" + os.urandom(200))
    line = one_error_line(snap_import(tmp_path, path), 2)
    assert "WACZ" in line


def test_a_wacz_without_a_listing(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "bare.wacz"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("archive/a.warc", b"WARC/1.1\r\n")
    line = one_error_line(snap_import(tmp_path, path), 2)
    assert "no datapackage.json" in line


def test_a_wacz_with_an_unlisted_warc(tmp_path: Path) -> None:
    import zipfile

    warc = crawl(tmp_path / "crawl.warc.gz")
    data = warc.path.read_bytes()
    listing = {
        "resources": [
            {
                "name": "crawl.warc.gz",
                "path": "archive/crawl.warc.gz",
                "hash": "sha256:" + hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
            }
        ]
    }
    path = tmp_path / "extra.wacz"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("archive/crawl.warc.gz", data)
        package.writestr("archive/smuggled.warc.gz", data)
        package.writestr("datapackage.json", json.dumps(listing))
    line = one_error_line(snap_import(tmp_path, path), 2)
    assert "smuggled.warc.gz" in line


@given(st.binary(min_size=20, max_size=20), st.sampled_from(["hex", "b32", "b32lower"]))
def test_sha1_digest_spellings_parse_to_the_same_bytes(value: bytes, spelling: str) -> None:
    text = {
        "hex": value.hex(),
        "b32": base64.b32encode(value).decode(),
        "b32lower": base64.b32encode(value).decode().lower().rstrip("="),
    }[spelling]
    assert parse_digest(f"sha1:{text}").value == value


@given(st.text(max_size=80))
def test_any_digest_text_parses_or_is_refused(text: str) -> None:
    try:
        parsed = parse_digest(text)
    except PayloadRefused:
        return
    assert len(parsed.value) == hashlib.new(parsed.algorithm).digest_size


def test_gzip_body_that_does_not_decode_is_refused(tmp_path: Path) -> None:
    warc = CrawlerWarc(tmp_path / "badgzip.warc.gz")
    warc.response(CDN, PAGE, gzip_body=False, extra=[("Content-Encoding", "gzip")])
    warc.response("http://example.test/other", gzip.decompress(gzip.compress(OTHER)))
    done = snap_import(tmp_path, warc.write().path)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    (refused,) = [r for r in report["records"] if r["outcome"] == "refused"]
    assert "does not decode as gzip" in refused["reason"]


@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_a_compression_bomb_stops_at_the_cap(tmp_path: Path, encoding: str) -> None:
    """The cap holds on decoded bytes whatever the encoding: 8 MiB of zeros, 1 MiB cap."""
    import brotli

    zeros = b"\0" * (8 * 1024 * 1024)
    body = gzip.compress(zeros) if encoding == "gzip" else brotli.compress(zeros)
    assert len(body) < 64 * 1024
    with pytest.raises(TooLarge):
        spool_body(
            [body[i : i + 4096] for i in range(0, len(body), 4096)],
            content_encoding=encoding,
            max_bytes=1024 * 1024,
            url=CDN,
            status=200,
            content_type="text/plain",
            provenance={},
            workdir=tmp_path,
        )
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("snap-fetch")]
