"""HTTPS on loopback with a throwaway CA: fingerprint recorded, name checked, SNI sent."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from snap.errors import FetchError
from snapshotter import fetch as fetch_module
from snapshotter.fetch import FetchOptions, fetch, fetching
from tests.http_fixtures import LoopbackServer, TestCertificates, make_certificates

BODY = b"<!doctype html><html><body><p>over TLS</p></body></html>"


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> TestCertificates:
    folder = tmp_path_factory.mktemp("tls")
    return make_certificates(folder, ["localhost", "127.0.0.1", "snap-test.example"])


@pytest.fixture
def https_server(certificates: TestCertificates) -> Iterator[LoopbackServer]:
    with LoopbackServer(tls=certificates.server_context()) as server:
        server.route("/page", body=BODY)
        yield server


def test_certificate_fingerprint_is_recorded(
    https_server: LoopbackServer,
    certificates: TestCertificates,
    options: Callable[..., FetchOptions],
) -> None:
    url = https_server.url("/page", host="localhost")
    with fetching(url, options(ca_file=certificates.ca_file)) as fetched:
        assert fetched.path.read_bytes() == BODY
        provenance = fetched.provenance
    assert provenance["tlsCertSha256"] == hashlib.sha256(certificates.leaf_der).hexdigest()
    assert provenance["ip"] == "127.0.0.1"
    assert https_server.sni_names == ["localhost"]


def test_untrusted_certificate_fails_by_default(
    https_server: LoopbackServer, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    with pytest.raises(FetchError, match="TLS certificate check failed") as caught:
        fetch(https_server.url("/page", host="localhost"), options(), workdir=workdir)
    assert caught.value.status is None
    assert https_server.paths() == []
    assert list(workdir.iterdir()) == []


def test_name_mismatch_fails(
    tmp_path: Path, options: Callable[..., FetchOptions], workdir: Path
) -> None:
    only_localhost = make_certificates(tmp_path, ["localhost"])
    with LoopbackServer(tls=only_localhost.server_context()) as server:
        server.route("/page", body=BODY)
        with pytest.raises(FetchError, match="TLS certificate check failed"):
            fetch(server.url("/page"), options(ca_file=only_localhost.ca_file), workdir=workdir)
        assert server.paths() == []


def test_pinned_address_keeps_the_real_host_name(
    https_server: LoopbackServer,
    certificates: TestCertificates,
    options: Callable[..., FetchOptions],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Connect to the checked IP, but send SNI, Host and check the certificate for the name."""
    real_getaddrinfo = socket.getaddrinfo
    lookups: list[str] = []

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        lookups.append(host)
        if host == "snap-test.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    url = https_server.url("/page", host="snap-test.example")
    with fetching(url, options(ca_file=certificates.ca_file)) as fetched:
        assert fetched.final_url == url
    assert lookups.count("snap-test.example") == 1
    assert https_server.sni_names == ["snap-test.example"]
    assert https_server.requests[0].headers["host"] == f"snap-test.example:{https_server.port}"
    assert fetch_module.DEFAULT_USER_AGENT in https_server.requests[0].headers["user-agent"]


def test_https_redirect_chain_records_final_certificate(
    https_server: LoopbackServer,
    certificates: TestCertificates,
    http_server: LoopbackServer,
    options: Callable[..., FetchOptions],
) -> None:
    http_server.redirect("/go", https_server.url("/page", host="localhost"), status=308)
    with fetching(http_server.url("/go"), options(ca_file=certificates.ca_file)) as fetched:
        assert fetched.path.read_bytes() == BODY
        assert (
            fetched.provenance["tlsCertSha256"] == hashlib.sha256(certificates.leaf_der).hexdigest()
        )
        assert fetched.provenance["port"] == https_server.port
