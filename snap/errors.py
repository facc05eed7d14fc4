"""The one error hierarchy of snap.

Every failure a user can cause or meet is a ``SnapError`` whose message is one line and whose
``exit_code`` is what the command line exits with.  The CLI maps errors to output in exactly one
place (``snap.cli.main``); library users catch these classes directly.

Exit codes: 0 success, 1 a check failed or a capture failed, 2 unusable input or configuration,
3 a backend (store or database) could not be used.
"""

from __future__ import annotations

import re

# The pure verifier raises its own errors (it imports nothing of snap): unusable input, exit 2.
from verifier.errors import OffsetError as OffsetError
from verifier.errors import SelectorError as SelectorError
from verifier.errors import VerifierError as VerifierError

# Control characters other than whitespace (which is collapsed): a URL or header from a hostile
# server must not move the cursor or recolour the terminal of whoever reads the error.
MAX_MESSAGE = 2000
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


class SnapError(Exception):
    """Base class: a one-line, user-facing message and the exit code that goes with it."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        line = " ".join(_CONTROL.sub(_escaped, message).split())
        if len(line) > MAX_MESSAGE:  # a 20,000-character URL from a server is not a clear line
            line = f"{line[: MAX_MESSAGE - 40]}… ({len(line) - MAX_MESSAGE + 40} characters cut)"
        super().__init__(line)

    @property
    def message(self) -> str:
        return str(self)


class InputError(SnapError):
    """The input cannot be used as given (malformed JSON, wrong types, impossible offsets)."""

    exit_code = 2


class InputTooLarge(InputError):
    """The input is larger than the input limit (``SNAP_MAX_INPUT_BYTES``); HTTP answers 413."""


def exit_code_of(error: SnapError | VerifierError) -> int:
    """The exit code for any error of the hierarchy: the verifier's are unusable input."""
    return error.exit_code if isinstance(error, SnapError) else InputError.exit_code


class ConfigError(SnapError):
    """A setting (environment variable or option) has a value snap cannot use."""

    exit_code = 2


class CaptureError(SnapError):
    """A capture failed; it carries what is known of the attempt so that the failure itself can
    be recorded (an auditor asking what snap saw at a URL must see failures too)."""

    def __init__(
        self,
        message: str,
        *,
        url: str | None = None,
        final_url: str | None = None,
        status: int | None = None,
        provenance: dict[str, object] | None = None,
    ) -> None:
        super().__init__(message)
        self.url = url
        self.final_url = final_url
        self.status = status
        self.provenance = provenance or {}


class FetchError(CaptureError):
    """Fetching failed: network error, non-2xx status, refused address, size cap."""


class AddressRefused(FetchError):
    """The URL resolves to an address the request-forgery guard does not allow."""


class TooLarge(FetchError):
    """The body (after decompression) is larger than the configured cap."""


class ExtractionError(CaptureError):
    """The bytes claim a type whose text cannot be extracted faithfully (e.g. undecodable)."""


class ExtractionConflict(SnapError):
    """Two different texts recorded for one (snapshot, extractor, decoding): refused."""


class StoreError(SnapError):
    """The blob store cannot be used (unreachable, misconfigured, permission denied)."""

    exit_code = 3


class BlobNotFound(StoreError):
    """No blob is stored under the requested digest."""

    exit_code = 1


class IntegrityError(StoreError):
    """Stored bytes do not hash to the digest they are stored under."""

    exit_code = 1

    def __init__(self, key: str, expected: str, actual: str) -> None:
        self.key = key
        self.expected = expected
        self.actual = actual
        super().__init__(f"integrity failure at {key}: expected {expected}, got {actual}")


class RecordNotFound(SnapError):
    """A citation, snapshot or URL asked for by the user is not in the database."""


class DatabaseError(SnapError):
    """The database cannot be used (unreachable, not migrated, wrong URL)."""

    exit_code = 3


class BrokerError(SnapError):
    """The message broker (SNAP_BROKER_URL) cannot be reached or refused a message."""

    exit_code = 3


# Answers that say "not now" rather than "never": a worker tries these again, with backoff.
RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


def is_transient(error: BaseException) -> bool:
    """Whether trying the same work again later may succeed: a network failure, a timeout, a
    retryable HTTP status, a store or database that could not be reached. A refused address,
    an oversize body, a 404, undecodable bytes, damaged evidence or unusable input fail the
    same way every time, so a worker marks them failed at once."""
    if isinstance(error, (AddressRefused, TooLarge)):
        return False
    if isinstance(error, FetchError):
        return error.status is None or error.status in RETRYABLE_STATUSES
    if isinstance(error, (BlobNotFound, IntegrityError)):
        return False
    return isinstance(error, (StoreError, DatabaseError, BrokerError))
