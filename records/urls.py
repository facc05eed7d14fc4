"""One canonical form of a URL, for looking records up; records keep URLs exactly as given.

Models cite ``…/page.html#section`` links, people type ``HTTP://Host:80/``: these all name the
page snap captured. The canonical form lower-cases the scheme and host, encodes the host with
IDNA, drops the default port and the fragment, and normalises percent-encoding: a character a
URL cannot hold as it is (a space, a control, a character outside ASCII, ``"<>\\^`{|}``) is
percent-encoded as UTF-8, as a browser sends it, escapes get upper-case hex, and escaped
unreserved characters are decoded. So ``…/ü.html``, ``…/%C3%BC.html`` and ``…/%c3%bc.html``
name one page. It is computed locally: no name is ever resolved.

Keys recorded before raw characters were encoded hold them as typed; ``lookup_keys`` gives
those spellings too, so a page captured then is found by either spelling (the records are
append-only, so their keys are not rewritten).

Tracking parameters (``TRACKING_PREFIXES``: ``utm_source=openai`` and the other Google
Analytics campaign tags, which OpenAI appends to every cited URL) do not name another page: a
URL that has no capture of its own is looked up again without them (``without_tracking``).
The URL is kept and shown as given.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import quote, urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
TRACKING_PREFIXES = ("utm_",)
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_RAW = re.compile(r'[^\x21-\x7e]|["<>\\^`{|}]')  # what a URL cannot hold unescaped
_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def canonical_url(url: str) -> str:
    """The lookup key of ``url``; a string that is not a URL with a scheme is kept as is."""
    return _canonical(url, _encoded)


def lookup_keys(url: str) -> list[str]:
    """The keys a record of ``url`` may be under: ``canonical_url``'s, and the keys recorded
    before raw characters were encoded, of ``url`` as typed and with its escapes of such
    characters decoded (the spelling a capture typed with them raw was recorded under)."""
    key = canonical_url(url)
    if "%" not in url and _RAW.search(url) is None:  # most URLs: the three spellings are one
        return [key]
    keys = [key, _canonical(url, str), _canonical(url, _decoded)]
    return [key for key in dict.fromkeys(keys) if _storable(key)]


def _storable(key: str) -> bool:
    """A key a database can hold: a lone surrogate (JSON allows ``\\ud800``) cannot be."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _canonical(url: str, raw_characters: Callable[[str], str]) -> str:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url
    if not parts.scheme:
        return url
    scheme = parts.scheme.lower()
    netloc = _netloc(parts.hostname, port, scheme, parts.netloc)
    path = _escapes(raw_characters(parts.path)) or ("/" if scheme in DEFAULT_PORTS else "")
    return urlunsplit((scheme, netloc, path, _escapes(raw_characters(parts.query)), ""))


def _netloc(hostname: str | None, port: int | None, scheme: str, raw: str) -> str:
    if hostname is None:
        return raw.lower()
    userinfo = raw.rpartition("@")[0] + "@" if "@" in raw else ""
    host = _idna(hostname)
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    shown_port = "" if port is None or DEFAULT_PORTS.get(scheme) == port else f":{port}"
    return f"{userinfo}{host}{shown_port}"


def _idna(hostname: str) -> str:
    """The host as its ASCII (punycode) form, lower-cased.  An ASCII host is only lower-cased:
    Python's IDNA codec returns an ASCII name unchanged or refuses it (an empty or too long
    label), and either way the key is then its lower case; so the codec, and the ``stringprep``
    tables it loads, are left to hosts that need them (most commands see only ASCII hosts)."""
    if hostname.isascii():
        return hostname.lower()
    try:
        return hostname.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return hostname.lower()


def _escapes(text: str) -> str:
    def fix(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else "%" + match.group(1).upper()

    return _ESCAPE.sub(fix, text)


def _encoded(text: str) -> str:
    """``text`` with each character a URL cannot hold as it is percent-encoded as UTF-8."""
    return _RAW.sub(lambda raw: quote(raw.group(), safe="", errors="surrogatepass"), text)


def _decoded(text: str) -> str:
    """``text`` with the escapes of characters a URL cannot hold as they are decoded (the
    others kept, as is a run of escapes that is not UTF-8): the inverse of ``_encoded``."""

    def decode(run: re.Match[str]) -> str:
        try:
            chars = bytes.fromhex(run.group().replace("%", "")).decode("utf-8")
        except UnicodeDecodeError:
            return run.group()
        return "".join(c if _RAW.fullmatch(c) else quote(c, safe="") for c in chars)

    return _ESCAPES.sub(decode, text)


def without_tracking(url: str) -> str | None:
    """``url`` without its tracking query parameters (names starting with a prefix of
    ``TRACKING_PREFIXES``), or None when it has none. Every other parameter, and their order
    and spelling, is kept."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if not parts.query:
        return None
    fields = parts.query.split("&")
    kept = [f for f in fields if not f.split("=", 1)[0].lower().startswith(TRACKING_PREFIXES)]
    if len(kept) == len(fields):
        return None
    return urlunsplit(parts._replace(query="&".join(kept)))
