"""The request-forgery guard: which URLs and addresses snap may connect to.

URLs reach snap from model output, so a URL must not be a way to make snap read the cloud
metadata service, a database on localhost or a router's admin page.  The guard resolves a
host name exactly once, refuses every address that is not a public unicast address, and
returns the one address the caller must connect to.  Connecting to that address (rather than
to the host name, which would mean a second lookup) is what defeats DNS rebinding.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from snap.errors import AddressRefused, FetchError

ALLOWED_SCHEMES = ("http", "https")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_SHARED_ADDRESS_SPACE = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")


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


def refusal_reason(address: IPAddress) -> str | None:
    """Why ``address`` is not a public unicast address, or None when it is one.

    Addresses embedded in IPv6 forms (IPv4-mapped, 6to4, NAT64) are judged by the IPv4
    address they carry, so ``::ffff:127.0.0.1`` is loopback like ``127.0.0.1``.
    """
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return refusal_reason(embedded)
    checks: tuple[tuple[bool, str], ...] = (
        (address.is_unspecified, "unspecified"),
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local"),
        (address.is_multicast, "multicast"),
        (
            isinstance(address, ipaddress.IPv4Address) and address in _SHARED_ADDRESS_SPACE,
            "shared (carrier-grade NAT)",
        ),
        (isinstance(address, ipaddress.IPv6Address) and address.is_site_local, "site-local"),
        (address.is_reserved, "reserved"),
        (address.is_private, "private"),
        (not address.is_global, "non-public"),
    )
    for refused, reason in checks:
        if refused:
            return reason
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64_WELL_KNOWN:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _parse_address(text: str) -> IPAddress:
    """An address as getaddrinfo returns it; an IPv6 zone (``fe80::1%eth0``) is dropped."""
    return ipaddress.ip_address(text.split("%", 1)[0])


def resolve_checked(host: str, port: int, *, allow_private: bool) -> str:
    """Resolve ``host`` once and return the single address to connect to.

    Every address the name resolves to must be allowed, not just the first: a name that
    mixes a public and a private address is refused rather than left to chance.  With
    ``allow_private`` (an explicit opt-in) any address is accepted.  Nothing is connected to
    here; the refusal happens before any connection exists.
    """
    name = host.strip("[]")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as error:
        raise FetchError(f"could not resolve host {host}: {error}") from None
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
