"""A damaged gzip WARC is refused with the gzip member holding the damage (the offset
``warcio index`` lists for its record) and the byte by which the damage was found."""

from __future__ import annotations

import gzip
import random
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from records.imports.sources import open_archive
from snapshotter.errors import InputError
from tests.imports.test_import_hostile import one_error_line, snap_import
from tests.imports.warcs import crawl

GZIP_HEADER = 10  # what gzip.compress writes before the deflate stream (no file name)
GZIP_TRAILER = 8  # CRC-32 and length after it

DAMAGED = re.compile(r"in the gzip member starting at byte (\d+), found by byte (\d+):")
CUT = re.compile(r"ends inside a record at byte (\d+), in the gzip member starting at byte (\d+)")


def body(seed: int, size: int) -> bytes:
    """Half text that deflates well, half random bytes that do not: members of many sizes."""
    rng = random.Random(seed)
    words = [rng.choice([b"cache ", b"origin ", b"edge ", b"hit "]) for _ in range(size // 12)]
    return b"".join(words) + rng.randbytes(size // 2)


members = st.lists(
    st.builds(body, st.integers(0, 2**32), st.integers(0, 30_000)), min_size=1, max_size=4
)


def compressed(bodies: list[bytes]) -> tuple[bytes, list[int]]:
    """A multi-member gzip file and the offset each member starts at."""
    parts = [gzip.compress(part, mtime=0) for part in bodies]
    starts = [sum(len(part) for part in parts[:index]) for index in range(len(parts))]
    return b"".join(parts), starts


def member_and_position(line: str) -> tuple[int, int]:
    """The member a refusal names and the byte it was found by: a flip can also make a
    member's deflate stream run on past the file's end, which reads as a cut."""
    if named := DAMAGED.search(line):
        return int(named[1]), int(named[2])
    cut = CUT.search(line)
    assert cut is not None, line
    return int(cut[2]), int(cut[1])


def refusal(data: bytes) -> str | None:
    """The line ``snap import`` refuses these bytes with, or None when it opens them."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "damaged.warc.gz"
        path.write_bytes(data)
        try:
            with open_archive(path):
                return None
        except InputError as error:
            return str(error)


@settings(max_examples=80, deadline=None)
@given(bodies=members, data=st.data())
def test_a_flipped_byte_is_named_by_its_member_and_found_after_it(
    bodies: list[bytes], data: st.DataObject
) -> None:
    whole, starts = compressed(bodies)
    member = data.draw(st.integers(0, len(bodies) - 1), label="member")
    end = starts[member + 1] if member + 1 < len(starts) else len(whole)
    flipped = data.draw(
        st.integers(starts[member] + GZIP_HEADER, end - GZIP_TRAILER - 1), label="flipped"
    )
    mask = data.draw(st.integers(1, 255), label="mask")
    damaged = bytearray(whole)
    damaged[flipped] ^= mask
    line = refusal(bytes(damaged))
    if line is None:  # a flip zlib cannot see (a padding bit): nothing to name
        return
    start, found_by = member_and_position(line)
    assert start == starts[member] <= flipped < end, (line, starts)
    assert found_by >= flipped


@settings(max_examples=60, deadline=None)
@given(bodies=members, data=st.data())
def test_a_cut_inside_a_member_names_that_member(bodies: list[bytes], data: st.DataObject) -> None:
    whole, starts = compressed(bodies)
    member = data.draw(st.integers(0, len(bodies) - 1), label="member")
    end = starts[member + 1] if member + 1 < len(starts) else len(whole)
    cut = data.draw(st.integers(starts[member] + 1, end - 1), label="cut")  # b"\x1f" too
    line = refusal(whole[:cut])
    assert line is not None
    named = CUT.search(line)
    assert named is not None, line
    assert (int(named[1]), int(named[2])) == (cut, starts[member])


def test_a_file_of_the_first_magic_byte_alone_is_a_cut_gzip_not_an_empty_warc() -> None:
    line = refusal(b"\x1f")
    assert line is not None
    assert CUT.search(line), line


def test_the_member_named_is_the_record_warcio_index_lists(tmp_path: Path) -> None:
    path = crawl(tmp_path / "crawl.warc.gz").path
    with path.open("rb") as handle:
        records = ArchiveIterator(handle)
        offsets = [records.get_record_offset() for _record in records]
    third, fourth = offsets[3], offsets[4]
    data = bytearray(path.read_bytes())
    data[(third + fourth) // 2] ^= 0xFF  # inside the third record's deflate stream
    damaged = tmp_path / "damaged.warc.gz"
    damaged.write_bytes(bytes(data))
    line = one_error_line(snap_import(tmp_path, damaged), 2)
    named = DAMAGED.search(line)
    assert named is not None, line
    assert int(named[1]) == third
    assert (third + fourth) // 2 <= int(named[2])


@pytest.mark.parametrize("member", [1, 3])
def test_damage_far_into_a_file_is_found_within_a_step_of_it(member: int) -> None:
    """Its member named, not the start of the block read, and the byte it was found by close
    to it: the first deflate block made a reserved type (3) is refused on its first byte."""
    whole, starts = compressed([body(seed, 200_000) for seed in range(4)])
    damaged = bytearray(whole)
    first_block = starts[member] + GZIP_HEADER
    assert damaged[first_block] & 0b110 == 0b100  # zlib's first block: dynamic Huffman (2)
    damaged[first_block] ^= 0b010
    line = refusal(bytes(damaged))
    assert line is not None
    assert "invalid block type" in line
    named = DAMAGED.search(line)
    assert named is not None, line
    assert int(named[1]) == starts[member]
    assert first_block <= int(named[2]) < first_block + 4096
