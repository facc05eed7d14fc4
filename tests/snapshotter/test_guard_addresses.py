"""The request-forgery guard: which addresses are refused, and that refusal precedes connect."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from snap.errors import AddressRefused, FetchError
from snapshotter.fetch import fetch
from snapshotter.guard import check_url_scheme, refusal_reason, resolve_checked
from snapshotter.weburl import InvalidURL


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("10.0.0.5", "private"),
        ("172.16.3.4", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "unique-local"),
        ("169.254.169.254", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "limited broadcast"),
        ("100.64.0.1", "shared"),
        ("fec0::1", "site-local"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "cloud metadata"),
        ("::ffff:10.1.2.3", "private"),
        ("2002:7f00:1::", "loopback"),  # 6to4 wrapping 127.0.0.1
        ("64:ff9b::a00:5", "private"),  # NAT64 wrapping 10.0.0.5
        ("192.0.2.10", "documentation"),
    ],
)
def test_non_public_addresses_are_refused(address: str, reason: str) -> None:
    found = refusal_reason(ipaddress.ip_address(address))
    assert found is not None
    assert found.startswith(reason)


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.4.4", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert refusal_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.1",
        "0x7f.0.0.1",
        "[::1]",
        "::1",
        "localhost",
        "0.0.0.0",
        "::ffff:127.0.0.1",
        "2130706433",
    ],
)
def test_loopback_spellings_are_refused(host: str) -> None:
    with pytest.raises(AddressRefused) as caught:
        resolve_checked(host, 80, allow_private=False)
    assert host.strip("[]") in str(caught.value)
    assert "\n" not in str(caught.value)


def test_allow_private_returns_the_resolved_address() -> None:
    assert resolve_checked("127.1", 80, allow_private=True) == "127.0.0.1"


def _fake_resolver(table: dict[str, list[str]]) -> Callable[..., list[Any]]:
    real = socket.getaddrinfo

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host not in table:
            return real(host, port, *args, **kwargs)
        results = []
        for address in table[host]:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sockaddr = (address, port, 0, 0) if family == socket.AF_INET6 else (address, port)
            results.append((family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr))
        return results

    return getaddrinfo


@pytest.fixture
def no_connect(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Fail the test if anything tries to open a connection."""
    attempts: list[object] = []

    def refuse(address: object, *args: object, **kwargs: object) -> socket.socket:
        attempts.append(address)
        pytest.fail(f"a connection to {address} was attempted")

    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


@pytest.mark.parametrize(
    ("addresses", "shown"),
    [
        (["169.254.169.254"], "169.254.169.254"),
        (["10.0.0.5"], "10.0.0.5"),
        (["::ffff:169.254.169.254"], "::ffff:169.254.169.254"),
        (["93.184.216.34", "10.0.0.5"], "10.0.0.5"),  # one bad record spoils the name
    ],
)
def test_names_resolving_to_refused_addresses_are_never_connected(
    monkeypatch: pytest.MonkeyPatch,
    no_connect: list[object],
    workdir: Path,
    options: Callable[..., Any],
    addresses: list[str],
    shown: str,
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _fake_resolver({"metadata.test": addresses}))
    with pytest.raises(AddressRefused) as caught:
        fetch(
            "http://metadata.test/latest/meta-data/", options(allow_private=False), workdir=workdir
        )
    assert "metadata.test" in str(caught.value)
    assert shown in str(caught.value)
    assert caught.value.url == "http://metadata.test/latest/meta-data/"
    assert no_connect == []
    assert list(workdir.iterdir()) == []


def test_one_lookup_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second lookup could answer differently (DNS rebinding): the guard does exactly one."""
    calls: list[str] = []
    fake = _fake_resolver({"public.test": ["93.184.216.34"]})

    def counting(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        calls.append(host)
        return fake(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", counting)
    assert resolve_checked("public.test", 443, allow_private=False) == "93.184.216.34"
    assert calls == ["public.test"]


def test_unresolvable_name_is_a_fetch_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: Any, **kwargs: Any) -> list[Any]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    with pytest.raises(FetchError, match=r"could not resolve host nowhere\.test"):
        resolve_checked("nowhere.test", 80, allow_private=False)


@pytest.mark.parametrize(
    "url", ["ftp://example.org/file", "file:///etc/passwd", "gopher://x/", "javascript:alert(1)"]
)
def test_only_http_and_https_schemes(url: str) -> None:
    with pytest.raises(FetchError, match="only http and https URLs"):
        check_url_scheme(url)


def test_http_and_https_schemes_pass() -> None:
    assert check_url_scheme("HTTPS://example.org/") == "https"
    assert check_url_scheme("http://example.org/") == "http"


def test_unknown_scheme_through_fetch(no_connect: list[object], options: Any) -> None:
    """Unusable input, exit 2 (it was a failed capture, exit 1): nothing was attempted."""
    with pytest.raises(InvalidURL, match="only http and https URLs"):
        fetch("ftp://example.org/file", options())
    assert no_connect == []
