"""Just enough PNG for comparing screenshots without an imaging library: write an RGB image,
read an 8-bit RGB or RGBA one (not interlaced; filter types 0 to 4), compare two.

Pillow is not among snap's dependencies and a test helper is not worth adding it for; the
PNG format (RFC 2083) is small enough for this at the sizes of a test page's screenshot.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}  # colour type: RGB, RGBA


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    rgb: bytes  # 3 bytes a pixel, rows top to bottom (alpha dropped)


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_rgb(width: int, height: int, pixel: Callable[[int, int], tuple[int, int, int]]) -> bytes:
    """A PNG of ``width`` x ``height`` whose pixel (x, y) is ``pixel(x, y)``, an (r, g, b)."""
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows.extend(pixel(x, y))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        SIGNATURE
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows)))
        + chunk(b"IEND", b"")
    )


def paeth(left: int, up: int, corner: int) -> int:
    estimate = left + up - corner
    to_left, to_up, to_corner = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
    if to_left <= to_up and to_left <= to_corner:
        return left
    return up if to_up <= to_corner else corner


def _unfilter(kind: int, row: bytearray, prior: bytearray, step: int) -> None:
    if kind == 1:
        for i in range(step, len(row)):
            row[i] = (row[i] + row[i - step]) & 0xFF
    elif kind == 2:
        for i in range(len(row)):
            row[i] = (row[i] + prior[i]) & 0xFF
    elif kind == 3:
        for i in range(len(row)):
            left = row[i - step] if i >= step else 0
            row[i] = (row[i] + ((left + prior[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(len(row)):
            left = row[i - step] if i >= step else 0
            corner = prior[i - step] if i >= step else 0
            row[i] = (row[i] + paeth(left, prior[i], corner)) & 0xFF
    elif kind != 0:
        raise ValueError(f"PNG filter type {kind} does not exist")


def decode(png: bytes) -> Image:
    """The pixels of an 8-bit RGB or RGBA, non-interlaced PNG."""
    if not png.startswith(SIGNATURE):
        raise ValueError("not a PNG")
    at, header, data = len(SIGNATURE), b"", bytearray()
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            data.extend(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour {colour}, interlace {interlace}")
    step = CHANNELS[colour]
    raw = zlib.decompress(bytes(data))
    stride = width * step
    prior = bytearray(stride)
    rgb = bytearray()
    for y in range(height):
        start = y * (stride + 1)
        row = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(raw[start], row, prior, step)
        prior = row
        opaque = bytearray(row)
        if step == 4:
            del opaque[3::4]  # the alpha channel
        rgb.extend(opaque)
    return Image(width, height, bytes(rgb))


def mean_difference(one: Image, other: Image) -> float:
    """The mean absolute difference of two same-sized images, per channel value (0 to 255)."""
    if (one.width, one.height) != (other.width, other.height):
        raise ValueError("the images differ in size")
    total = sum(abs(a - b) for a, b in zip(one.rgb, other.rgb, strict=True))
    return total / len(one.rgb) if one.rgb else 0.0
