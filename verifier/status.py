"""Every status a citation check can end in: the one enum of snap.

It lives at the bottom of the import graph (the pure verifier imports nothing of the app) so
that the matcher, the use cases, the CLI and the HTTP service all name statuses the same way.
``Status`` is a ``StrEnum``: a member equals its string value, so JSON output and database
rows hold the plain names below.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """What one check of one citation found; only ``QUOTE_FOUND`` passes. What each means is
    ``Status.meaning`` (below, in ``_MEANINGS``)."""

    QUOTE_FOUND = "quote_found"
    NOT_FOUND = "not_found"
    COULD_NOT_CHECK = "could_not_check"
    POSITION_MISMATCH = "position_mismatch"
    CONTEXT_MISMATCH = "context_mismatch"
    STALE_FINGERPRINT = "stale_fingerprint"
    INTEGRITY_FAILURE = "integrity_failure"
    UNKNOWN_SNAPSHOT = "unknown_snapshot"
    SOURCE_CHANGED = "source_changed"
    NO_QUOTE = "no_quote"
    SNIPPET_NOT_VERBATIM = "snippet_not_verbatim"

    @property
    def passed(self) -> bool:
        """True only for ``QUOTE_FOUND``: every other status is a failure to prove the quote."""
        return self is Status.QUOTE_FOUND

    @property
    def headline(self) -> str:
        """The status in a few words, as the CLI prints it and the evidence page shows it."""
        return "no quote to check" if self is Status.NO_QUOTE else self.value.replace("_", " ")

    @property
    def meaning(self) -> str:
        """One sentence for a reader who has never seen snap."""
        return _MEANINGS[self]


_MEANINGS = {
    Status.QUOTE_FOUND: (
        "The quote is in the stored text, as written (up to the documented copy noise)."
    ),
    Status.NOT_FOUND: (
        "The quote is not in the stored text; the closest passage is shown for comparison."
    ),
    Status.COULD_NOT_CHECK: (
        "No exact comparison is possible (no usable text, or an ellipsis inside the quote)."
    ),
    Status.POSITION_MISMATCH: "The quote is in the text, but not at the cited position or page.",
    Status.CONTEXT_MISMATCH: (
        "The quote is in the text, but never next to the cited prefix and suffix."
    ),
    Status.STALE_FINGERPRINT: (
        "The citation carries hashes that differ from the stored snapshot's."
    ),
    Status.INTEGRITY_FAILURE: (
        "The stored bytes no longer hash to their digest, are gone from their store, or the"
        " capture's seal (its signature or trusted timestamp) does not hold."
    ),
    Status.UNKNOWN_SNAPSHOT: "No such snapshot is recorded (or the URL was never captured).",
    Status.SOURCE_CHANGED: (
        "The quote is in the cited snapshot but gone from the latest capture (re-verification)."
    ),
    Status.NO_QUOTE: (
        "The citation names a source but quotes nothing (OpenAI url_citation, Gemini web "
        "chunk): snap can prove the source was captured, not that it supports the claim."
    ),
    Status.SNIPPET_NOT_VERBATIM: (
        "A search engine's snippet (Perplexity) that is not word for word in the source; "
        "snippets are not promised verbatim, so this is not evidence of a fabricated quote."
    ),
}
