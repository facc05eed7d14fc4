"""Errors as RFC 9457 problem details: the one place that maps snap's error hierarchy to HTTP.

The command line maps the same classes to exit codes (``snap.errors.EXIT_CODES``); here each
class gets a status and a problem type, and ``detail`` is the very line the CLI prints after
``snap: error:``.  ``exitCode`` and ``errorType`` are extension members, so a client can act
on the same facts a shell script acts on.  Classes are looked up along the error's MRO, so a
subclass without a row of its own answers as its parent does (a test checks every class of
``snap.errors`` has a row all the same, so a new error is mapped on purpose).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snap.errors import (
    AddressRefused,
    AttestationFailure,
    BlobNotFound,
    BrokerError,
    CaptureError,
    ConfigError,
    DatabaseError,
    ExtractionConflict,
    ExtractionError,
    FetchError,
    InputError,
    InputTooLarge,
    IntegrityError,
    ListenError,
    NothingToCheck,
    OffsetError,
    OutputError,
    RecordNotFound,
    SelectorError,
    SnapError,
    StoreError,
    TimestampUnavailable,
    TooLarge,
    VerifierError,
    exit_code_of,
)
from snapshotter.browser.errors import BrowserUnavailable

MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "/problems/"  # a URI reference; docs/http.md lists every type


@dataclass(frozen=True)
class ProblemKind:
    status: int
    slug: str
    title: str

    @property
    def type(self) -> str:
        return TYPE_PREFIX + self.slug


# class -> (HTTP status, problem type, title); the most specific class first is not needed:
# lookup follows the error's MRO.
PROBLEMS: dict[type[BaseException], ProblemKind] = {
    SnapError: ProblemKind(500, "snap-error", "snap could not do this"),
    InputError: ProblemKind(400, "unusable-input", "The input cannot be used"),
    InputTooLarge: ProblemKind(413, "input-too-large", "The input is larger than the limit"),
    NothingToCheck: ProblemKind(422, "nothing-to-check", "The response cites nothing to check"),
    VerifierError: ProblemKind(400, "unusable-input", "The input cannot be used"),
    OffsetError: ProblemKind(400, "unusable-input", "The input cannot be used"),
    SelectorError: ProblemKind(400, "unusable-input", "The input cannot be used"),
    ConfigError: ProblemKind(500, "configuration", "The server's configuration cannot be used"),
    CaptureError: ProblemKind(502, "capture-failed", "The source could not be captured"),
    FetchError: ProblemKind(502, "fetch-failed", "The source could not be fetched"),
    AddressRefused: ProblemKind(403, "address-refused", "The source's address is not allowed"),
    TooLarge: ProblemKind(502, "source-too-large", "The source is larger than the size cap"),
    ExtractionError: ProblemKind(502, "extraction-failed", "The source's text cannot be read"),
    ExtractionConflict: ProblemKind(409, "extraction-conflict", "A different text is recorded"),
    StoreError: ProblemKind(503, "store-unavailable", "The blob store cannot be used"),
    BlobNotFound: ProblemKind(410, "blob-missing", "The recorded blob is gone from its store"),
    IntegrityError: ProblemKind(409, "integrity-failure", "The stored bytes do not hash"),
    RecordNotFound: ProblemKind(404, "not-found", "Nothing is recorded for this"),
    DatabaseError: ProblemKind(503, "database-unavailable", "The database cannot be used"),
    BrokerError: ProblemKind(503, "broker-unavailable", "The workers' broker cannot be reached"),
    BrowserUnavailable: ProblemKind(
        501, "browser-unavailable", "This server cannot capture in a browser"
    ),
    ListenError: ProblemKind(500, "snap-error", "snap could not do this"),  # before any request
    OutputError: ProblemKind(500, "snap-error", "snap could not do this"),  # the CLI's stdout
    AttestationFailure: ProblemKind(
        409, "integrity-failure", "A seal of the evidence does not check"
    ),
    TimestampUnavailable: ProblemKind(
        503, "timestamp-unavailable", "The time-stamping authority cannot be reached"
    ),
}
# Conditions of the HTTP layer itself, not of snap's use cases.
UNAUTHORIZED = ProblemKind(401, "unauthorized", "A valid bearer token is needed")
TIMEOUT = ProblemKind(504, "timeout", "The request took longer than the time limit")
INTERNAL = ProblemKind(500, "internal-error", "Internal error")
BAD_REQUEST = ProblemKind(400, "unusable-input", "The input cannot be used")
# Answered by snap's uvicorn protocol (snap.service.serving), before the app sees a request.
MALFORMED = ProblemKind(400, "malformed-request", "The request is not valid HTTP")
SLOW = ProblemKind(408, "header-timeout", "The request's headers came too slowly")


def kind_of(error: BaseException) -> ProblemKind:
    for cls in type(error).__mro__:
        if cls in PROBLEMS:
            return PROBLEMS[cls]
    return INTERNAL


def problem(kind: ProblemKind, detail: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind.type, "title": kind.title, "status": kind.status, "detail": detail} | extra


def problem_of(error: SnapError | VerifierError) -> dict[str, Any]:
    """The problem document for an error of snap's hierarchy, with the CLI's line and code."""
    return problem(
        kind_of(error), error.message, exitCode=exit_code_of(error), errorType=type(error).__name__
    )


def http_problem(status: int, detail: str) -> dict[str, Any]:
    """A problem of plain HTTP (no such route, method not allowed): ``about:blank``."""
    from http import HTTPStatus

    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = "Error"
    return {"type": "about:blank", "title": title, "status": status, "detail": detail}


# The members every problem has, for the OpenAPI document.
PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "exitCode": {"type": "integer", "description": "what the snap CLI exits with"},
        "errorType": {"type": "string", "description": "the class in snap.errors"},
    },
}
