"""Fetching from a real loopback HTTP server: bodies, provenance, redirects, failures."""

from __future__ import annotations

import hashlib
import ipaddress
import re
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import snap
from snap.config import Settings
from snap.errors import AddressRefused, FetchError, InputError
from snapshotter import fetch as fetch_module
from snapshotter import guard
from snapshotter.fetch import DEFAULT_USER_AGENT, Fetched, FetchOptions, fetch, fetching
from tests.http_fixtures import LoopbackServer

RFC3339_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$")
PAGE = b"<!doctype html><html><body><p>Hello, world.</p></body></html>"


def test_body_is_streamed_to_a_file_with_its_digest(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    http_server.route(
        "/page",
        body=PAGE,
        headers={"ETag": '"v1"', "Last-Modified": "Wed, 01 Jan 2025 00:00:00 GMT"},
    )
    fetched = fetch(http_server.url("/page"), options(), workdir=workdir)
    try:
        assert fetched.path.parent == workdir
        assert fetched.path.read_bytes() == PAGE
        assert fetched.raw_digest == "sha256:" + hashlib.sha256(PAGE).hexdigest()
        assert fetched.size == len(PAGE)
        assert fetched.status == 200
        assert fetched.url == fetched.final_url == http_server.url("/page")
        assert fetched.declared_content_type == "text/html; charset=utf-8"
    finally:
        fetched.cleanup()
    assert list(workdir.iterdir()) == []


def test_provenance_records_what_an_auditor_needs(
    http_server: LoopbackServer, options: Callable[..., FetchOptions]
) -> None:
    http_server.route("/page", body=PAGE, headers={"ETag": '"v1"'})
    with fetching(http_server.url("/page"), options()) as fetched:
        provenance = fetched.provenance
    assert RFC3339_UTC.match(str(provenance["fetchedAt"]))
    headers = provenance["headers"]
    assert isinstance(headers, dict)
    assert headers["contentType"] == "text/html; charset=utf-8"
    assert headers["etag"] == '"v1"'
    assert "date" in headers
    assert "lastModified" not in headers  # only headers that were sent
    assert provenance["ip"] == "127.0.0.1"
    assert provenance["port"] == http_server.port
    assert provenance["userAgent"] == DEFAULT_USER_AGENT
    assert provenance["redirects"] == []
    assert provenance["snapVersion"] == snap.__version__
    assert "tlsCertSha256" not in provenance
    assert http_server.requests[0].headers["user-agent"] == DEFAULT_USER_AGENT
    assert http_server.requests[0].headers["host"] == f"127.0.0.1:{http_server.port}"


def test_fetching_deletes_the_temporary_file(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    http_server.route("/page", body=PAGE)
    with fetching(http_server.url("/page"), options(), workdir=workdir) as fetched:
        assert fetched.path.exists()
    assert not fetched.path.exists()


def test_options_from_settings(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "SNAP_HOME": str(tmp_path),
            "SNAP_MAX_BYTES": "1234",
            "SNAP_TIMEOUT": "2.5",
            "SNAP_MAX_REDIRECTS": "3",
            "SNAP_ALLOW_PRIVATE": "1",
        }
    )
    assert settings.fetch_options() == FetchOptions(
        max_bytes=1234,
        timeout=2.5,
        max_redirects=3,
        allow_private=True,
        total_timeout=25.0,  # without SNAP_DEADLINE: ten timeouts
        user_agent=f"snap/{snap.__version__} (+citation snapshot)",
    )


def test_loopback_server_is_refused_without_opt_in(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    http_server.route("/page", body=PAGE)
    with pytest.raises(AddressRefused, match="loopback"):
        fetch(http_server.url("/page"), options(allow_private=False), workdir=workdir)
    assert http_server.requests == []
    assert list(workdir.iterdir()) == []


# --- redirects ---------------------------------------------------------------------------


def test_redirect_chain_is_followed_and_recorded(
    http_server: LoopbackServer, options: Callable[..., FetchOptions]
) -> None:
    http_server.redirect("/a", "/b", status=301)
    http_server.redirect("/b", "c?x=1", status=302)  # relative to /b
    http_server.redirect("/c?x=1", http_server.url("/d", host="localhost"), status=307)
    http_server.route("/d", body=PAGE)
    with fetching(http_server.url("/a"), options()) as fetched:
        assert fetched.url == http_server.url("/a")
        assert fetched.final_url == http_server.url("/d", host="localhost")
        assert fetched.path.read_bytes() == PAGE
        redirects = fetched.provenance["redirects"]
    assert redirects == [
        {"url": http_server.url("/a"), "status": 301, "location": http_server.url("/b")},
        {"url": http_server.url("/b"), "status": 302, "location": http_server.url("/c?x=1")},
        {
            "url": http_server.url("/c?x=1"),
            "status": 307,
            "location": http_server.url("/d", host="localhost"),
        },
    ]
    assert http_server.requests[-1].headers["host"] == f"localhost:{http_server.port}"


def test_too_many_redirects(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    for hop in range(4):
        http_server.redirect(f"/r{hop}", f"/r{hop + 1}")
    http_server.route("/r4", body=PAGE)
    with pytest.raises(FetchError, match=r"too many redirects \(more than 3\)") as caught:
        fetch(http_server.url("/r0"), options(max_redirects=3), workdir=workdir)
    assert len(caught.value.provenance["redirects"]) == 4  # type: ignore[arg-type]
    assert "/r4" not in http_server.paths()
    assert list(workdir.iterdir()) == []


def test_redirect_to_another_scheme_is_refused(
    http_server: LoopbackServer, options: Callable[..., FetchOptions]
) -> None:
    http_server.redirect("/a", "file:///etc/passwd")
    with pytest.raises(FetchError, match="only http and https") as caught:
        fetch(http_server.url("/a"), options())
    assert caught.value.final_url == "file:///etc/passwd"


@pytest.fixture
def first_hop_allowed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """The host ``allowed.test`` stands for a public site; every other host gets the real
    guard with allow_private as asked.  Connections may go to 127.0.0.1 only."""
    real_connect = socket.create_connection
    decisions: list[tuple[str, bool]] = []

    def resolve(host: str, port: int, *, allowed: guard.AllowList, timeout: float) -> str:
        decisions.append((host, bool(allowed)))
        if host == "allowed.test":
            return "127.0.0.1"
        return guard.resolve_checked(host, port, allowed=allowed, timeout=timeout)

    def connect(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        if address[0] != "127.0.0.1":
            pytest.fail(f"connection attempted to {address}")
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(fetch_module, "resolve_checked", resolve)  # the name fetch calls
    monkeypatch.setattr(socket, "create_connection", connect)
    return decisions


@pytest.mark.parametrize(
    "target_host",
    [
        "127.0.0.1",
        "0x7f.0.0.1",
        "[::ffff:127.0.0.1]",
        "localhost",
        "metadata.test",
        # literals the guard refuses before any connection (the connect function is replaced)
        "168.63.129.16",
        "192.0.0.192",
        "100.100.100.200",
        "[fd00:ec2::254]",
        "[3fff::1]",
        "[64:ff9b::a9fe:a9fe]",
    ],
)
def test_redirect_to_a_refused_address_is_not_followed(
    http_server: LoopbackServer,
    options: Callable[..., FetchOptions],
    first_hop_allowed: list[tuple[str, bool]],
    monkeypatch: pytest.MonkeyPatch,
    workdir: Path,
    target_host: str,
) -> None:
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host == "metadata.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port))]
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    secret = f"http://{target_host}:{http_server.port}/secret"
    http_server.redirect("/start", secret)
    http_server.route("/secret", body=b"internal data")
    start = http_server.url("/start", host="allowed.test")
    with pytest.raises(AddressRefused) as caught:
        fetch(start, options(allow_private=False), workdir=workdir)
    error = caught.value
    assert http_server.paths() == ["/start"]  # the refused hop was never requested
    assert error.url == start
    assert error.final_url == secret
    assert error.status is None  # the refused URL never answered
    assert error.provenance["redirects"] == [{"url": start, "status": 302, "location": secret}]
    assert list(workdir.iterdir()) == []
    looked_up = [host for host, _ in first_hop_allowed]
    if target_host == "0x7f.0.0.1":  # browsers read 127.0.0.1: refused before any lookup
        assert looked_up == ["allowed.test"]
        assert "browser" in str(error)
    else:
        assert looked_up == ["allowed.test", _plain_host(target_host)]


def _plain_host(host: str) -> str:
    """The host as the fetcher names it: an IPv6 literal compressed, without brackets."""
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return host


# --- failures ----------------------------------------------------------------------------


@pytest.mark.parametrize("status", [404, 500])
def test_error_status_is_a_failed_capture(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path, status: int
) -> None:
    http_server.route("/gone", body=b"nope", status=status, headers={"ETag": '"e"'})
    with pytest.raises(FetchError, match=f"HTTP {status}") as caught:
        fetch(http_server.url("/gone"), options(), workdir=workdir)
    error = caught.value
    assert error.status == status
    assert error.url == error.final_url == http_server.url("/gone")
    assert error.provenance["ip"] == "127.0.0.1"
    assert error.provenance["headers"] == {
        "contentType": "text/html; charset=utf-8",
        "etag": '"e"',
        "date": error.provenance["headers"]["date"],  # type: ignore[index]
    }
    assert list(workdir.iterdir()) == []


def test_slow_response_times_out(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    http_server.route("/slow", body=PAGE, delay=5)
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"timed out after 0\.3 s") as caught:
        fetch(http_server.url("/slow"), options(timeout=0.3), workdir=workdir)
    assert time.monotonic() - started < 4
    assert caught.value.status is None
    assert list(workdir.iterdir()) == []


def test_trickling_body_hits_the_total_deadline(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    def trickle() -> Iterator[bytes]:
        for _ in range(100):
            yield b"x"

    http_server.route("/trickle", body=trickle, chunk_delay=0.05)
    with pytest.raises(FetchError, match=r"whole download took over 0\.5 s") as caught:
        fetch(http_server.url("/trickle"), options(timeout=1.0, total_timeout=0.5), workdir=workdir)
    assert caught.value.status == 200
    assert list(workdir.iterdir()) == []


def test_connection_refused_is_a_network_error(
    options: Callable[..., FetchOptions], workdir: Path
) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(FetchError, match="network error") as caught:
        fetch(f"http://127.0.0.1:{port}/", options(), workdir=workdir)
    assert caught.value.status is None
    assert list(workdir.iterdir()) == []


def test_truncated_body_is_a_network_error(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    http_server.route("/short", body=b"only ten b", headers={"Content-Length": "100"})
    with pytest.raises(FetchError, match="network error"):
        fetch(http_server.url("/short"), options(), workdir=workdir)
    assert list(workdir.iterdir()) == []


# --- local files -------------------------------------------------------------------------


def test_local_file_is_copied_with_provenance(
    tmp_path: Path, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    source = tmp_path / "report.pdf"
    source.write_bytes(b"%PDF-1.4 not really")
    for target in (str(source), source.as_uri()):
        with fetching(target, options(), workdir=workdir) as fetched:
            assert fetched.path != source
            assert fetched.path.read_bytes() == source.read_bytes()
            assert fetched.url == fetched.final_url == source.resolve().as_uri()
            assert fetched.status is None
            assert fetched.declared_content_type is None
            assert fetched.provenance["source"] == "file"
            assert fetched.provenance["path"] == str(source.resolve())
            assert RFC3339_UTC.match(str(fetched.provenance["mtime"]))
            assert RFC3339_UTC.match(str(fetched.provenance["fetchedAt"]))
    assert source.exists()


def test_missing_local_file_is_an_input_error(
    tmp_path: Path, options: Callable[..., FetchOptions]
) -> None:
    with pytest.raises(InputError, match="no such file"):
        fetch(str(tmp_path / "absent.pdf"), options())


def test_fetched_cleanup_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "body"
    path.write_bytes(b"x")
    fetched = Fetched(path, "sha256:" + "0" * 64, 1, "u", "u", 200, None, {})
    fetched.cleanup()
    fetched.cleanup()
    assert not path.exists()


def test_a_small_body_is_held_in_memory_and_written_out_only_when_asked(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    """No temporary file for a page up to SPOOL_BYTES (made, written, read back, removed for
    nothing); a caller that needs a file gets one, locked and removed by ``cleanup``."""
    http_server.route("/page", body=PAGE)
    fetched = fetch(http_server.url("/page"), options(), workdir=workdir)
    assert (fetched.file, fetched.body, fetched.source) == (None, PAGE, PAGE)
    assert list(workdir.iterdir()) == []
    assert fetched.path.parent == workdir
    assert fetched.path.read_bytes() == fetched.read_bytes() == PAGE
    assert fetched.path == fetched.path  # written once
    assert list(workdir.iterdir()) == [fetched.path]
    fetched.cleanup()
    fetched.cleanup()
    assert list(workdir.iterdir()) == []


def test_a_body_over_the_spool_size_goes_to_a_file(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    big = b"<p>" + b"x" * fetch_module.SPOOL_BYTES + b"</p>"
    http_server.route("/big", body=big, chunked=True)
    with fetching(http_server.url("/big"), options(), workdir=workdir) as fetched:
        assert fetched.body is None
        assert fetched.file is not None
        assert fetched.source == fetched.file == fetched.path
        assert fetched.file.read_bytes() == fetched.read_bytes() == big
        assert fetched.raw_digest == "sha256:" + hashlib.sha256(big).hexdigest()
    assert list(workdir.iterdir()) == []
