"""The request-forgery guard: which URLs and addresses snap may connect to.

URLs reach snap from model output, so a URL must not be a way to make snap read the cloud
metadata service, a database on localhost or a router's admin page.  The guard resolves a
host name exactly once, refuses every address that is not a public unicast address, and
returns the one address the caller must connect to.  Which addresses are refused is decided
by the explicit tables in ``snapshotter.special_addresses``, never by the running Python.
Connecting to that address (rather than to the host name, which would mean a second lookup)
is what defeats DNS rebinding.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

from snap.errors import AddressRefused, FetchError
from snapshotter.special_addresses import IPAddress, refusal_reason

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_RESOLVE_TIMEOUT = 30.0

__all__ = ["ALLOWED_SCHEMES", "check_url_scheme", "refusal_reason", "resolve_checked"]


def check_url_scheme(url: str) -> str:
    """Return the URL's scheme in lower case, or raise FetchError unless it is http or https.

    Refusing ``file:``, ``ftp:``, ``gopher:`` and the rest up front keeps the fetcher's attack
    surface to the two protocols it implements itself.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = f"{scheme}:" if scheme else "no scheme"
        raise FetchError(f"only http and https URLs can be fetched, got {shown} in {url}", url=url)
    if not parts.hostname:
        raise FetchError(f"the URL has no host name: {url}", url=url)
    return scheme


def _parse_address(text: str) -> IPAddress:
    """An address as getaddrinfo returns it; an IPv6 zone (``fe80::1%eth0``) is dropped."""
    return ipaddress.ip_address(text.split("%", 1)[0])


def resolve_checked(
    host: str, port: int, *, allow_private: bool, timeout: float = DEFAULT_RESOLVE_TIMEOUT
) -> str:
    """Resolve ``host`` once and return the single address to connect to.

    Every address the name resolves to must be allowed, not just the first: a name that
    mixes a public and a private address is refused rather than left to chance.  With
    ``allow_private`` (an explicit opt-in) any address is accepted.  Nothing is connected to
    here; the refusal happens before any connection exists.  The lookup is abandoned after
    ``timeout`` seconds (the resolver cannot be interrupted, so it is left to finish in a
    daemon thread).
    """
    infos = _getaddrinfo(host, port, timeout)
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise FetchError(f"could not resolve host {host}: no addresses")
    if not allow_private:
        for text in addresses:
            reason = refusal_reason(_parse_address(text))
            if reason is not None:
                where = host if host.strip("[]") == text else f"{host} at {text}"
                raise AddressRefused(
                    f"refused to connect to {where}: {reason} address"
                    " (use --allow-private or SNAP_ALLOW_PRIVATE=1 to permit it)"
                )
    return addresses[0]


def _getaddrinfo(host: str, port: int, timeout: float) -> list[Any]:
    """``socket.getaddrinfo`` bounded in time: a slow resolver must not stretch the deadline."""
    result: list[Any] = []
    failure: list[BaseException] = []

    def lookup() -> None:
        try:
            result.extend(
                socket.getaddrinfo(
                    host.strip("[]"), port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
                )
            )
        except BaseException as error:  # handed to the caller's thread below
            failure.append(error)

    worker = threading.Thread(target=lookup, daemon=True, name="snap-resolve")
    worker.start()
    worker.join(max(timeout, 0.0))
    if worker.is_alive():
        raise TimeoutError
    if failure:
        error = failure[0]
        if isinstance(error, (socket.gaierror, UnicodeError, ValueError)):
            raise FetchError(f"could not resolve host {host}: {error}") from None
        raise error
    return result
