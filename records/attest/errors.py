"""Errors of attestation; the shell maps them to exit codes in its one table (snap.errors)."""

from __future__ import annotations

from snapshotter.errors import ConfigError, IntegrityError, SnapError


class AttestationFailure(IntegrityError):
    """A seal (a manifest, its signature or timestamp token) or the log does not check: an
    integrity failure like bytes that do not hash (1), reported where a damaged blob is."""

    def __init__(self, message: str) -> None:  # a message, not IntegrityError's three digests
        SnapError.__init__(self, message)
        self.key = self.expected = self.actual = ""


class KeyError_(ConfigError):
    """The signing key or a certificate chain cannot be read or used (2)."""


NO_TIMESTAMP = "no trusted timestamp"  # how a capture or checkpoint without a token says so


class TimestampUnavailable(SnapError):
    """The time-stamping authority could not be reached or refused the request. The capture
    is kept and says "no trusted timestamp" with this reason (3)."""
