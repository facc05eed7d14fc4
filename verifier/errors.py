"""The verifier's errors: a selector or an offset that cannot be used as given.

They live here, not in the application, because the verifier is a pure library that imports
nothing of snap; ``snap.errors`` re-exports them as part of snap's one error hierarchy, where
they count as unusable input (exit 2).
"""

from __future__ import annotations


class VerifierError(ValueError):
    """A one-line message about input the verifier cannot use."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        return str(self)


class OffsetError(VerifierError):
    """An offset runs past the text, or splits a UTF-16 surrogate pair or a UTF-8 sequence."""


class SelectorError(VerifierError):
    """A selector is malformed (start after end, missing exact text, unknown unit)."""


class PackError(VerifierError):
    """Bytes that are not a packed prepared source of the given text and version: damaged,
    truncated, foreign or of another layout (``verifier.packed``).  The cache that read them
    tokenizes the text again; it never reaches a user."""


class CodeSpanError(VerifierError):
    """Code spans that are not sorted, non-overlapping, non-empty ranges inside the text."""
