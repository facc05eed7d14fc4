"""The lookup key of a URL (records.urls): an ASCII host skips the IDNA codec, with the same key."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from records.urls import _idna, canonical_url

LABEL = st.text(string.ascii_letters + string.digits + "-_", min_size=0, max_size=70)


def codec_key(hostname: str) -> str:
    """What the key was before the ASCII shortcut: the codec, or on its refusal the lower case."""
    try:
        return hostname.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return hostname.lower()


@given(st.lists(LABEL, min_size=1, max_size=5).map(".".join))
def test_an_ascii_host_has_the_key_the_codec_gives(hostname: str) -> None:
    assert _idna(hostname) == codec_key(hostname)


def test_a_host_outside_ascii_is_encoded() -> None:
    assert canonical_url("https://BÜCHER.example/a") == "https://xn--bcher-kva.example/a"
    assert _idna("bücher.example") == codec_key("bücher.example")


def test_labels_the_codec_refuses_are_lower_cased() -> None:
    long_label = "A" * 64 + ".example"
    assert _idna(long_label) == codec_key(long_label) == long_label.lower()
    assert _idna("a..b") == codec_key("a..b") == "a..b"
