"""Errors of attestation; the shell maps them to exit codes in its one table (snap.errors)."""

from __future__ import annotations

from snapshotter.errors import ConfigError, SnapError


class AttestationFailure(SnapError):
    """A signature, a timestamp token or the log does not check: an integrity failure (1)."""


class KeyError_(ConfigError):
    """The signing key or a certificate chain cannot be read or used (2)."""


class TimestampUnavailable(SnapError):
    """The time-stamping authority could not be reached or refused the request. The capture
    is kept and says "no trusted timestamp" with this reason (3)."""
