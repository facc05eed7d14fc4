"""What ``snap import PATH`` reads: a WARC file (plain or gzip per record) or a WACZ package,
opened as one or more WARC streams, each with the name and SHA-256 it is known by.

A WACZ is checked whole before any record is read: every resource listed in
``datapackage.json`` must be present with the SHA-256 (and size) listed, the listing itself
must match ``datapackage-digest.json`` when there is one, and no WARC under ``archive/`` may be
missing from the listing. One mismatch refuses the package with one line: a tampered package
must not half-import.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from records.imports.attestations import (
    ATTESTATIONS,
    MAX_ATTESTATIONS,
    Attestations,
    read_attestations,
)
from snapshotter.errors import InputError, printable_line, shown

CHUNK_SIZE = 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b"  # a file of the first byte alone is a cut gzip stream, not a WARC
GZIP_STEP = 4096  # how much compressed input is inflated at a time: damage is found within it
WARC_SUFFIXES = (".warc", ".warc.gz")
MAX_DATAPACKAGE = 64 * 1024 * 1024  # a listing larger than this is not a listing
# What reading a damaged zip member raises: a local header or CRC-32 that does not match
# (BadZipFile), compressed data cut short (EOFError) or corrupt (zlib.error, lzma.LZMAError,
# OSError of bz2), a member encrypted or compressed in a way zipfile cannot read (RuntimeError,
# NotImplementedError), header fields that do not parse (ValueError, struct.error).
ZIP_DAMAGE = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    OSError,
    RuntimeError,
    NotImplementedError,
    ValueError,
    struct.error,
)


@dataclass(frozen=True)
class WarcSource:
    """One WARC to read: ``name`` as recorded in provenance, ``member`` its path inside a
    WACZ (None for a bare WARC), ``digest`` the SHA-256 of its bytes, ``size`` in bytes."""

    name: str
    member: str | None
    digest: str
    size: int
    # the WACZ's signedData (records.attest.wacz_signing): "none", "valid: …" or "invalid: …"
    signature: str = "none"
    # a WARC inside a WACZ: the package's file name, SHA-256 and the software its
    # datapackage.json names (what the archive states wrote it, when no warcinfo does)
    package: dict[str, str | None] | None = None


@dataclass
class Archive:
    """An opened archive: its WARCs in order, and how to open each one for reading."""

    path: Path
    kind: str  # "warc" or "wacz"
    warcs: list[WarcSource]
    _zip: zipfile.ZipFile | None = None
    # a WACZ's attestations.jsonl (records.imports.attestations): its problems are reported,
    # never a reason to refuse the archive (a WARC's attestations are one of its records)
    attestations: Attestations = field(default_factory=Attestations)

    @contextmanager
    def open(self, source: WarcSource) -> Iterator[IO[bytes]]:
        """The WARC's bytes; a member checked whole before (``_checked_warcs``) that cannot
        be opened now is one line, not a traceback (what breaks off while it is read is
        warcio's to report, as for any WARC)."""
        if self._zip is not None and source.member is not None:
            with _reading(self.path, source.member):
                handle = self._zip.open(source.member)
            with handle:
                yield handle
        else:
            with self.path.open("rb") as handle:
                yield handle

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()


@contextmanager
def open_archive(path: Path) -> Iterator[Archive]:
    """Open and check ``path``; InputError (one line, exit 2) when it cannot be imported."""
    size = _regular_file_size(path)
    magic = _first_bytes(path, 8)
    if magic.startswith(b"PK\x03\x04"):
        archive = _open_wacz(path)
    elif magic.startswith((b"WARC/", GZIP_MAGIC)) or path.name.endswith(WARC_SUFFIXES):
        source = WarcSource(name=path.name, member=None, digest=_file_digest(path), size=size)
        archive = Archive(path=path, kind="warc", warcs=[source])
    else:
        raise InputError(f"{shown(path)} is not a WARC (.warc, .warc.gz) or WACZ file")
    try:
        yield archive
    finally:
        archive.close()


def _regular_file_size(path: Path) -> int:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(f"no such file: {shown(path)}") from None
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read {shown(path)}: {error}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(
            f"{shown(path)} is a folder; give one .warc, .warc.gz or .wacz file to import"
        )
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{shown(path)} is not a regular file (a FIFO, socket or device)")
    return info.st_size


def _first_bytes(path: Path, count: int) -> bytes:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise InputError(f"cannot read {shown(path)}: {error.strerror}") from None
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read(count)


def _file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        digest, _size, damage = _scan(handle, path.name)
    if damage is not None:
        raise InputError(damage)
    return digest


def _scan(handle: IO[bytes], name: str, algorithm: str = "sha256") -> tuple[str, int, str | None]:
    """The SHA-256 and size of a WARC, read once; a gzip WARC is also inflated to the end
    (output discarded, at most ``CHUNK_SIZE`` at a time), so that a truncated or corrupt
    stream is refused before anything is imported: warcio reads a cut gzip member as a
    shorter, well-formed one. The third value is that damage, in one line, or None.
    ``algorithm``: the digest returned, as ``algorithm:hex`` (a WACZ may list md5)."""
    digest = hashlib.new(algorithm)
    size = 0
    check: _GzipCheck | None = None
    damage = None
    while chunk := handle.read(CHUNK_SIZE):
        if size == 0 and GZIP_MAGIC.startswith(chunk[: len(GZIP_MAGIC)]):  # b"\x1f" too
            check = _GzipCheck()
        digest.update(chunk)
        if check is not None and damage is None:
            damage = check.feed(chunk, name, size)
        size += len(chunk)
    if check is not None and damage is None:
        damage = check.finish(name, size)
    return f"{algorithm}:{digest.hexdigest()}", size, damage


class _GzipCheck:
    """Inflates gzip members one after another and knows whether the last one ended, where
    the member being inflated starts (what ``warcio index`` lists as its record's offset) and
    how far the input was read, so that damage is named by its member and the byte by which
    it was found."""

    def __init__(self) -> None:
        self._stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._started = False
        self._member_start = 0

    def feed(self, data: bytes, name: str, offset: int) -> str | None:
        """Inflate ``data``, found at ``offset`` in the file, in steps of ``GZIP_STEP`` bytes:
        zlib objects to damage within a step of it, so the position named is close."""
        for start in range(0, len(data), GZIP_STEP):
            reached = offset + min(start + GZIP_STEP, len(data))
            try:
                self._inflate(data[start : start + GZIP_STEP], reached)
            except zlib.error as error:
                return self._damaged(name, reached, error)
        return None

    def _inflate(self, data: bytes, end: int) -> None:
        """``data``: the input up to byte ``end`` (exclusive) of the file not yet inflated.
        What a member leaves over is the tail of that input: the next member starts there."""
        while data:
            self._started = True
            self._stream.decompress(data, CHUNK_SIZE)
            data = self._stream.unconsumed_tail
            if self._stream.eof:
                data = self._stream.unused_data + data
                self._member_start = end - len(data)
                self._stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self._started = False

    def _damaged(self, name: str, reached: int, error: zlib.error) -> str:
        return (
            f"{shown(name)} is damaged: not a valid gzip stream in the gzip member starting at"
            f" byte {self._member_start}, found by byte {reached - 1}: {error}"
        )

    def finish(self, name: str, size: int) -> str | None:
        try:
            while not self._stream.eof and self._stream.decompress(b"", CHUNK_SIZE):
                pass
        except zlib.error as error:
            return self._damaged(name, size, error)
        if self._started and not self._stream.eof:
            return (
                f"{shown(name)} is damaged: the gzip stream ends inside a record at byte {size},"
                f" in the gzip member starting at byte {self._member_start}"
                " (a truncated file?); nothing was imported"
            )
        return None


# --- WACZ --------------------------------------------------------------------------------


def _open_wacz(path: Path) -> Archive:
    try:
        package = zipfile.ZipFile(path)
    except ZIP_DAMAGE as error:
        raise InputError(
            f"{shown(path)} is not a readable WACZ (zip) file: {_damage(error)}"
        ) from None
    try:
        warcs = _checked_warcs(package, path)
        attestations = _attestations(package, path)
    except InputError:
        package.close()
        raise
    except ZIP_DAMAGE as error:  # each member is read through _reading: a backstop
        package.close()
        raise InputError(f"{shown(path)}: the WACZ cannot be read: {_damage(error)}") from None
    return Archive(path, "wacz", warcs, package, attestations=attestations)


@contextmanager
def _reading(path: Path, member: str) -> Iterator[None]:
    """Reading ``member`` of the WACZ at ``path``: its damage is one line naming it."""
    try:
        yield
    except ZIP_DAMAGE as error:
        raise InputError(f"{shown(path)}: {member} is damaged: {_damage(error)}") from None


# zipfile's messages (3.11 to 3.13) that quote what it read, or say it in its own terms
ZIPFILE_WORDS = (
    ("Bad CRC-32", "its bytes do not match the CRC-32 the zip records for them"),
    ("File name in directory", "its local header names another file than the zip's directory"),
    ("Bad magic number for file header", "the zip's directory points at no local header"),
    ("Truncated file header", "its local header is cut short (a truncated file?)"),
    ("File is not a zip file", "it has no zip directory at its end (a truncated file?)"),
    ("Bad magic number for central directory", "the zip's directory is damaged"),
    ("Truncated central directory", "the zip's directory is cut short"),
)


def _damage(error: BaseException) -> str:
    """What zipfile found, in words (its own text quotes the bytes of a damaged header);
    zlib's text for damaged data."""
    if isinstance(error, EOFError):
        return "its compressed data ends early (a truncated file?)"
    if isinstance(error, zlib.error | lzma.LZMAError):
        return f"its compressed data is corrupt ({printable_line(str(error))[:200]})"
    text = str(error)
    for start, words in ZIPFILE_WORDS:
        if text.startswith(start):
            return words
    return printable_line(text)[:200] or type(error).__name__


def _attestations(package: zipfile.ZipFile, path: Path) -> Attestations:
    """What ``attestations/attestations.jsonl`` says (nothing without one)."""
    try:
        info = package.getinfo(ATTESTATIONS)
    except KeyError:
        return Attestations()
    if info.file_size > MAX_ATTESTATIONS:
        return Attestations([f"{ATTESTATIONS} is {info.file_size} bytes, too large to check"])
    with _reading(path, ATTESTATIONS):
        data = package.read(ATTESTATIONS)
    return read_attestations(data)


def _checked_warcs(package: zipfile.ZipFile, path: Path) -> list[WarcSource]:
    """Every listed resource checked against its hash; the WARCs under ``archive/``."""
    listing = _read_member(package, "datapackage.json", path)
    signature = _check_listing_digest(package, listing, path)
    resources = _resources(listing, path)
    claimed = json.loads(listing).get("software")
    about = {
        "file": path.name,
        "sha256": _file_digest(path),
        "software": str(claimed)[:300] if claimed else None,
    }
    names = set(package.namelist())
    warcs: list[WarcSource] = []
    for resource in resources:
        member = resource["path"]
        if member not in names:
            raise InputError(f"{shown(path)}: datapackage.json lists {member!r}, which is missing")
        algorithm, declared = _declared_hash(resource, path)
        found, size, damage = _member_digest(package, member, path, algorithm)
        _check_resource(resource, declared, found, size, path)
        if not member.startswith("archive/"):
            continue
        if damage is not None:
            raise InputError(f"{shown(path)}: {damage}")
        # The WARC is known by its SHA-256 in the records, whatever the listing used.
        digest = found if algorithm == "sha256" else _member_digest(package, member, path)[0]
        name = f"{path.name}#{member}"
        warcs.append(WarcSource(name, member, digest, size, signature, about))
    listed = {resource["path"] for resource in resources}
    unlisted = sorted(n for n in names if n.startswith("archive/") and n[-1] != "/")
    unlisted = [name for name in unlisted if name not in listed]
    if unlisted:
        raise InputError(
            f"{shown(path)}: {unlisted[0]!r} is in archive/ but not in datapackage.json;"
            " refusing a package whose listing does not cover its WARCs"
        )
    if not warcs:
        raise InputError(f"{shown(path)}: the WACZ lists no WARC under archive/")
    return warcs


def _read_member(package: zipfile.ZipFile, member: str, path: Path) -> bytes:
    try:
        info = package.getinfo(member)
    except KeyError:
        raise InputError(f"{shown(path)} is not a WACZ: it has no {member}") from None
    if info.file_size > MAX_DATAPACKAGE:
        raise InputError(f"{shown(path)}: {member} is {info.file_size} bytes, too large")
    with _reading(path, member):
        return package.read(member)


def _check_listing_digest(package: zipfile.ZipFile, listing: bytes, path: Path) -> str:
    """``datapackage-digest.json`` names the SHA-256 of ``datapackage.json``: check it; then
    what its signature (``signedData``), if any, proves."""
    if "datapackage-digest.json" not in package.namelist():
        return "none"
    try:
        digest = json.loads(_read_member(package, "datapackage-digest.json", path))
        declared = str(digest["hash"])
    except (ValueError, KeyError, TypeError):
        raise InputError(f"{shown(path)}: datapackage-digest.json is not a digest") from None
    actual = hashlib.sha256(listing).hexdigest()
    if declared.removeprefix("sha256:") != actual:
        raise InputError(
            f"{shown(path)}: datapackage.json was changed: datapackage-digest.json declares"
            f" {declared[:80]}, the file hashes to sha256:{actual}"
        )
    if "signedData" not in digest:
        return "none"
    from records.attest.wacz_signing import signed_data_state

    return signed_data_state(digest["signedData"], actual)


def _resources(listing: bytes, path: Path) -> list[dict[str, Any]]:
    try:
        document = json.loads(listing)
        resources = document["resources"]
    except (ValueError, KeyError, TypeError):
        raise InputError(f"{shown(path)}: datapackage.json has no list of resources") from None
    if not isinstance(resources, list) or not all(
        isinstance(r, dict) and isinstance(r.get("path"), str) and isinstance(r.get("hash"), str)
        for r in resources
    ):
        raise InputError(f"{shown(path)}: datapackage.json lists a resource without path or hash")
    return resources


def _member_digest(
    package: zipfile.ZipFile, member: str, path: Path, algorithm: str = "sha256"
) -> tuple[str, int, str | None]:
    """``_scan`` of a member, read through zipfile (which inflates it and checks its CRC-32)."""
    with _reading(path, member), package.open(member) as handle:
        return _scan(handle, member, algorithm)


HASH_ALGORITHMS = ("sha256", "sha1", "md5", "sha512")  # what a WACZ listing may name


def _declared_hash(resource: dict[str, Any], path: Path) -> tuple[str, str]:
    """The algorithm and ``algorithm:hex`` a resource is listed with (bare hex: SHA-256)."""
    declared = resource["hash"].strip().lower()
    algorithm, colon, _value = declared.partition(":")
    if not colon:
        return "sha256", f"sha256:{declared}"
    if algorithm not in HASH_ALGORITHMS:
        raise InputError(
            f"{shown(path)}: datapackage.json lists {resource['path']!r} with a"
            f" {algorithm[:20]!r} hash, which snap cannot check"
        )
    return algorithm, declared


def _check_resource(
    resource: dict[str, Any], declared: str, digest: str, size: int, path: Path
) -> None:
    member = resource["path"]
    if declared != digest:
        raise InputError(
            f"{shown(path)}: {member} was changed: datapackage.json declares"
            f" {resource['hash'][:80]}, the file hashes to {digest}"
        )
    declared_size = resource.get("bytes")
    if isinstance(declared_size, int) and declared_size != size:
        raise InputError(
            f"{shown(path)}: {member} is {size} bytes, datapackage.json declares {declared_size}"
        )
