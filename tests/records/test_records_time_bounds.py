"""A time filter at the edge of the calendar (``0001-01-01T00:00:00+00:01``, which is before
any UTC time) is a bound, not an error: found by schemathesis as a 500 of POST /v1/reverify."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from records.models import UTCDateTime


def test_times_beyond_the_utc_calendar_bind_as_its_ends() -> None:
    bind = UTCDateTime().process_bind_param
    early = datetime(1, 1, 1, tzinfo=timezone(timedelta(minutes=1)))
    late = datetime(9999, 12, 31, 23, 59, tzinfo=timezone(-timedelta(hours=1)))
    assert bind(early, None) == datetime.min  # type: ignore[arg-type]
    assert bind(late, None) == datetime.max  # type: ignore[arg-type]
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone(timedelta(hours=1)))
    assert bind(now, None) == datetime(2026, 11, 30, 11, 0)  # type: ignore[arg-type]
    assert bind(datetime(2026, 1, 1, tzinfo=UTC), None) == datetime(2026, 1, 1)  # type: ignore[arg-type]
