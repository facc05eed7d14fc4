"""Whatever a hostile server puts into a message, the error stays one readable line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from snap.errors import MAX_MESSAGE, FetchError
from snapshotter.errors import SHOWN_CHARS, shown


@given(st.text())
def test_any_message_is_one_line_without_control_characters(text: str) -> None:
    message = FetchError(text).message
    assert "\n" not in message
    assert "\r" not in message
    assert len(message) <= MAX_MESSAGE
    assert not any(0 <= ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in message)


def test_an_escape_sequence_is_shown_not_obeyed() -> None:
    assert (
        FetchError("HTTP 404 from http://h/\x1b[2Jx").message == "HTTP 404 from http://h/\\x1b[2Jx"
    )


def test_a_long_url_keeps_both_ends() -> None:
    url = "http://127.0.0.1/" + "a" * 10_000 + "/end"
    short = shown(url)
    assert short.startswith("http://127.0.0.1/")
    assert short.endswith("/end")
    assert len(short) < SHOWN_CHARS + 40
