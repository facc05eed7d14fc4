"""An ARC file (the WARC's predecessor) is refused with one line that says how to convert it,
rather than read as records that are all skipped with exit 0; and the conversion it names
gives a WARC that imports. Lines warcio reads as ARC records without an ARC file's header are
no archive at all."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.imports.test_import_hostile import one_error_line, snap_import

BODY = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>An archived page.</p>"


def arc_file(path: Path) -> Path:
    """An ARC v1 file of one page, one gzip member per record, as old crawls wrote them."""
    fields = b"1 0 snap-tests\nURL IP-address Archive-date Content-type Archive-length\n"
    header = b"filedesc://page.arc 0.0.0.0 20240101000000 text/plain %d\n" % len(fields)
    record = b"http://127.0.0.1/page 127.0.0.1 20240101000000 text/html %d\n" % len(BODY)
    path.write_bytes(gzip.compress(header + fields + b"\n") + gzip.compress(record + BODY + b"\n"))
    return path


def test_an_arc_is_refused_with_the_command_that_converts_it(tmp_path: Path) -> None:
    arc = arc_file(tmp_path / "old crawl.arc.gz")
    line = one_error_line(snap_import(tmp_path, arc), 2)
    assert line == (
        f"snap: error: {arc} is an ARC file; snap imports WARC and WACZ: convert it with"
        f" warcio recompress '{arc}' OUT.warc.gz, then import OUT.warc.gz"
    )


def test_the_conversion_it_names_imports(tmp_path: Path) -> None:
    arc = arc_file(tmp_path / "page.arc.gz")
    warc = tmp_path / "page.warc.gz"
    warcio = Path(sys.executable).with_name("warcio")
    subprocess.run([str(warcio), "recompress", str(arc), str(warc)], check=True, timeout=60)
    done = snap_import(tmp_path, warc)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["imported"] == 1


@pytest.mark.parametrize(
    "content",
    [b"x y z w 3\nabcdef\n", b'{"url": "http://a.test/x", "quote": "q q q"}\n'],
    ids=["five words", "a citation file"],
)
def test_lines_warcio_reads_as_arc_records_are_no_archive(tmp_path: Path, content: bytes) -> None:
    """warcio takes any first line of five words for an ARC record; without the ``filedesc``
    record an ARC file begins with, it is no archive (before: every record skipped, exit 0)."""
    path = tmp_path / "named-like.warc"
    path.write_bytes(content)
    line = one_error_line(snap_import(tmp_path, path), 2)
    assert line == f"snap: error: {path} is not a WARC (.warc, .warc.gz) or WACZ file"
