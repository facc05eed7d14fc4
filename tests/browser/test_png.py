"""The PNG reader of the screenshot comparison reads back every filter type exactly.

A fault in it would spoil both screenshots alike and hide a difference, so it is checked on
its own: rows filtered with each of the five filter types (RFC 2083, 6.2 to 6.6), RGB and
RGBA, decode to the pixels they were made from.
"""

from __future__ import annotations

import struct
import zlib

from hypothesis import given
from hypothesis import strategies as st

from tests.browser.png import SIGNATURE, chunk, decode, encode_rgb, mean_difference, paeth


def filtered(kind: int, row: bytes, prior: bytes, step: int) -> bytes:
    """``row`` filtered with filter ``kind`` against the row above, ``prior``."""
    out = bytearray()
    for i, value in enumerate(row):
        left = row[i - step] if i >= step else 0
        corner = prior[i - step] if i >= step else 0
        predictor = (0, left, prior[i], (left + prior[i]) >> 1, paeth(left, prior[i], corner))
        out.append((value - predictor[kind]) & 0xFF)
    return bytes(out)


def encode(width: int, rows: list[bytes], kinds: list[int], step: int) -> bytes:
    data, prior = bytearray(), bytes(width * step)
    for row, kind in zip(rows, kinds, strict=True):
        data.append(kind)
        data.extend(filtered(kind, row, prior, step))
        prior = row
    colour = 2 if step == 3 else 6
    header = struct.pack(">IIBBBBB", width, len(rows), 8, colour, 0, 0, 0)
    return (
        SIGNATURE
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(data)))
        + chunk(b"IEND", b"")
    )


@st.composite
def images(draw: st.DrawFn) -> tuple[int, int, list[bytes], list[int]]:
    width, height = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    step = draw(st.sampled_from([3, 4]))
    row = st.binary(min_size=width * step, max_size=width * step)
    rows = draw(st.lists(row, min_size=height, max_size=height))
    kinds = draw(st.lists(st.integers(0, 4), min_size=height, max_size=height))
    return width, step, rows, kinds


@given(images())
def test_every_filter_type_decodes_to_the_pixels_it_was_made_from(
    image: tuple[int, int, list[bytes], list[int]],
) -> None:
    width, step, rows, kinds = image
    decoded = decode(encode(width, rows, kinds, step))
    opaque = b"".join(bytes(v for i, v in enumerate(row) if i % step < 3) for row in rows)
    assert (decoded.width, decoded.height, decoded.rgb) == (width, len(rows), opaque)


def test_the_mean_difference_counts_every_channel() -> None:
    black = decode(encode_rgb(2, 1, lambda x, y: (0, 0, 0)))
    one_white = decode(encode_rgb(2, 1, lambda x, y: (255, 255, 255) if x else (0, 0, 0)))
    assert mean_difference(black, black) == 0.0
    assert mean_difference(black, one_white) == 127.5


def test_the_paeth_predictor_breaks_ties_as_the_specification_says() -> None:
    """Left, then above, then upper left (RFC 2083, 6.6): fixed cases, since the property
    test above filters with the same predictor it checks."""
    assert paeth(10, 20, 15) == 15  # the upper left is nearest
    assert paeth(10, 20, 5) == 20  # above is nearest
    assert paeth(0, 3, 2) == 0  # left and upper left tie: left wins
    assert paeth(3, 0, 2) == 0  # above and upper left tie: above wins
