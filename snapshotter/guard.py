"""The request-forgery guard: which URLs and addresses snap may connect to.

URLs reach snap from model output, so a URL must not be a way to make snap read the cloud
metadata service, a database on localhost or a router's admin page.  The guard resolves a
host name exactly once, refuses every address that is not a public unicast address (unless the
operator lists its network, see ``AllowList``), and returns the one address the caller must
connect to.  Which addresses are refused is decided by the explicit tables in
``snapshotter.special_addresses``, never by the running Python.
Connecting to that address (rather than to the host name, which would mean a second lookup)
is what defeats DNS rebinding.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from snapshotter.errors import AddressRefused, FetchError
from snapshotter.special_addresses import (
    IPAddress,
    IPNetwork,
    embedded_ipv4,
    is_cloud_internal,
    refusal_reason,
)

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_RESOLVE_TIMEOUT = 30.0
# What --allow-private (SNAP_ALLOW_PRIVATE=1) stands for: loopback and the RFC 1918 ranges.
PRIVATE_ALIAS: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(cidr)
    for cidr in ("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)
_HOST_CHARS = re.compile(r"[A-Za-z0-9._\-]+|\[?[0-9A-Fa-f:.]+\]?")

__all__ = [
    "ALLOWED_SCHEMES",
    "PRIVATE_ALIAS",
    "AllowList",
    "check_url_scheme",
    "refusal_reason",
    "resolve_checked",
]


@dataclass(frozen=True)
class AllowList:
    """Networks the operator lets snap fetch from although the guard would refuse them.

    A cloud metadata or provider-internal address (``CLOUD_METADATA``) is let through only
    when it is listed alone (``169.254.169.254`` or ``169.254.169.254/32``): a range that
    merely covers it (``169.254.0.0/16``, ``0.0.0.0/0``) never does, because reaching it is
    the point of an attack.  IPv6 forms carrying an IPv4 address (IPv4-mapped, NAT64, 6to4)
    are matched by the IPv4 address they carry, as the refusal itself is.
    """

    networks: tuple[IPNetwork, ...] = ()

    def with_private(self) -> AllowList:
        """This list plus the ``--allow-private`` alias (loopback and RFC 1918)."""
        return AllowList(tuple(dict.fromkeys(self.networks + PRIVATE_ALIAS)))

    def permits(self, address: IPAddress) -> bool:
        forms = [address]
        if (
            isinstance(address, ipaddress.IPv6Address)
            and (carried := embedded_ipv4(address)) is not None
        ):
            forms.append(carried)
        if any(is_cloud_internal(form) for form in forms):
            return any(
                network.num_addresses == 1 and form in network
                for form in forms
                for network in self.networks
            )
        return any(
            form.version == network.version and form in network
            for form in forms
            for network in self.networks
        )

    def __bool__(self) -> bool:
        return bool(self.networks)


NOTHING_ALLOWED = AllowList()


def check_url_scheme(url: str) -> str:
    """Return the URL's scheme in lower case, or raise FetchError unless it is http or https.

    Refusing ``file:``, ``ftp:``, ``gopher:`` and the rest up front keeps the fetcher's attack
    surface to the two protocols it implements itself.  (For a redirect target: the URL a user
    gives is checked as input by ``snapshotter.weburl.web_url``.)
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
    host: str,
    port: int,
    *,
    allowed: AllowList = NOTHING_ALLOWED,
    allow_private: bool = False,
    timeout: float = DEFAULT_RESOLVE_TIMEOUT,
) -> str:
    """Resolve ``host`` once and return the single address to connect to.

    Every address the name resolves to must be allowed, not just the first: a name that
    mixes a public and a private address is refused rather than left to chance.  An address
    the guard refuses is let through only when ``allowed`` (the operator's explicit list,
    ``--allow-network``) permits it; ``allow_private`` adds the ``--allow-private`` alias.
    A host that is not a host name or address literal (``%31%32%37.0.0.1``, ``fe80::1%25lo``)
    is refused before any lookup.  Nothing is connected to here; the refusal happens before
    any connection exists.  The lookup is abandoned after ``timeout`` seconds (the resolver
    cannot be interrupted, so it is left to finish in a daemon thread).
    """
    if not _HOST_CHARS.fullmatch(host):
        raise FetchError(f"not a host name: {host[:100]!r}; nothing was looked up")
    if allow_private:
        allowed = allowed.with_private()
    literal = _literal(host)
    if literal is not None:  # an address as written: no resolver is asked
        addresses = [str(literal)]
    else:
        addresses = [str(info[4][0]) for info in _getaddrinfo(host, port, timeout)]
    if not addresses:
        raise FetchError(f"could not resolve host {host}: no addresses")
    for text in addresses:
        address = _parse_address(text)
        reason = refusal_reason(address)
        if reason is not None and not allowed.permits(address):
            where = host if host.strip("[]") == text else f"{host} at {text}"
            raise AddressRefused(
                f"refused to connect to {where}: {reason} address ({_hint(address)})"
            )
    return addresses[0]


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _hint(address: IPAddress) -> str:
    carried = embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else None
    if is_cloud_internal(address) or (carried is not None and is_cloud_internal(carried)):
        return f"permitted only when named alone: --allow-network {carried or address}"
    return "permit it with --allow-network NETWORK or SNAP_ALLOW_NETWORKS"


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
