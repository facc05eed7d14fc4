"""A prepared source as bytes, so that a text tokenized once is not tokenized again by the next
process (``records.prepared`` keeps such bytes in a folder).

The bytes hold the prepared source's flat arrays as they are in memory (``array.tobytes``), its
keys as UTF-8, and its key index, so loading them costs a few copies and one SHA-256 instead of
a tokenizer pass: about 4 bytes of keys, 4 of starts, 2 of lengths and flags and 4 of index per
token.  They never hold the text itself: the caller reads it from the store, digest-checked, and
hands it to ``unpack`` with the binding it was packed under.

Nothing here trusts the bytes it is given.  ``unpack`` refuses (``PackError``), before using any
of them, bytes that are not whole or not sealed by the caller's secret (their own SHA-256, or
their HMAC-SHA-256 under the ``key`` given, written last, does not match), that were
packed by another version of the tokenizer or matcher, another byte order or another layout
(``PACKED_ID``), or under another binding (the caller's name for the text, such as its digest),
or for a text of another length; and bytes whose arrays do not agree with one another.  A
caller rebuilds then, so a damaged or foreign entry costs a tokenizer pass, never an answer.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import struct
import sys
from array import array
from typing import Final

from verifier.errors import PackError
from verifier.matcher import VERIFIER_ID, PreparedParts, PreparedSource
from verifier.tokenizer import NORMALIZER_ID

FORMAT: Final = 1
PACKED_ID: Final = (
    f"snap-prepared@{FORMAT} {VERIFIER_ID} {NORMALIZER_ID} {sys.byteorder} i{array('i').itemsize}"
)
"""What must be equal for packed bytes to be read back: this layout, the matcher and tokenizer
versions, the machine's byte order and the size of an ``array("i")`` item."""

MAGIC: Final = b"SNAPPREP"
_COUNT: Final = struct.Struct("<I")
_SIZE: Final = struct.Struct("<Q")
_DIGEST_SIZE: Final = 32
_SEPARATOR: Final = "\n"  # no key holds one (whitespace separates tokens); checked when packing
_SECTIONS: Final = 12


def pack(prepared: PreparedSource, binding: str, *, key: bytes = b"") -> bytes:
    """The bytes of ``prepared`` (its index built first), bound to ``binding`` and to its text's
    length; ``unpack(data, prepared.source, binding)`` gives it back.  PackError when a key holds
    a line break, which the layout cannot hold.  With ``key`` the bytes end with their
    HMAC-SHA-256 under it instead of their SHA-256: whoever can write the entry but does not
    hold the key cannot make one that ``unpack`` accepts."""
    parts = prepared.parts()
    long_at = array("i", parts.long_ends)
    long_values = array("i", parts.long_ends.values())
    side_at = array("i", parts.side)
    side_counts = array("i", map(len, parts.side.values()))
    side_keys = [key for keys in parts.side.values() for key in keys]
    sections = [
        parts.ids.tobytes(),
        parts.starts.tobytes(),
        parts.lengths,
        parts.meta,
        long_at.tobytes(),
        long_values.tobytes(),
        _joined(parts.keys),
        side_at.tobytes(),
        side_counts.tobytes(),
        _joined(side_keys),
        parts.index_offsets.tobytes(),
        parts.index_order.tobytes(),
    ]
    label = _label(binding, len(prepared.source))
    body = b"".join(
        [
            MAGIC,
            _COUNT.pack(len(label)),
            label,
            _COUNT.pack(len(sections)),
            *map(_SIZE.pack, map(len, sections)),
            *sections,
        ]
    )
    return body + _seal(body, key)


def _seal(body: bytes | memoryview, key: bytes) -> bytes:
    if key:
        return hmac.new(key, body, hashlib.sha256).digest()
    return hashlib.sha256(body).digest()


def unpack(data: bytes, source: str, binding: str, *, key: bytes = b"") -> PreparedSource:
    """The prepared source of ``source`` packed in ``data`` under ``binding`` (and ``key``, as
    packed); PackError when ``data`` is damaged, truncated, foreign, for another text or sealed
    under another key (see the module docstring)."""
    view = memoryview(data)
    if len(view) < len(MAGIC) + _DIGEST_SIZE or bytes(view[: len(MAGIC)]) != MAGIC:
        raise PackError("not a packed prepared source")
    body, digest = view[:-_DIGEST_SIZE], view[-_DIGEST_SIZE:]
    if not hmac.compare_digest(_seal(body, key), digest):
        raise PackError("the packed prepared source is damaged, truncated or sealed otherwise")
    at = len(MAGIC)
    (label_size,) = _COUNT.unpack_from(body, at)
    at += _COUNT.size
    if bytes(body[at : at + label_size]) != _label(binding, len(source)):
        raise PackError("the packed prepared source is of another text or version")
    at += label_size
    (count,) = _COUNT.unpack_from(body, at)
    if count != _SECTIONS:
        raise PackError("the packed prepared source has another layout")
    at += _COUNT.size
    sizes = [_SIZE.unpack_from(body, at + _SIZE.size * n)[0] for n in range(count)]
    at += _SIZE.size * count
    if at + sum(sizes) != len(body):
        raise PackError("the packed prepared source's sections do not fill it")
    sections = []
    for size in sizes:
        sections.append(body[at : at + size])
        at += size
    return PreparedSource.from_parts(source, _parts(sections, len(source)))


def _parts(sections: list[memoryview], text_length: int) -> PreparedParts:
    """The parts in ``sections`` (as ``pack`` lays them out), checked to agree."""
    ids, starts, long_at, long_values, side_at, side_counts, offsets, order = (
        _integers(sections[n]) for n in (0, 1, 4, 5, 7, 8, 10, 11)
    )
    lengths, meta = bytes(sections[2]), bytes(sections[3])
    keys = _split(sections[6])
    side_keys = _split(sections[9])
    tokens = len(ids)
    if not tokens == len(starts) == len(lengths) == len(meta) == len(order):
        raise PackError("the packed prepared source's token arrays differ in length")
    if len(offsets) != len(keys) + 1 or len(long_at) != len(long_values):
        raise PackError("the packed prepared source's tables differ in length")
    if len(side_at) != len(side_counts) or sum(side_counts) != len(side_keys):
        raise PackError("the packed prepared source's side items differ in number")
    if tokens and (max(starts) > text_length or max(ids) >= len(keys) or min(ids) < 0):
        raise PackError("the packed prepared source points outside its text or keys")
    grouped = iter(side_keys)
    side = {
        before: tuple(itertools.islice(grouped, size))
        for before, size in zip(side_at, side_counts, strict=True)
    }
    return PreparedParts(
        ids,
        starts,
        lengths,
        meta,
        dict(zip(long_at, long_values, strict=True)),
        side,
        keys,
        offsets,
        order,
    )


def _label(binding: str, text_length: int) -> bytes:
    return f"{PACKED_ID}\n{binding}\n{text_length}".encode()


def _integers(section: memoryview) -> array[int]:
    if len(section) % array("i").itemsize:
        raise PackError("the packed prepared source has a torn array")
    integers = array("i")
    integers.frombytes(section)
    return integers


def _joined(keys: list[str]) -> bytes:
    joined = _SEPARATOR.join(keys)
    if joined.count(_SEPARATOR) != max(len(keys) - 1, 0) or keys == [""]:
        raise PackError("a key holds a line break or is empty: the source is not packed")
    return joined.encode("utf-8")


def _split(section: memoryview) -> list[str]:
    try:
        text = str(section, "utf-8")
    except UnicodeDecodeError:
        raise PackError("the packed prepared source's keys are not UTF-8") from None
    return text.split(_SEPARATOR) if text else []
