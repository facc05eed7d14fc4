"""The guard's own address tables: every registry block, decided the same on every Python.

Only literal addresses are used here; nothing is resolved and nothing is connected to.
"""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snapshotter.special_addresses import (
    ALL_BLOCKS,
    CLOUD_METADATA,
    IPV4_SPECIAL,
    IPV6_SPECIAL,
    TABLES_VERSION,
    Block,
    IPAddress,
    refusal_reason,
)


def _expected_allowed(address: IPAddress) -> bool:
    """The rule, written independently of the implementation: the most specific block wins;
    a block that carries an IPv4 address defers to it; outside every block, IPv4 is unicast
    unless multicast, and IPv6 only inside 2000::/3."""
    holding = [b for b in ALL_BLOCKS if b.network.version == address.version]
    holding = [b for b in holding if address in b.network]
    if any(b in CLOUD_METADATA for b in holding):
        return False
    if holding:
        best = sorted(holding, key=lambda b: b.network.prefixlen)[-1]
        if best.embeds_ipv4:
            carried = int(address) >> 80 if best.network.prefixlen == 16 else int(address)
            return _expected_allowed(ipaddress.IPv4Address(carried & 0xFFFFFFFF))
        return best.reachable is True
    if isinstance(address, ipaddress.IPv4Address):
        return address not in ipaddress.ip_network("224.0.0.0/4")
    return address in ipaddress.ip_network("2000::/3")


def _edges(block: Block) -> list[IPAddress]:
    return [block.network.network_address, block.network.broadcast_address]


EDGES = [(block, address) for block in ALL_BLOCKS for address in _edges(block)]


@pytest.mark.parametrize(("block", "address"), EDGES, ids=[f"{b.network}-{a}" for b, a in EDGES])
def test_first_and_last_address_of_every_block(block: Block, address: IPAddress) -> None:
    reason = refusal_reason(address)
    assert (reason is None) == _expected_allowed(address), (block.name, reason)
    if not block.embeds_ipv4 and block.network.prefixlen >= 8 and block.reachable is not True:
        assert reason is not None  # a refused block's own edges are refused


def test_the_registry_blocks_not_globally_reachable_are_refused() -> None:
    refused = [b for b in IPV4_SPECIAL + IPV6_SPECIAL if b.reachable is not True]
    assert len(refused) >= 35
    for block in refused:
        if block.embeds_ipv4:
            continue
        for address in _edges(block):
            assert refusal_reason(address) is not None, (block.network, address)


def test_the_globally_reachable_blocks_pass() -> None:
    reachable = [b for b in IPV4_SPECIAL + IPV6_SPECIAL if b.reachable and not b.embeds_ipv4]
    assert {str(b.network) for b in reachable} >= {"192.0.0.9/32", "2001:3::/32"}
    for block in reachable:
        for address in _edges(block):
            assert refusal_reason(address) is None, (block.network, address)


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("192.0.0.192", "cloud metadata"),  # Oracle Cloud; allowed by Python 3.11's flags
        ("192.0.0.100", "IETF protocol assignments"),
        ("3fff::1", "documentation"),  # RFC 9637; allowed by older Pythons
        ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"),
        ("5f00::1", "segment routing"),
        ("168.63.129.16", "cloud provider-internal"),  # public, yet Azure's WireServer
        ("169.254.169.254", "cloud metadata"),
        ("100.100.100.200", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("::ffff:169.254.169.254", "cloud metadata"),
        ("64:ff9b::a9fe:a9fe", "cloud metadata"),  # NAT64 wrapping 169.254.169.254
        ("2002:a9fe:a9fe::1", "cloud metadata"),  # 6to4 wrapping 169.254.169.254
        ("2001::1", "Teredo"),
        ("4000::1", "reserved"),
        ("::2", "reserved"),
        ("ff02::1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("0.1.2.3", "this-network"),
    ],
)
def test_named_refusals(address: str, reason: str) -> None:
    found = refusal_reason(ipaddress.ip_address(address))
    assert found is not None
    assert reason in found


@pytest.mark.parametrize(
    "address",
    ["1.1.1.1", "8.8.8.8", "223.255.255.255", "2606:4700:4700::1111", "64:ff9b::808:808"],
)
def test_global_unicast_passes(address: str) -> None:
    assert refusal_reason(ipaddress.ip_address(address)) is None


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_ipv4_address_follows_the_rule(value: int) -> None:
    address = ipaddress.IPv4Address(value)
    assert (refusal_reason(address) is None) == _expected_allowed(address)


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_every_ipv6_address_follows_the_rule(value: int) -> None:
    address = ipaddress.IPv6Address(value)
    assert (refusal_reason(address) is None) == _expected_allowed(address)


def test_tables_are_versioned() -> None:
    assert TABLES_VERSION.startswith("iana-special-purpose-")
