"""The records' errors: what is not recorded, what cannot be recorded twice, the database.

They subclass the root in ``snapshotter.errors`` (the lowest layer that raises a ``SnapError``);
``snap.errors`` re-exports them and maps them to exit codes.
"""

from __future__ import annotations

from snapshotter.errors import (
    RETRYABLE_STATUSES,
    AddressRefused,
    BlobNotFound,
    FetchError,
    InputError,
    IntegrityError,
    SnapError,
    StoreError,
    TooLarge,
)


class InputTooLarge(InputError):
    """The input is larger than the input limit (``SNAP_MAX_INPUT_BYTES``); HTTP answers 413."""


class NothingToCheck(InputError):
    """A model response, well formed, that cites nothing: no quote to check. Still unusable
    input (exit 2), but its own type (``errorType``, and HTTP 422 with its own problem type),
    so a pipeline tells "nothing to check" from a broken file without reading the message."""


class ExtractionConflict(SnapError):
    """Two different texts recorded for one (snapshot, extractor, decoding): refused."""


class RecordNotFound(SnapError):
    """A citation, snapshot or URL asked for by the user is not in the database."""


class DatabaseError(SnapError):
    """The database cannot be used (unreachable, not migrated, wrong URL)."""


class OutputError(SnapError):
    """Where the output goes cannot be written: standard output or standard error, or a file
    the user named (``-o``, ``--emit``, ``--out``), on a full disk or after an I/O error. (A
    pipe whose reader is gone is not reported: the command ends quietly, ``snap.cli``.)"""


def is_transient(error: BaseException) -> bool:
    """Whether trying the same work again later may succeed: a network failure, a timeout, a
    retryable HTTP status, a store or database that could not be reached. A refused address,
    an oversize body, a 404, undecodable bytes, damaged evidence or unusable input fail the
    same way every time, so a worker marks them failed at once. (The shell's
    ``snap.errors.is_transient`` adds its own broker's errors.)"""
    if isinstance(error, (AddressRefused, TooLarge)):
        return False
    if isinstance(error, FetchError):
        return error.status is None or error.status in RETRYABLE_STATUSES
    if isinstance(error, (BlobNotFound, IntegrityError)):
        return False
    return isinstance(error, (StoreError, DatabaseError))
