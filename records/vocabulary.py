"""The words records/ and the shells compare and store, as enums: one place to read them, and
one place a test (tests/records/test_records_vocabulary.py) allows them to be spelled.

A citation check's status is ``verifier.Status`` (the pure verifier needs it, so it lives at the
bottom of the import graph); everything else snap counts, stores or branches on is here. Each
is a ``StrEnum``: a member equals its string value, so database rows, JSON output and CHECK
constraints hold the plain words, and a comparison with a row's column needs no conversion.
"""

from __future__ import annotations

from enum import StrEnum

from verifier.status import Status

__all__ = [
    "REFETCH_FAILED",
    "ArchiveAttestation",
    "BatchKind",
    "BlobState",
    "CaptureOutcome",
    "CaptureTime",
    "FailureKind",
    "ItemState",
    "RequestKind",
    "Status",
]


class BlobState(StrEnum):
    """What ``fsck`` and ``audit`` say about one recorded blob: a state of stored bytes, never
    a status of a citation check."""

    INTACT = "intact"  # the recorded version is there and hashes to its digest
    SHADOWED = "shadowed"  # intact, but a delete marker or newer version sits on top of it
    DAMAGED = "damaged"  # the recorded version's bytes do not hash to the digest
    MISSING = "missing"  # the recorded version is gone from the store it was written to

    @property
    def holds(self) -> bool:
        """The evidence is intact: a shadowed blob's recorded version still hashes."""
        return self in (BlobState.INTACT, BlobState.SHADOWED)


class BatchKind(StrEnum):
    """The bulk work a batch holds (records.jobs); each kind is one Celery task."""

    CAPTURE = "capture"
    REVERIFY = "reverify"
    REEXTRACT = "reextract"


class ItemState(StrEnum):
    """One batch item's life: pending -> running -> done, or failed (records.jobs)."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"

    @property
    def open(self) -> bool:
        """Still to be run (a lost message leaves its item in one of these)."""
        return self in (ItemState.PENDING, ItemState.RUNNING)


class FailureKind(StrEnum):
    """Why a batch item failed: a transient failure is re-queued by ``snap jobs --resume``."""

    TRANSIENT = "transient"
    PERMANENT = "permanent"


class RequestKind(StrEnum):
    """What a citation request carries (records.inputs), and so how it is checked."""

    QUOTED = "quote"  # the quoted words: they are checked
    UNQUOTED = "no_quote"  # a source but no quote
    SNIPPET = "snippet"  # a search-engine excerpt: checked, but never promised verbatim


# ``reverify --refetch``: a cited URL that could not be captured again (an outcome of the
# capture, reported beside the citations' statuses, never stored as a verification).
REFETCH_FAILED = "refetch_failed"


class CaptureOutcome(StrEnum):
    """How one attempt to capture a source ended: every attempt is recorded, a failed one too."""

    STORED = "stored"
    FAILED = "failed"


class CaptureTime(StrEnum):
    """What a capture's trusted timestamp says of the capture time its manifest states (snap's
    own clock): the token proves only that the manifest existed by the authority's time."""

    CONFIRMED = "confirmed"  # stamped within minutes after the stated time: the time holds
    STAMPED_LATER = "stamped_later"  # stamped long after: only "by the stamp's time" is proved
    CONTRADICTED = "contradicted"  # stamped before the stated time: snap's clock ran fast
    UNCONFIRMED = "unconfirmed"  # no valid token, or no time stated (an import's is a claim)


class ExtractionSource(StrEnum):
    """What an extraction's text was made from (``extractions.source``): the stored raw bytes
    (for a web page, the text of its HTML source), or the page a browser rendered from them
    in one capture (``snapshotter.browser``), after its scripts and styles ran."""

    RAW = "raw"
    RENDERED = "rendered"

    @property
    def described(self) -> str:
        """In words, for a reader who must tell the two apart."""
        if self is ExtractionSource.RENDERED:
            return "the text the browser rendered"
        return "the text extracted from the source as captured, not as a browser rendered it"

    @property
    def short(self) -> str:
        if self is ExtractionSource.RENDERED:
            return "the rendered text"
        return "the source's text"


class ImportOutcome(StrEnum):
    """What became of one record of an imported WARC or WACZ (``snap import``)."""

    IMPORTED = "imported"
    EXISTS = "exists"  # imported before
    SKIPPED = "skipped"  # not a capture, or a revisit without its original
    REFUSED = "refused"  # the record's reason says why
    DEFERRED = "deferred"  # a revisit or redirect resolved at the end; never reported


class ArchiveAttestation(StrEnum):
    """Whether an imported capture is one its archive attests (``records.imports.attested``):
    kept in its provenance as ``archiveAttestation``, the word then ``: `` and what was found."""

    NONE = "none"  # the archive attests no capture of this URL at this time
    HOLDS = "holds"  # its signed manifest names these bytes, and its checks found nothing
    BROKEN = "does not hold"  # a blob differs from what the manifest names, or a check fails


# The outcomes an import's summary counts, in the order it prints them.
REPORTED_IMPORT_OUTCOMES = (
    ImportOutcome.IMPORTED,
    ImportOutcome.EXISTS,
    ImportOutcome.SKIPPED,
    ImportOutcome.REFUSED,
)
