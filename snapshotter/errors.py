"""The snapshotter's errors (fetch, extract, store) and the root of snap's error hierarchy.

``SnapError`` lives here, in the lowest layer that raises one, so that ``records`` can subclass
it and the shell can catch it without any layer importing a higher one; ``InputError`` and
``ConfigError`` are here for the same reason (every layer above the verifier raises them).
Errors carry a one-line message and the facts of the failure, never an exit code or an HTTP
status: the shell maps classes to those, in one table each (``snap.errors.EXIT_CODES``,
``snap.service.problems.PROBLEMS``).
"""

from __future__ import annotations

import re

# Control characters other than whitespace (which is collapsed): a URL or header from a hostile
# server must not move the cursor or recolour the terminal of whoever reads the error.
MAX_MESSAGE = 2000
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
SHOWN_CHARS = 300


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def shown(target: object) -> str:
    """A URL, path or other name from outside as it appears in a line for a reader: a 20 KB URL
    is cut in the middle, so what follows it stays readable (the record keeps it whole), and
    every control character is escaped (``\\x1b``), line breaks and tabs too, so a name cannot
    recolour a terminal or forge a line of output."""
    text = str(target)
    if len(text) > SHOWN_CHARS:
        half = SHOWN_CHARS // 2
        text = f"{text[:half]}…[{len(text) - SHOWN_CHARS} characters]…{text[-half:]}"
    return _ANY_CONTROL.sub(_escaped, text)


def printable_line(message: str) -> str:
    """``message`` as one line that a terminal shows as it is: control characters escaped
    (``\\x1b``), whitespace collapsed. For a line shown beside the errors, not raised as one."""
    return " ".join(_CONTROL.sub(_escaped, message).split())


class SnapError(Exception):
    """Base class: a one-line, user-facing message."""

    def __init__(self, message: str) -> None:
        line = printable_line(message)
        if len(line) > MAX_MESSAGE:  # a 20,000-character URL from a server is not a clear line
            line = f"{line[: MAX_MESSAGE - 40]}… ({len(line) - MAX_MESSAGE + 40} characters cut)"
        super().__init__(line)

    @property
    def message(self) -> str:
        return str(self)


class InputError(SnapError):
    """The input cannot be used as given (malformed JSON, wrong types, impossible offsets)."""


class ConfigError(SnapError):
    """A setting (environment variable or option) has a value snap cannot use."""


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


class StoreError(SnapError):
    """The blob store cannot be used (unreachable, misconfigured, permission denied)."""


class BlobNotFound(StoreError):
    """No blob is stored under the requested digest."""


class IntegrityError(StoreError):
    """Stored bytes do not hash to the digest they are stored under."""

    def __init__(self, key: str, expected: str, actual: str) -> None:
        self.key = key
        self.expected = expected
        self.actual = actual
        super().__init__(f"integrity failure at {key}: expected {expected}, got {actual}")


# Answers that say "not now" rather than "never": a worker tries these again, with backoff.
RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
