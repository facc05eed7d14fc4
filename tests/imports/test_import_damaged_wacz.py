"""A damaged WACZ is one line and exit 2, naming the zip member that cannot be read: a flipped
bit in a compressed member (zlib's error, or the CRC zipfile checks at its end), a cut file, a
member whose local header was changed. Never exit 70, never a traceback."""

from __future__ import annotations

import io
import struct
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snap.cli import cli
from tests.attest.conftest import tsa  # noqa: F401  (fixture)
from tests.imports.test_import_attestations import exported  # noqa: F401  (fixture)

LOCAL_HEADER = 30  # a zip member's fixed local header, before its name and extra field
COMPRESSED = (
    "pages/pages.jsonl",
    "annotations/annotations.jsonl",
    "attestations/attestations.jsonl",
    "datapackage.json",
    "datapackage-digest.json",
    "indexes/index.cdx",
)


def snap_import(data: bytes) -> Any:
    """``snap import`` of ``data`` as a .wacz, in a home of its own."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "damaged.wacz"
        path.write_bytes(data)
        env = {"SNAP_HOME": str(Path(folder) / "home")}
        return CliRunner().invoke(cli, ["import", str(path)], env=env)


def assert_one_line_or_imported(done: Any) -> None:
    """Exit 0 (the damage was where nothing reads it), or 2 with one line on stderr."""
    assert done.exit_code in (0, 2), (done.exit_code, done.output, done.stderr)
    assert "Traceback" not in done.output + done.stderr
    if done.exit_code == 2:
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("snap: error: "), done.stderr


def regions(wacz: bytes) -> list[tuple[int, int]]:
    """Where a flip lands: each member's local header and data, and the central directory, so
    that every member is hit as often as the large WARC."""
    with zipfile.ZipFile(_file_of(wacz)) as package:
        infos = sorted(package.infolist(), key=lambda info: info.header_offset)
        central = package.start_dir
    starts = [info.header_offset for info in infos] + [central]
    found = []
    for info, end in zip(infos, starts[1:], strict=True):
        data = data_start(wacz, info.header_offset)
        found += [(info.header_offset, data), (data, end)]
    return [*found, (central, len(wacz))]


def data_start(wacz: bytes, header: int) -> int:
    """Where a member's data begins: after its local header, whose name and extra field
    lengths are its own (its extra field is not the central directory's)."""
    name, extra = struct.unpack("<HH", wacz[header + 26 : header + 30])
    return header + LOCAL_HEADER + name + extra


def _file_of(data: bytes) -> Any:
    return io.BytesIO(data)


def member_data(wacz: bytes, name: str) -> tuple[int, int, int]:
    """Where a member's compressed bytes are in the file, and its size inflated."""
    with zipfile.ZipFile(_file_of(wacz)) as package:
        info = package.getinfo(name)
    start = data_start(wacz, info.header_offset)
    return start, start + info.compress_size, info.file_size


@pytest.mark.parametrize("where", ["first", "middle"])
@pytest.mark.parametrize("member", COMPRESSED)
def test_a_flipped_bit_in_a_compressed_member_names_it(
    exported: Path,  # noqa: F811
    member: str,
    where: str,
) -> None:
    """The first byte's bit 2 makes the first deflate block another type (zlib's error); a
    bit in the middle changes the data (zlib's error, or the CRC-32 at the member's end)."""
    data = bytearray(exported.read_bytes())
    start, end, size = member_data(bytes(data), member)
    if where == "middle" and size == 0:
        pytest.skip(f"{member} is empty: its deflate stream is its first byte")
    data[start if where == "first" else (start + end) // 2] ^= 0x04 if where == "first" else 0x10
    done = snap_import(bytes(data))
    assert_one_line_or_imported(done)
    assert done.exit_code == 2
    assert member in done.stderr
    assert "internal error" not in done.stderr


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_a_byte_flipped_anywhere_is_imported_or_one_line(exported: Path, data: Any) -> None:  # noqa: F811
    wacz = exported.read_bytes()
    start, end = data.draw(st.sampled_from(regions(wacz)), label="region")
    position = data.draw(st.integers(start, max(start, end - 1)), label="position")
    mask = data.draw(st.integers(1, 255), label="mask")
    damaged = bytearray(wacz)
    damaged[position] ^= mask
    assert_one_line_or_imported(snap_import(bytes(damaged)))


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_a_wacz_cut_anywhere_is_one_line(exported: Path, data: Any) -> None:  # noqa: F811
    wacz = exported.read_bytes()
    cut = data.draw(st.integers(1, len(wacz) - 1), label="cut")
    done = snap_import(wacz[:cut])
    assert_one_line_or_imported(done)
