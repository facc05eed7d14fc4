"""Every status a citation check can end in: the one enum of snap.

It lives at the bottom of the import graph (the pure verifier imports nothing of the app) so
that the matcher, the use cases, the CLI and the HTTP service all name statuses the same way.
``Status`` is a ``StrEnum``: a member equals its string value, so JSON output and database
rows hold the plain names below.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """What one check of one citation found; only ``QUOTE_FOUND`` passes."""

    QUOTE_FOUND = "quote_found"
    """The quote is in the stored text, as written (up to the documented copy noise)."""
    NOT_FOUND = "not_found"
    """The quote is not in the stored text; the closest passage is shown for comparison."""
    COULD_NOT_CHECK = "could_not_check"
    """No exact comparison is possible (no usable text, an ellipsis inside the quote)."""
    POSITION_MISMATCH = "position_mismatch"
    """The quote is in the text, but not at the cited position or page."""
    CONTEXT_MISMATCH = "context_mismatch"
    """The quote is in the text, but never next to the cited prefix and suffix."""
    STALE_FINGERPRINT = "stale_fingerprint"
    """The citation carries hashes that differ from the stored snapshot's."""
    INTEGRITY_FAILURE = "integrity_failure"
    """The stored bytes no longer hash to their digest, or are gone from their store."""
    UNKNOWN_SNAPSHOT = "unknown_snapshot"
    """No such snapshot is recorded (or the URL was never captured)."""
    SOURCE_CHANGED = "source_changed"
    """The quote is in the cited snapshot but gone from the latest capture (re-verification)."""
    NO_QUOTE = "no_quote"
    """The citation names a source but quotes nothing (OpenAI url_citation, Gemini web chunk):
    snap can prove the source was captured, not that it supports the claim."""
    SNIPPET_NOT_VERBATIM = "snippet_not_verbatim"
    """A search engine's snippet (Perplexity) that is not word for word in the source; snippets
    are not promised verbatim, so this is not evidence of a fabricated quote."""

    @property
    def passed(self) -> bool:
        """True only for ``QUOTE_FOUND``: every other status is a failure to prove the quote."""
        return self is Status.QUOTE_FOUND
