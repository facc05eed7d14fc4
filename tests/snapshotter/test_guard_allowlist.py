"""The allow-list of networks: what ``--allow-network`` and its alias ``--allow-private`` let
through, and that cloud metadata is refused unless named alone. Names are resolved in-process
(the resolver is replaced); nothing outside loopback is ever contacted."""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from snap.cli import cli
from snap.config import Settings, parse_networks
from snap.errors import AddressRefused, ConfigError
from snapshotter.fetch import FetchOptions, fetch
from snapshotter.guard import PRIVATE_ALIAS, AllowList, resolve_checked
from snapshotter.special_addresses import ALL_BLOCKS, CLOUD_METADATA
from tests.http_fixtures import LoopbackServer

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
METADATA = "169.254.169.254"


def networks(*cidrs: str) -> tuple[Any, ...]:
    return tuple(ipaddress.ip_network(cidr) for cidr in cidrs)


@pytest.fixture
def resolve_to(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Make ``name.test`` resolve, in this process, to the addresses given; refuse any other
    lookup (so no test of this module ever asks the real resolver)."""
    table: dict[str, list[str]] = {}

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, f"not in the test's table: {host}")
        results = []
        for address in table[host]:
            if ":" in address:
                results.append((socket.AF_INET6, 1, 6, "", (address, port, 0, 0)))
            else:
                results.append((socket.AF_INET, 1, 6, "", (address, port)))
        return results

    def set_table(name: str, *addresses: str) -> None:
        table[name] = list(addresses)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return set_table


def _inside(block: Any) -> str:
    """An address inside ``block`` (its first host, or the address itself)."""
    network = block.network
    return str(network.network_address + (1 if network.num_addresses > 2 else 0))


SPECIAL = sorted(
    {(b.name, _inside(b)) for b in ALL_BLOCKS if b.reachable is not True and not b.embeds_ipv4}
)


@pytest.mark.parametrize(("name", "address"), SPECIAL, ids=[a for _, a in SPECIAL])
def test_a_name_resolving_into_any_special_range_is_refused(
    resolve_to: Callable[..., None], name: str, address: str
) -> None:
    resolve_to("inside.test", address)
    with pytest.raises(AddressRefused, match=r"refused to connect to inside\.test"):
        resolve_checked("inside.test", 80)


@pytest.mark.parametrize(("name", "address"), SPECIAL, ids=[a for _, a in SPECIAL])
def test_the_private_alias_lets_through_loopback_and_rfc1918_only(
    resolve_to: Callable[..., None], name: str, address: str
) -> None:
    resolve_to("inside.test", address)
    parsed = ipaddress.ip_address(address)
    in_alias = any(parsed.version == n.version and parsed in n for n in PRIVATE_ALIAS)
    is_metadata = any(parsed in b.network for b in CLOUD_METADATA)
    if in_alias and not is_metadata:
        assert resolve_checked("inside.test", 80, allow_private=True) == address
    else:
        with pytest.raises(AddressRefused):
            resolve_checked("inside.test", 80, allow_private=True)


def test_loopback_is_allowed_only_when_listed(resolve_to: Callable[..., None]) -> None:
    resolve_to("loop.test", "127.0.0.1")
    with pytest.raises(AddressRefused, match="--allow-network"):
        resolve_checked("loop.test", 80)
    with pytest.raises(AddressRefused):
        resolve_checked("loop.test", 80, allowed=AllowList(networks("10.0.0.0/8")))
    allowed = AllowList(networks("127.0.0.0/8"))
    assert resolve_checked("loop.test", 80, allowed=allowed) == "127.0.0.1"


@pytest.mark.parametrize(
    "listed",
    [
        ("169.254.0.0/16",),
        ("0.0.0.0/0", "::/0"),
        ("169.254.169.0/24",),
        ("::ffff:0:0/96",),
    ],
)
@pytest.mark.parametrize(
    "address", [METADATA, "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::"]
)
def test_metadata_is_refused_even_where_a_listed_network_covers_it(
    resolve_to: Callable[..., None], listed: tuple[str, ...], address: str
) -> None:
    resolve_to("metadata.test", address)
    allowed = AllowList(networks(*listed))
    for private in (False, True):
        with pytest.raises(AddressRefused, match="cloud metadata") as caught:
            resolve_checked("metadata.test", 80, allowed=allowed, allow_private=private)
        assert "named alone: --allow-network 169.254.169.254" in str(caught.value)


@pytest.mark.parametrize("named", ["169.254.169.254/32", "::ffff:169.254.169.254/128"])
def test_metadata_named_alone_is_allowed(resolve_to: Callable[..., None], named: str) -> None:
    resolve_to("metadata.test", "::ffff:169.254.169.254")
    allowed = AllowList(networks(named))
    assert resolve_checked("metadata.test", 80, allowed=allowed) == "::ffff:169.254.169.254"


def test_the_azure_wireserver_is_refused_although_public(resolve_to: Callable[..., None]) -> None:
    resolve_to("wire.test", "168.63.129.16")
    with pytest.raises(AddressRefused, match="Azure WireServer"):
        resolve_checked("wire.test", 80, allowed=AllowList(networks("0.0.0.0/0")))


def test_ipv4_mapped_loopback_follows_the_ipv4_network(resolve_to: Callable[..., None]) -> None:
    resolve_to("mapped.test", "::ffff:127.0.0.1")
    with pytest.raises(AddressRefused):
        resolve_checked("mapped.test", 80, allowed=AllowList(networks("::1/128")))
    assert resolve_checked("mapped.test", 80, allowed=AllowList((LOOPBACK,))) == "::ffff:127.0.0.1"


def test_one_refused_address_spoils_the_name(resolve_to: Callable[..., None]) -> None:
    resolve_to("mixed.test", "127.0.0.1", METADATA)
    with pytest.raises(AddressRefused, match="cloud metadata"):
        resolve_checked("mixed.test", 80, allow_private=True)


@pytest.mark.parametrize("host", ["%31%32%37.0.0.1", "127.0.0.1%2e", "fe80::1%25lo", "%zz", ""])
def test_a_host_that_is_no_host_name_is_never_looked_up(
    monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    def refuse(*args: object, **kwargs: object) -> Any:
        pytest.fail(f"{host!r} reached the resolver")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    with pytest.raises(Exception, match="not a host name"):
        resolve_checked(host, 80, allow_private=True)


# --- end to end, with a loopback server ------------------------------------------------------


def _options(**changes: Any) -> FetchOptions:
    return FetchOptions(max_bytes=1 << 20, timeout=5.0, max_redirects=3, **changes)


def test_a_listed_network_reaches_the_loopback_server(
    http_server: LoopbackServer, tmp_path: Path
) -> None:
    http_server.route("/page", body=b"hello")
    fetched = fetch(http_server.url("/page"), _options(allow_networks=(LOOPBACK,)))
    fetched.cleanup()
    with pytest.raises(AddressRefused):
        fetch(http_server.url("/page"), _options(allow_networks=networks("10.0.0.0/8")))
    assert http_server.paths() == ["/page"]


def test_a_redirect_to_metadata_is_refused_with_private_allowed(
    http_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = socket.getaddrinfo

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "metadata.test":
            return [(socket.AF_INET, 1, 6, "", (METADATA, port))]
        if host != "127.0.0.1":
            pytest.fail(f"lookup of {host}")
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    http_server.redirect("/start", f"http://metadata.test:{http_server.port}/latest/")
    with pytest.raises(AddressRefused, match="cloud metadata"):
        fetch(http_server.url("/start"), _options(allow_private=True))
    assert http_server.paths() == ["/start"]


# --- the setting and the option --------------------------------------------------------------


def test_the_setting_is_parsed_and_bad_values_are_one_line(tmp_path: Path) -> None:
    env = {"SNAP_HOME": str(tmp_path), "SNAP_ALLOW_NETWORKS": "127.0.0.0/8, ::1 10.1.2.3"}
    assert Settings.from_env(env).allow_networks == networks(
        "127.0.0.0/8", "::1/128", "10.1.2.3/32"
    )
    for bad in ("127.0.0.1/8", "10.0.0.0/33", "localhost"):
        with pytest.raises(ConfigError, match=r"^SNAP_ALLOW_NETWORKS: .* is not a network"):
            Settings.from_env(env | {"SNAP_ALLOW_NETWORKS": bad})
    assert parse_networks("", "x") == ()


def test_fetch_options_follow_the_settings(tmp_path: Path) -> None:
    env = {"SNAP_HOME": str(tmp_path), "SNAP_ALLOW_NETWORKS": "10.0.0.0/8"}
    options = Settings.from_env(env).fetch_options()
    assert options.allowed == AllowList(networks("10.0.0.0/8"))
    private = Settings.from_env(env | {"SNAP_ALLOW_PRIVATE": "1"}).fetch_options()
    assert set(private.allowed.networks) == {*networks("10.0.0.0/8"), *PRIVATE_ALIAS}


def test_a_bad_allow_network_option_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["fetch", "--allow-network", "10.0.0.0/33", "http://127.0.0.1:9/"],
        env={"SNAP_HOME": str(tmp_path)},
    )
    assert result.exit_code == 2
    assert "--allow-network" in result.output
    assert result.output.count("\n") == 1


def test_the_cli_with_allow_private_refuses_metadata(
    tmp_path: Path, resolve_to: Callable[..., None]
) -> None:
    resolve_to("metadata.test", METADATA)
    home = {"SNAP_HOME": str(tmp_path), "SNAP_ALLOW_PRIVATE": "1"}
    result = CliRunner().invoke(cli, ["fetch", "http://metadata.test/latest/meta-data/"], env=home)
    assert result.exit_code == 1
    assert "cloud metadata" in result.output
    result = CliRunner().invoke(
        cli,
        ["fetch", "--allow-network", "0.0.0.0/0", "http://metadata.test/latest/meta-data/"],
        env={"SNAP_HOME": str(tmp_path)},
    )
    assert result.exit_code == 1
    assert "cloud metadata" in result.output


@pytest.mark.parametrize(
    ("target", "line"),
    [
        ("ftp://example.test/file", "only http and https URLs"),
        ("http://127.0.0.1:99999/", "not a valid URL"),
        ("http://h:1:1/", "not a valid URL"),
        ("http:x.txt", "not an absolute URL"),
    ],
)
def test_urls_snap_does_not_fetch_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, line: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "http:x.txt").write_text("a local file named like a URL")
    result = CliRunner().invoke(cli, ["fetch", target], env={"SNAP_HOME": str(tmp_path / "h")})
    assert result.exit_code == 2, result.output
    assert line in result.output


def test_verify_fetch_never_reads_local_files_nor_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, resolve_to: Callable[..., None]
) -> None:
    """``snap verify --fetch`` captures URLs from model output: a "URL" spelling a path of the
    working folder is not read, and metadata is refused although private ranges are allowed."""
    resolve_to("metadata.test", METADATA)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "http:" / "x").mkdir(parents=True)
    (tmp_path / "http:" / "x" / "secret.txt").write_text("the secret words")
    citations = [
        {"citationId": "c-1", "url": "http:/x/secret.txt", "quote": "the secret words"},
        {"citationId": "c-2", "url": "http://metadata.test/latest/", "quote": "the secret words"},
    ]
    given = tmp_path / "citations.json"
    given.write_text(json.dumps(citations))
    env = {"SNAP_HOME": str(tmp_path / "home"), "SNAP_ALLOW_PRIVATE": "1"}
    result = CliRunner().invoke(cli, ["verify", "--fetch", "--json", str(given)], env=env)
    assert result.exit_code == 1, result.output
    reasons = [r["reason"] for r in json.loads(result.stdout)["results"]]
    assert "not an absolute URL with a host" in reasons[0]
    assert "cloud metadata" in reasons[1]
