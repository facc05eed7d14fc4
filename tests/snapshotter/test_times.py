"""The one time format: what is written is read back as the same instant, in UTC, whatever zone
the time was made in; the wire form keeps the second, the precise form the microsecond."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snapshotter.times import parse_time, precise_time, wire_time, wire_time_or_none

MOMENTS = st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from(
        [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
    ),
)


@given(MOMENTS)
def test_the_precise_form_reads_back_as_the_same_instant(moment: datetime) -> None:
    text = precise_time(moment)
    assert text.endswith("Z")
    assert len(text) == len("2026-11-05T09:30:00.000000Z")
    assert parse_time(text) == moment
    assert parse_time(text).tzinfo is UTC


@given(MOMENTS)
def test_the_wire_form_keeps_the_second(moment: datetime) -> None:
    text = wire_time(moment)
    assert len(text) == len("2026-11-05T09:30:00Z")
    assert parse_time(text) == moment.replace(microsecond=0)
    assert wire_time(parse_time(text)) == text


def test_known_values() -> None:
    moment = datetime(2026, 11, 5, 9, 30, 0, 120, tzinfo=UTC)
    assert wire_time(moment) == "2026-11-05T09:30:00Z"
    assert precise_time(moment) == "2026-11-05T09:30:00.000120Z"
    assert wire_time_or_none(None) is None
    # an offset is converted, a time with no zone is taken as UTC (as SQLite returns it)
    assert wire_time(datetime(2026, 11, 5, 11, 30, tzinfo=timezone(timedelta(hours=2)))) == (
        "2026-11-05T09:30:00Z"
    )
    assert wire_time(datetime(2026, 11, 5, 9, 30)) == "2026-11-05T09:30:00Z"
    assert parse_time("2026-11-05") == datetime(2026, 11, 5, tzinfo=UTC)
    assert parse_time(" 2026-11-05T10:30:00+01:00 ") == datetime(2026, 11, 5, 9, 30, tzinfo=UTC)


@pytest.mark.parametrize("text", ["", "yesterday", "2026-13-01", "05/11/2026"])
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_time(text)
