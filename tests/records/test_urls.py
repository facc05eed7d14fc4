"""The lookup key of a URL (records.urls): an ASCII host skips the IDNA codec, with the same key;
a path typed with raw characters and as a browser sends it have one key; and keys recorded
before raw characters were encoded are still looked up."""

from __future__ import annotations

import re
import string
from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from records.urls import _canonical, _idna, canonical_url, lookup_keys

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


# A path as a person types it: any characters but the ones that end or escape it, and those a
# URL parser drops, as a browser does (tabs and line breaks, white space at either end).
TYPED_PATH = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="%?#\t\n\r"), max_size=30
).filter(lambda path: path == path.strip())
# RFC 3986's reserved characters: a browser sends them as they are, and their escapes are not
# the same URL (``%2F`` is no ``/``); every other character but the unreserved is escaped.
RESERVED = ":/[]@!$&'()*+,;="


@given(TYPED_PATH)
def test_a_path_typed_raw_and_as_a_browser_sends_it_have_one_key(path: str) -> None:
    typed = f"http://host.test/{path}"
    sent = f"http://host.test/{quote(path, safe=RESERVED)}"
    lower_hex = re.sub("%[0-9A-F]{2}", lambda escape: escape.group().lower(), sent)
    assert canonical_url(typed) == canonical_url(sent) == canonical_url(lower_hex)
    assert canonical_url(canonical_url(typed)) == canonical_url(typed)


@given(TYPED_PATH)
def test_a_key_recorded_before_raw_characters_were_encoded_is_looked_up(path: str) -> None:
    """Records keep their keys (append-only): the key then was the path as typed."""
    typed = f"http://host.test/{path}"
    recorded_then = _canonical(typed, str)
    sent = f"http://host.test/{quote(path, safe=RESERVED)}"
    assert recorded_then in lookup_keys(typed)
    assert recorded_then in lookup_keys(sent)
    assert lookup_keys(sent)[0] == canonical_url(typed)


def test_spaces_and_characters_outside_ascii_are_encoded_once() -> None:
    assert canonical_url("http://h.test/ü.html") == "http://h.test/%C3%BC.html"
    assert canonical_url("http://h.test/%c3%bc.html") == "http://h.test/%C3%BC.html"
    assert canonical_url("file:///tmp/my file.txt?q=a b") == "file:///tmp/my%20file.txt?q=a%20b"
    assert canonical_url("http://h.test/a%2Fb%7E%FF") == "http://h.test/a%2Fb~%FF"


def test_a_lone_surrogate_is_no_key_a_database_is_asked_for() -> None:
    assert lookup_keys("http://h.test/\ud800") == ["http://h.test/%ED%A0%80"]
