"""Explicit, versioned tables of the addresses snap refuses to fetch from, and why.

The request-forgery guard must give the same answer on every Python: the ``ipaddress``
module's ``is_private``/``is_global`` flags changed between 3.11 and 3.13 (``192.0.0.0/24``,
``3fff::/20``), so snap carries its own tables and only uses ``ipaddress`` to parse and to
test containment.

Sources, transcribed by hand (update ``TABLES_VERSION`` when they change):

* IANA IPv4 Special-Purpose Address Registry
  (https://www.iana.org/assignments/iana-ipv4-special-registry), as of 2025-01;
* IANA IPv6 Special-Purpose Address Registry
  (https://www.iana.org/assignments/iana-ipv6-special-registry), as of 2025-01, including
  RFC 9637 (3fff::/20, 2024), RFC 9602 (5f00::/16, 2024) and RFC 9665 (2001:1::3, 2024);
* the IPv4 multicast block and the IPv6 address space registry (only 2000::/3 is allocated
  for global unicast; everything else is reserved, multicast, link-local or unique-local);
* cloud metadata and provider-internal addresses from the providers' documentation.

The rule: an address is allowed only when the most specific special-purpose block holding it
is marked globally reachable by the registry, or when no block holds it and it is global
unicast.  IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by the
IPv4 address they carry.
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass

TABLES_VERSION = "iana-special-purpose-2025-01"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Block:
    """One registry entry: ``reachable`` is the registry's "Globally Reachable" column (None
    where the registry says N/A); ``embeds_ipv4`` marks forms judged by the IPv4 inside."""

    network: IPNetwork
    name: str
    reachable: bool | None
    embeds_ipv4: bool = False


def _block(cidr: str, name: str, reachable: bool | None, *, embeds: bool = False) -> Block:
    return Block(ipaddress.ip_network(cidr), name, reachable, embeds)


IPV4_SPECIAL: tuple[Block, ...] = (
    _block("0.0.0.0/8", "this-network (0.0.0.0/8)", False),
    _block("0.0.0.0/32", "unspecified (this host on this network)", False),
    _block("10.0.0.0/8", "private-use", False),
    _block("100.64.0.0/10", "shared (carrier-grade NAT)", False),
    _block("127.0.0.0/8", "loopback", False),
    _block("169.254.0.0/16", "link-local", False),
    _block("172.16.0.0/12", "private-use", False),
    _block("192.0.0.0/24", "IETF protocol assignments", False),
    _block("192.0.0.0/29", "IPv4 service continuity prefix", False),
    _block("192.0.0.8/32", "IPv4 dummy address", False),
    _block("192.0.0.9/32", "Port Control Protocol anycast", True),
    _block("192.0.0.10/32", "TURN anycast", True),
    _block("192.0.0.170/32", "NAT64/DNS64 discovery", False),
    _block("192.0.0.171/32", "NAT64/DNS64 discovery", False),
    _block("192.0.2.0/24", "documentation (TEST-NET-1)", False),
    _block("192.31.196.0/24", "AS112-v4", True),
    _block("192.52.193.0/24", "AMT", True),
    _block("192.88.99.0/24", "deprecated (6to4 relay anycast)", None),
    _block("192.168.0.0/16", "private-use", False),
    _block("192.175.48.0/24", "direct delegation AS112 service", True),
    _block("198.18.0.0/15", "benchmarking", False),
    _block("198.51.100.0/24", "documentation (TEST-NET-2)", False),
    _block("203.0.113.0/24", "documentation (TEST-NET-3)", False),
    _block("240.0.0.0/4", "reserved", False),
    _block("255.255.255.255/32", "limited broadcast", False),
)

IPV6_SPECIAL: tuple[Block, ...] = (
    _block("::1/128", "loopback", False),
    _block("::/128", "unspecified", False),
    _block("::ffff:0:0/96", "IPv4-mapped", False, embeds=True),
    _block("64:ff9b::/96", "IPv4-IPv6 translation (NAT64)", True, embeds=True),
    _block("64:ff9b:1::/48", "IPv4-IPv6 translation (local use)", False),
    _block("100::/64", "discard-only", False),
    _block("100:0:0:1::/64", "dummy IPv6 prefix", False),
    _block("2001::/23", "IETF protocol assignments", False),
    _block("2001::/32", "Teredo", None),
    _block("2001:1::1/128", "Port Control Protocol anycast", True),
    _block("2001:1::2/128", "TURN anycast", True),
    _block("2001:1::3/128", "DNS-SD service registration protocol anycast", True),
    _block("2001:2::/48", "benchmarking", False),
    _block("2001:3::/32", "AMT", True),
    _block("2001:4:112::/48", "AS112-v6", True),
    _block("2001:10::/28", "deprecated (ORCHID)", None),
    _block("2001:20::/28", "ORCHIDv2", True),
    _block("2001:30::/28", "drone remote ID entity tags", True),
    _block("2001:db8::/32", "documentation", False),
    _block("2002::/16", "6to4", None, embeds=True),
    _block("2620:4f:8000::/48", "direct delegation AS112 service", True),
    _block("3fff::/20", "documentation", False),
    _block("5f00::/16", "segment routing (SRv6) SIDs", False),
    _block("fc00::/7", "unique-local", False),
    _block("fe80::/10", "link-local", False),
)

# Not in the special-purpose registries, but never a unicast server.
IPV4_MULTICAST = ipaddress.IPv4Network("224.0.0.0/4")
IPV6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
IPV6_OTHER: tuple[Block, ...] = (
    _block("ff00::/8", "multicast", False),
    _block("fec0::/10", "site-local (deprecated)", False),
)

# Metadata services and provider-internal endpoints: refused even where the address is public
# (168.63.129.16) and named in the refusal, because reaching them is the point of an attack.
CLOUD_METADATA: tuple[Block, ...] = (
    _block("169.254.169.254/32", "cloud metadata service (AWS, Azure, GCP, OCI and others)", False),
    _block("169.254.170.2/32", "cloud metadata service (AWS ECS task metadata)", False),
    _block("169.254.169.123/32", "cloud provider-internal (AWS time sync)", False),
    _block("169.254.169.253/32", "cloud provider-internal (AWS VPC DNS)", False),
    _block("168.63.129.16/32", "cloud provider-internal (Azure WireServer)", False),
    _block("100.100.100.200/32", "cloud metadata service (Alibaba Cloud)", False),
    _block("192.0.0.192/32", "cloud metadata service (Oracle Cloud)", False),
    _block("fd00:ec2::254/128", "cloud metadata service (AWS, IPv6)", False),
    _block("fd00:ec2::253/128", "cloud provider-internal (AWS VPC DNS, IPv6)", False),
    _block("fd00:ec2::123/128", "cloud provider-internal (AWS time sync, IPv6)", False),
)

ALL_BLOCKS: tuple[Block, ...] = IPV4_SPECIAL + IPV6_SPECIAL + IPV6_OTHER + CLOUD_METADATA


_REMEMBERED = 1024
"""Addresses whose answers are kept: the tables are constant, so an answer is a pure function
of the address, and a batch of captures asks about the same few hosts for every page (each
answer walks the tables with ``ipaddress`` containment tests, about 17 µs)."""


def _most_specific(address: IPAddress, blocks: tuple[Block, ...]) -> Block | None:
    holding = [b for b in blocks if b.network.version == address.version and address in b.network]
    return max(holding, key=lambda b: b.network.prefixlen, default=None)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 address carries."""
    block = _most_specific(address, IPV6_SPECIAL)
    if block is None or not block.embeds_ipv4:
        return None
    if block.network.prefixlen == 16:  # 6to4: the IPv4 address follows the 2002: prefix
        return ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF)
    return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)


@functools.lru_cache(maxsize=_REMEMBERED)
def is_cloud_internal(address: IPAddress) -> bool:
    """Whether ``address`` is a metadata service or provider-internal endpoint."""
    return _most_specific(address, CLOUD_METADATA) is not None


@functools.lru_cache(maxsize=_REMEMBERED)
def refusal_reason(address: IPAddress) -> str | None:
    """Why ``address`` may not be fetched from, or None when it is global unicast."""
    metadata = _most_specific(address, CLOUD_METADATA)
    if metadata is not None:
        return metadata.name
    if isinstance(address, ipaddress.IPv6Address):
        return _ipv6_reason(address)
    if address in IPV4_MULTICAST:
        return "multicast"
    return _special_reason(address, IPV4_SPECIAL)


def _ipv6_reason(address: ipaddress.IPv6Address) -> str | None:
    embedded = embedded_ipv4(address)
    if embedded is not None:
        reason = refusal_reason(embedded)
        return None if reason is None else f"{reason} (carried in {address})"
    other = _most_specific(address, IPV6_OTHER)
    if other is not None:
        return other.name
    reason = _special_reason(address, IPV6_SPECIAL)
    if reason is None and address not in IPV6_GLOBAL_UNICAST:
        return "reserved (not global unicast)"
    return reason


def _special_reason(address: IPAddress, blocks: tuple[Block, ...]) -> str | None:
    block = _most_specific(address, blocks)
    if block is None or block.reachable:
        return None
    return block.name
