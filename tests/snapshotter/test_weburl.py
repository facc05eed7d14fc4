"""URLs read as browsers read them: what is refused before any lookup, and what passes."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast
from urllib.parse import urlsplit

import pytest
from ada_url import parse_url
from hypothesis import given, settings
from hypothesis import strategies as st

from snap.errors import InputError, exit_code_of, is_transient
from snapshotter.fetch import FetchOptions, fetch
from snapshotter.weburl import InvalidURL, refuse_control_characters, web_url


@pytest.fixture
def no_lookup(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Fail the test if any name is looked up or any connection opened."""
    calls: list[object] = []

    def refuse(*args: object, **kwargs: object) -> Any:
        calls.append(args)
        pytest.fail(f"the resolver or a connection was reached with {args!r}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return calls


def _options() -> FetchOptions:
    return FetchOptions(max_bytes=1024, timeout=2.0, max_redirects=1, allow_private=True)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        # host names that are not host names (issue 20): refused before any lookup
        ("http://%zz/", "percent-encoded"),
        ("http://%31%32%37.0.0.1/", "percent-encoded"),
        ("http://127.0.0.1%2e/", "percent-encoded"),
        ("http://[fe80::1%25lo]/", "percent-encoded (or has a zone)"),
        # hosts browsers read differently
        ("http://127.0.0.1:8080\\@public.test/a", "backslash"),
        ("http://public.test\\@127.0.0.1/a", "backslash"),
        ("http://0x7f.0.0.1/", "the address 127.0.0.1 to a browser"),
        ("http://127.1/", "the address 127.0.0.1 to a browser"),
        ("http://2130706433/", "the address 127.0.0.1 to a browser"),
        ("http://１２７.０.０.１/", "the address 127.0.0.1 to a browser"),
        ("http://public.test@127.0.0.1/", "user or password"),
        # not absolute URLs with a host (the service took these for local paths)
        ("http:x.txt", "not an absolute URL with a host"),
        ("http:/x/secret.txt", "not an absolute URL with a host"),
        ("https:/secret.html", "not an absolute URL with a host"),
        ("http:", "not an absolute URL with a host"),
        ("http:///x", "no host"),
        # ports and schemes: unusable input, exit 2
        ("http://h:1:1/", "not a valid URL"),
        ("http://127.0.0.1:99999/", "not a valid URL"),
        ("http://127.0.0.1:0/", "port 0"),
        ("ftp://example.test/file", "only http and https"),
        ("http://a..b/", "not a host name"),
        ("http://x/\x00", "control character U+0000"),
        ("http://x/\x1f", "control character U+001F"),
        (" http://x/", "spaces around"),
    ],
)
def test_urls_that_are_not_plain_web_urls_are_refused_before_any_lookup(
    no_lookup: list[object], url: str, reason: str
) -> None:
    with pytest.raises(InvalidURL) as caught:
        fetch(url, _options())
    assert reason in caught.value.message
    assert exit_code_of(caught.value) == 2
    assert not is_transient(caught.value)  # a worker never tries it again
    assert no_lookup == []


@pytest.mark.parametrize(
    ("url", "host", "port", "href"),
    [
        ("http://example.test/a", "example.test", 80, "http://example.test/a"),
        ("HTTPS://EXAMPLE.test:8443", "example.test", 8443, "https://example.test:8443/"),
        ("http://[::1]:8080/x?q#f", "::1", 8080, "http://[::1]:8080/x?q#f"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:7f00:1", 80, "http://[::ffff:7f00:1]/"),
        ("http://bücher.test/", "xn--bcher-kva.test", 80, "http://xn--bcher-kva.test/"),
        ("http://x.test/a b", "x.test", 80, "http://x.test/a%20b"),
    ],
)
def test_plain_web_urls_pass(url: str, host: str, port: int, href: str) -> None:
    checked = web_url(url)
    assert (checked.host, checked.port, checked.href, checked.text) == (host, port, href, url)


def test_a_file_named_like_a_url_is_never_read_for_a_url(
    no_lookup: list[object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``http:x.txt`` names no file, even where one of that name exists in the working
    folder: a target starting with http: is a URL, and this one is refused."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "http:x.txt").write_text("secret")
    with pytest.raises(InvalidURL, match="not an absolute URL"):
        fetch("http:x.txt", _options())


def test_web_only_never_copies_a_local_file(tmp_path: Path, no_lookup: list[object]) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    for target in (str(secret), secret.as_uri()):
        with pytest.raises(InvalidURL):
            fetch(target, _options(), web_only=True)
    fetched = fetch(str(secret), _options())  # the command line's local file: still copied
    fetched.cleanup()


@pytest.mark.parametrize(
    ("text", "free_text", "refused"),
    [
        ("c-1\x00", False, "U+0000"),
        ("run\x01", False, "U+0001"),
        ("tab\there", False, "U+0009"),
        ("tab\there", True, None),
        ("line\nbreak", True, None),
        ("nul\x00", True, "U+0000"),
        ("lone \ud800 surrogate", True, "U+D800"),
        ("lone \udfff", False, "U+DFFF"),
        ("plain-id", False, None),
    ],
)
def test_one_check_for_text_from_outside(text: str, free_text: bool, refused: str | None) -> None:
    if refused is None:
        assert refuse_control_characters(text, "the id", free_text=free_text) == text
        return
    with pytest.raises(InputError, match=re.escape(refused)) as caught:
        refuse_control_characters(text, "the id", free_text=free_text)
    assert caught.value.message.startswith("the id contains")


AUTHORITY = st.lists(
    st.sampled_from([*"ab7.0x1:[]@%\\/?#-_ü９", "%2e", "%31", "::", "ffff", "127.0.0.1"]),
    max_size=10,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(authority=AUTHORITY, scheme=st.sampled_from(["http", "https", "HTTP"]))
def test_an_accepted_url_names_one_host_to_python_and_to_browsers(
    authority: str, scheme: str
) -> None:
    """The invariant the guard relies on: when ``web_url`` accepts a URL, urllib (which the
    fetcher's request line comes from), the WHATWG reading and ``WebURL`` name one host."""
    url = f"{scheme}://{authority}/p"
    try:
        checked = web_url(url)
    except InvalidURL:
        return
    browser = parse_url(url)
    python = urlsplit(url)
    assert browser["hostname"].strip("[]") == checked.host
    assert python.hostname is not None
    assert int(browser["port"] or checked.port) == checked.port == (python.port or checked.port)
    if python.hostname.isascii() and ":" not in python.hostname:
        assert python.hostname == checked.host


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("http://127.0.0.1:8080\\@public.test/a", None),  # a browser would open 127.0.0.1
        ("http://0x7f.1/a", None),
        ("http:x.txt", None),
        ("file:///etc/passwd", None),
        ("HTTP://Example.test/a b", "http://example.test/a%20b"),
    ],
)
def test_live_links_name_the_host_snap_read(url: str, link: str | None) -> None:
    """The evidence page's live link (of an imported record, which no fetch checked) goes only
    to a URL whose host snap and browsers read alike, written as browsers will read it."""
    from records.audit import CitationAudit
    from records.exports.evidence_page import live_url

    snapshot_id = "sha256:" + "a" * 64
    # the three attributes live_url reads of the typed audit (records.audit.CitationAudit)
    report = SimpleNamespace(
        citation=SimpleNamespace(url=url),
        snapshot=SimpleNamespace(snapshot_id=snapshot_id),
        captures=(SimpleNamespace(snapshot_id=snapshot_id, url=url, final_url=url),),
    )
    assert live_url(cast(CitationAudit, report)) == link
