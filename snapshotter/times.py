"""The one place a time is written as text or read back from it.

Inside snap a time is a timezone-aware ``datetime`` in UTC; it becomes text only at an edge
(JSON, a WARC header, a stored provenance field) and is read back here too. Two forms exist,
both RFC 3339 in UTC with a ``Z``:

- ``wire_time``: to the second, the form every record and JSON document carries
  (``2026-11-05T09:30:00Z``);
- ``precise_time``: to the microsecond, for the moment of a capture (its provenance's
  ``fetchedAt`` and its WARC-Date), so two captures of one URL never share a timestamp.

``parse_time`` reads either form back, and any ISO 8601 time a user or an archive gives (an
offset is converted to UTC; a time with no offset is taken as UTC). The verifiable log's leaves
keep their own ``isoformat`` encoding (records.attest.log): they are hashed, so their bytes
can never change.
"""

from __future__ import annotations

from datetime import UTC, datetime

WIRE_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
PRECISE_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive time is taken to be UTC already (SQLite drops the zone)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def wire_time(moment: datetime) -> str:
    """To the second: the form of every time in snap's JSON."""
    return as_utc(moment).strftime(WIRE_FORMAT)


def wire_time_or_none(moment: datetime | None) -> str | None:
    return None if moment is None else wire_time(moment)


def precise_time(moment: datetime) -> str:
    """To the microsecond: the moment of a capture."""
    return as_utc(moment).strftime(PRECISE_FORMAT)


def parse_time(text: str) -> datetime:
    """A time in either form above, or any ISO 8601 date or time, as an aware UTC datetime.
    Raises ``ValueError`` for anything else: each caller says in its own words what was
    expected."""
    return as_utc(datetime.fromisoformat(text.strip().replace("Z", "+00:00")))
