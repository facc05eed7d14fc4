"""Which strings are web URLs that snap fetches, read the way a browser reads them.

A URL reaches snap from model output, an HTTP client or a list of URLs, and the evidence page
later links to it: snap must fetch the very host a browser (and a reader of the evidence)
would go to.  Python's ``urlsplit`` and the WHATWG URL standard, which browsers follow, read
some strings differently: ``http://a\\@b/`` is host ``b`` to one and host ``a`` to the other,
``http://0x7f.1/`` and ``http://%31%32%37.0.0.1/`` are the name ``0x7f.1`` or the address
127.0.0.1, ``http:x.txt`` has no host at all or the host ``x.txt``.  So a URL is read by both
(the WHATWG reading by ada, the parser of Node.js, through ``ada-url``) and accepted only when
they agree on scheme, host and port; every host that is not a plain host name or address
literal is refused here, before any name is looked up.

Characters below U+0020, DEL and the C1 controls are refused in every string from outside
(``refuse_control_characters``): a NUL is not text PostgreSQL can store, and the others are
silently removed or kept depending on who parses.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from snapshotter.errors import InputError
from snapshotter.errors import shown as _shown

WEB_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_HOST_CHARS = 253
MAX_LABEL_CHARS = 63
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")  # no PostgreSQL text holds these
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_\-]*[a-z0-9_])?")


class InvalidURL(InputError):
    """Not an absolute http(s) URL with a host that snap and browsers read alike (exit 2)."""


@dataclass(frozen=True)
class WebURL:
    """A URL snap may fetch: ``host`` is the one connected to and named in Host and TLS SNI
    (ASCII, lower case; an IPv6 address without brackets), ``href`` the WHATWG serialisation
    a browser would navigate to (what live links use)."""

    text: str
    scheme: str
    host: str
    port: int
    href: str

    @property
    def is_ip_literal(self) -> bool:
        return _ip_literal(self.host) is not None


def refuse_control_characters(text: str, what: str, *, free_text: bool = False) -> str:
    """``text`` unchanged, or InputError (exit 2, HTTP 400) naming ``what``: the one check of
    every string from outside (ids, runs, URLs, quotes) before it reaches the database, where a
    NUL is an error of the server (PostgreSQL stores no NUL) instead of unusable input.

    Ids, runs and URLs may hold no control character at all; ``free_text`` (a quote, a claim)
    may hold tabs and line breaks, but no NUL and no lone surrogate (JSON can spell both)."""
    found = (_UNSTORABLE if free_text else _CONTROL).search(text)
    if found is None and not free_text:
        found = _UNSTORABLE.search(text)
    if found is not None:
        kind = "character" if free_text else "control character"
        raise InputError(f"{what} contains the {kind} U+{ord(found.group()):04X}")
    return text


def web_url(text: str) -> WebURL:
    """Check ``text`` is an absolute http(s) URL with a host, read alike by snap and browsers.

    Raises InvalidURL with one line saying what is wrong; nothing is resolved or connected.
    """
    shown = _shown(text)
    found = _CONTROL.search(text)
    if found is not None:
        raise InvalidURL(f"the URL contains the control character U+{ord(found.group()):04X}")
    if text != text.strip():
        raise InvalidURL(f"the URL has spaces around it: {shown!r}")
    scheme = _scheme(text)
    rest = text[len(scheme) + 1 :]
    if not rest.startswith("//"):
        raise InvalidURL(f"not an absolute URL with a host (write {scheme}://host/…): {shown}")
    before_query = re.split(r"[?#]", rest[2:], maxsplit=1)[0]
    if "\\" in before_query:
        raise InvalidURL(f"the URL has a backslash, which browsers read as '/': {shown}")
    authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
    _check_authority(authority, shown)
    python_host, python_port = _python_reading(text, shown)
    browser = _browser_reading(text, shown)
    host = _agreed_host(python_host, browser, shown)
    port = python_port if python_port is not None else DEFAULT_PORTS[scheme]
    browser_port = int(str(browser["port"])) if browser["port"] else DEFAULT_PORTS[scheme]
    if port != browser_port:
        raise InvalidURL(f"browsers read another port in this URL: {shown}")
    return WebURL(text=text, scheme=scheme, host=host, port=port, href=str(browser["href"]))


def is_web_url(text: str) -> bool:
    """Whether ``text`` passes ``web_url``: only such URLs are fetched for model output, the
    HTTP service or the workers, never a local path."""
    try:
        web_url(text)
    except InputError:
        return False
    return True


def has_web_scheme(text: str) -> bool:
    """Whether ``text`` starts with ``http:`` or ``https:``: then it is a URL (good or bad),
    never a local path, wherever it is given."""
    match = _SCHEME.match(text.lstrip())
    return match is not None and match.group(1).lower() in WEB_SCHEMES


def _scheme(text: str) -> str:
    match = _SCHEME.match(text)
    if match is None:
        raise InvalidURL(f"not a URL: no scheme in {_shown(text)!r} (give an http(s) URL)")
    scheme = match.group(1).lower()
    if scheme not in WEB_SCHEMES:
        raise InvalidURL(
            f"only http and https URLs can be fetched, got {scheme}: in {_shown(text)}"
        )
    return scheme


def _check_authority(authority: str, shown: str) -> None:
    if "@" in authority:
        raise InvalidURL(
            f"the URL names a user or password before '@', which hides its real host: {shown}"
        )
    if "%" in authority:
        raise InvalidURL(f"the host of the URL is percent-encoded (or has a zone): {shown}")
    if not authority or authority.startswith(":"):
        raise InvalidURL(f"the URL has no host: {shown}")


def _python_reading(text: str, shown: str) -> tuple[str, int | None]:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as error:
        raise InvalidURL(f"not a valid URL: {shown} ({error})") from None
    if not parts.hostname:
        raise InvalidURL(f"the URL has no host: {shown}")
    if port == 0:
        raise InvalidURL(f"port 0 cannot be connected to: {shown}")
    return parts.hostname, port


def _browser_reading(text: str, shown: str) -> dict[str, object]:
    from ada_url import parse_url

    try:
        return dict(parse_url(text))
    except ValueError:
        raise InvalidURL(f"not a valid URL as browsers read URLs: {shown}") from None


def _agreed_host(python_host: str, browser: dict[str, object], shown: str) -> str:
    """The host both readings name, or InvalidURL."""
    browser_host = str(browser["hostname"])
    python_ip = _ip_literal(python_host)
    browser_ip = _ip_literal(browser_host.strip("[]"))
    if browser_ip is not None:
        if python_ip != browser_ip or (browser_ip.version == 4 and python_host != browser_host):
            raise InvalidURL(
                f"the host is the address {browser_ip} to a browser, not a plain"
                f" {'IPv4 address' if browser_ip.version == 4 else 'IPv6 address'}: {shown}"
            )
        return str(browser_ip)
    if python_ip is not None or (python_host.isascii() and python_host != browser_host):
        raise InvalidURL(f"browsers read another host ({browser_host}) in this URL: {shown}")
    _check_host_name(browser_host, shown)
    return browser_host


def _check_host_name(host: str, shown: str) -> None:
    labels = host.removesuffix(".").split(".")
    if len(host) > MAX_HOST_CHARS or not all(
        len(label) <= MAX_LABEL_CHARS and _LABEL.fullmatch(label) for label in labels
    ):
        raise InvalidURL(f"not a host name: {host[:100]!r} in {shown}")


def _ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address written the one plain way (dotted quad, or IPv6 without a zone)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


__all__ = [
    "InvalidURL",
    "WebURL",
    "has_web_scheme",
    "is_web_url",
    "refuse_control_characters",
    "web_url",
]
