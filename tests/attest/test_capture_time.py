"""What a trusted timestamp says of the capture time a manifest states (snap's own clock):
confirmed when stamped within minutes after it, only "existed by then" when stamped long
after, contradicted when stamped before it. The other side's expert set snap's clock 200 days
slow and got "signed and timestamped" with no word about the gap (stop 44's trial)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import snapshotter.fetch
from records.attest.checks import CLOCK_TOLERANCE, STAMP_WINDOW, SealState
from records.vocabulary import CaptureTime
from snapshotter.times import now
from tests.attest.test_verify_seals import make_home
from tests.attest.tsa import LocalTsa

NOON = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def sealed(lag: timedelta, *, stamped: bool = True) -> SealState:
    stamped_at = NOON + lag if stamped else None
    return SealState("valid", "valid", (), 1, "sha256:00", True, stamped, (), NOON, stamped_at)


@given(st.timedeltas(min_value=timedelta(days=-400), max_value=timedelta(days=400)))
def test_the_verdict_follows_the_stamps_lag_behind_the_stated_time(lag: timedelta) -> None:
    verdict = sealed(lag).capture_time
    if lag < -CLOCK_TOLERANCE:
        assert verdict is CaptureTime.CONTRADICTED
    elif lag <= STAMP_WINDOW:
        assert verdict is CaptureTime.CONFIRMED
    else:
        assert verdict is CaptureTime.STAMPED_LATER
    assert SealState.of_document(_document(sealed(lag))).capture_time is verdict


def test_no_valid_token_or_no_stated_time_confirms_nothing() -> None:
    assert sealed(timedelta(0), stamped=False).capture_time is CaptureTime.UNCONFIRMED
    imported = SealState("valid", "valid", (), 1, "sha256:00", True, True, (), None, NOON)
    assert imported.capture_time is CaptureTime.UNCONFIRMED
    assert imported.capture_time_words().startswith("not stated by snap")


def _document(seal: SealState) -> dict[str, object]:
    from records.wire_attest import seal_state_json

    return json.loads(json.dumps(seal_state_json(seal)))


@pytest.mark.parametrize(
    ("skew", "verdict", "seal_line", "audit_words"),
    [
        (timedelta(0), CaptureTime.CONFIRMED, "signed and timestamped\n", "confirmed by the"),
        (
            timedelta(days=-200),
            CaptureTime.STAMPED_LATER,
            "signed and timestamped, stamped long after the capture time (not confirmed)",
            "not confirmed: stamped 200 days later",
        ),
        (
            timedelta(hours=3),
            CaptureTime.CONTRADICTED,
            "signed and timestamped, stamped before the capture time (snap's clock ran fast)",
            "contradicted: the trusted timestamp is 3 hours earlier",
        ),
    ],
)
def test_verify_and_audit_say_whether_the_timestamp_bears_out_the_capture_time(
    tmp_path: Path,
    tsa: LocalTsa,
    monkeypatch: pytest.MonkeyPatch,
    skew: timedelta,
    verdict: CaptureTime,
    seal_line: str,
    audit_words: str,
) -> None:
    """snap's clock set ``skew`` off while it captures; the authority's clock is right."""
    monkeypatch.setattr(snapshotter.fetch, "now", lambda: now() + skew)
    home = make_home(tmp_path, tsa)
    code, result = home.verify()
    assert code == 0, result
    seal = result["seal"]
    assert seal["intact"]
    assert seal["captureTime"] == verdict.value
    assert seal["stampedAt"] is not None
    assert seal["capturedAt"] is not None
    text = home.snap("verify", str(home.citation)).output
    assert f"seal: 1 capture read, {seal_line}" in text
    audit = home.snap("audit", "--snapshot", home.snapshot_id)
    assert audit.exit_code == 0, audit.output
    assert audit_words in audit.output, audit.output
    page = tmp_path / "evidence.html"
    exported = home.snap("export", "--format", "html", "-o", str(page), str(home.citation))
    assert exported.exit_code == 0, exported.output
    assert audit_words in page.read_text(encoding="utf-8")
