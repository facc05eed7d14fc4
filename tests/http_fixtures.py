"""A loopback HTTP(S) server for tests, with routes set per test.

Usage::

    from tests.http_fixtures import http_server  # in a conftest.py, to register the fixture

    def test_page(http_server):
        http_server.route("/page", body=b"<html>...", content_type="text/html")
        fetch(http_server.url("/page"), ...)
        assert http_server.paths() == ["/page"]

Everything binds to 127.0.0.1 on a free port; nothing here ever talks to another machine.
Routes can be slow (``delay`` before the answer, ``chunk_delay`` between body chunks),
chunked (no Content-Length), or streamed from a generator so a test can serve a body larger
than it wants to hold in memory.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

Body = bytes | Callable[[], Iterable[bytes]]


@dataclass(frozen=True)
class Route:
    body: Body = b""
    content_type: str | None = "text/html; charset=utf-8"
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    chunked: bool = False  # send Transfer-Encoding: chunked instead of Content-Length
    delay: float = 0.0  # seconds to wait before sending the status line
    chunk_delay: float = 0.0  # seconds to wait before each body chunk


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names


class LoopbackServer:
    """A ThreadingHTTPServer on 127.0.0.1:0 in a daemon thread."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[RecordedRequest] = []
        self.sni_names: list[str | None] = []
        self.handler_errors: list[BaseException] = []
        self.stopping = threading.Event()
        self.tls = tls
        if tls is not None:
            tls.sni_callback = self._record_sni
        self._httpd = _Server(("127.0.0.1", 0), _Handler, self)
        self.host = str(self._httpd.server_address[0])
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    def url(self, path: str = "/", *, host: str | None = None) -> str:
        """An absolute URL on this server; ``host`` replaces 127.0.0.1 in the URL only."""
        return f"{self.scheme}://{host or self.host}:{self.port}{path}"

    def route(
        self,
        path: str,
        *,
        body: Body = b"",
        content_type: str | None = "text/html; charset=utf-8",
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        chunked: bool = False,
        delay: float = 0.0,
        chunk_delay: float = 0.0,
    ) -> None:
        self.routes[path] = Route(
            body, content_type, status, dict(headers or {}), chunked, delay, chunk_delay
        )

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.route(path, status=status, headers={"Location": location}, content_type=None)

    def paths(self) -> list[str]:
        return [request.path for request in self.requests]

    def close(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _record_sni(self, sock: Any, name: str | None, context: Any) -> None:
        self.sni_names.append(name)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type, owner: LoopbackServer) -> None:
        self.owner = owner
        super().__init__(address, handler)

    def get_request(self) -> tuple[Any, Any]:
        sock, address = super().get_request()
        if self.owner.tls is not None:
            # The handshake happens in the handler thread, so a client that fails it
            # (the point of some tests) never blocks the accept loop.
            sock = self.owner.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up mid-body (size caps, timeouts) are expected here.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(5)
            try:
                self.request.do_handshake()
            except (OSError, ssl.SSLError) as error:
                self.server.owner.handler_errors.append(error)
                raise
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        owner = self.server.owner
        path = self.path
        owner.requests.append(
            RecordedRequest("GET", path, {k.lower(): v for k, v in self.headers.items()})
        )
        route = owner.routes.get(path) or Route(b"not found", "text/plain", 404)
        if route.delay and owner.stopping.wait(route.delay):
            return
        self._send(route)

    def _send(self, route: Route) -> None:
        self.send_response(route.status)
        if route.content_type is not None:
            self.send_header("Content-Type", route.content_type)
        for name, value in route.headers.items():
            self.send_header(name, value)
        body = route.body
        if isinstance(body, bytes) and not route.chunked:
            if "Content-Length" not in route.headers:
                self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in _chunks(body):
            if route.chunk_delay and self.server.owner.stopping.wait(route.chunk_delay):
                return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")


def _chunks(body: Body) -> Iterator[bytes]:
    if isinstance(body, bytes):
        for start in range(0, len(body), 16 * 1024):
            yield body[start : start + 16 * 1024]
        return
    yield from (chunk for chunk in body() if chunk)


@pytest.fixture
def http_server() -> Iterator[LoopbackServer]:
    """A plain-HTTP loopback server, closed after the test."""
    with LoopbackServer() as server:
        yield server


# --- TLS ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestCertificates:
    ca_file: Path  # PEM of the CA to trust (FetchOptions.ca_file)
    cert_file: Path  # the server's certificate chain
    key_file: Path
    leaf_der: bytes  # the server certificate, DER: its SHA-256 is the recorded fingerprint

    __test__ = False  # not a pytest test class

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


def make_certificates(folder: Path, names: Iterable[str]) -> TestCertificates:
    """A throwaway CA and a server certificate for ``names`` (DNS names or IP addresses)."""
    pytest.importorskip("cryptography")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.UTC)

    def build(subject: str, issuer: x509.Name, public: Any, ca: bool) -> Any:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "snap test CA")])
    ca_cert = (
        build("snap test CA", ca_name, ca_key.public_key(), True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    alt_names: list[x509.GeneralName] = []
    for name in names:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alt_names.append(x509.DNSName(name))
    leaf_cert = (
        build("snap test server", ca_cert.subject, leaf_key.public_key(), False)
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    ca_file, cert_file, key_file = folder / "ca.pem", folder / "server.pem", folder / "key.pem"
    ca_file.write_bytes(ca_cert.public_bytes(pem))
    cert_file.write_bytes(leaf_cert.public_bytes(pem) + ca_cert.public_bytes(pem))
    key_file.write_bytes(
        leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return TestCertificates(
        ca_file, cert_file, key_file, leaf_cert.public_bytes(serialization.Encoding.DER)
    )
