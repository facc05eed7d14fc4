"""The one error hierarchy of snap, and the one table of exit codes.

Every failure a user can cause or meet is a ``SnapError`` whose message is one line; each layer
defines the errors it raises (``verifier.errors``, ``snapshotter.errors``, ``records.errors``,
and the shell's own below), and this module re-exports them all, so ``from snap.errors import
X`` names any of them. ``EXIT_CODES`` maps classes to what the command line exits with; the CLI
maps errors to output in exactly one place (``snap.cli.main``), the HTTP service in one table
(``snap.service.problems.PROBLEMS``); library users catch these classes directly.

Exit codes: 0 success, 1 a check failed or a capture failed, 2 unusable input or configuration,
3 a backend (store or database) or the output could not be used. Outside this table, because
they are no error of snap's: 130 interrupted, 141 standard output is a pipe its reader closed,
70 an internal error (a bug); ``snap.cli`` exits with those.
"""

from __future__ import annotations

from records.attest.errors import AttestationFailure as AttestationFailure
from records.attest.errors import TimestampUnavailable as TimestampUnavailable
from records.errors import DatabaseError as DatabaseError
from records.errors import ExtractionConflict as ExtractionConflict
from records.errors import InputTooLarge as InputTooLarge
from records.errors import NothingToCheck as NothingToCheck
from records.errors import OutputError as OutputError
from records.errors import RecordNotFound as RecordNotFound
from records.errors import is_transient as _records_is_transient
from snapshotter.errors import MAX_MESSAGE as MAX_MESSAGE
from snapshotter.errors import RETRYABLE_STATUSES as RETRYABLE_STATUSES
from snapshotter.errors import AddressRefused as AddressRefused
from snapshotter.errors import BlobNotFound as BlobNotFound
from snapshotter.errors import CaptureError as CaptureError
from snapshotter.errors import ConfigError as ConfigError
from snapshotter.errors import ExtractionError as ExtractionError
from snapshotter.errors import FetchError as FetchError
from snapshotter.errors import InputError as InputError
from snapshotter.errors import IntegrityError as IntegrityError
from snapshotter.errors import SnapError as SnapError
from snapshotter.errors import StoreError as StoreError
from snapshotter.errors import TooLarge as TooLarge

# The pure verifier raises its own errors (it imports nothing of snap): unusable input, exit 2.
from verifier.errors import OffsetError as OffsetError
from verifier.errors import SelectorError as SelectorError
from verifier.errors import VerifierError as VerifierError


class BrokerError(SnapError):
    """The message broker (SNAP_BROKER_URL) cannot be reached or refused a message."""


class ListenError(SnapError):
    """The address and port cannot be listened on (in use, not this machine's, no permission)."""


# class -> exit code, looked up along the error's MRO (a subclass without a row exits as its
# parent does; a test checks every class has a row all the same, so a new error is mapped on
# purpose).
EXIT_CODES: dict[type[BaseException], int] = {
    SnapError: 1,
    InputError: 2,
    InputTooLarge: 2,
    NothingToCheck: 2,  # well-formed, citing nothing: its own errorType tells it apart
    VerifierError: 2,
    OffsetError: 2,
    SelectorError: 2,
    ConfigError: 2,
    CaptureError: 1,
    FetchError: 1,
    AddressRefused: 1,
    TooLarge: 1,
    ExtractionError: 1,
    ExtractionConflict: 1,
    StoreError: 3,
    BlobNotFound: 1,
    IntegrityError: 1,
    RecordNotFound: 1,
    DatabaseError: 3,
    BrokerError: 3,
    ListenError: 3,
    OutputError: 3,  # where the output goes is as unusable as a full store
    AttestationFailure: 1,  # a signature, token or the log does not check
    TimestampUnavailable: 3,  # the time-stamping authority cannot be reached
}


def exit_code_of(error: SnapError | VerifierError) -> int:
    """The exit code for any error of the hierarchy: the verifier's are unusable input."""
    for cls in type(error).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return EXIT_CODES[SnapError]


def is_transient(error: BaseException) -> bool:
    """Whether trying the same work again later may succeed (``records.errors.is_transient``),
    or the workers' broker could not be reached."""
    return isinstance(error, BrokerError) or _records_is_transient(error)
