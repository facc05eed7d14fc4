"""How ``snap serve`` runs uvicorn: its own listening socket, and uvicorn's h11 protocol with
two changes made through the protocol's own methods (no uvicorn code copied).

- A request uvicorn cannot parse (a bad or duplicate ``Content-Length``, a header line without
  a colon, a TLS handshake on the plain port, a non-ASCII target, a bad chunk size) reaches
  ``H11Protocol.send_400_response``, which answers in plain text; here it is a problem
  document like every other error.
- A header deadline: the request line and headers must be complete within ``header_timeout``
  seconds of the connection opening (or of the previous response on a kept-alive
  connection), or the connection is answered 408 and dropped. uvicorn has no such limit: a
  client sending one header byte every few seconds holds a connection for as long as it likes
  (``timeout_keep_alive`` only runs between requests). A body that drips is stopped by the
  request timeout (``snap.service.limits``).

The socket is bound before uvicorn starts, so a port already in use is one line and exit 3
(``ListenError``) instead of uvicorn's start-up log. snap always uses this h11 protocol, even
where ``httptools`` is installed. What ``uvicorn[standard]`` would bring was measured (issue 25,
16 clients, PostgreSQL): ``httptools`` takes about 0.1 ms of CPU off an answer that costs about
11 ms in the server, ``uvloop`` nothing measurable on the event loop's thread, so neither is a
dependency and these two changes are not written twice (docs/benchmarks.md, the service row).

``--workers N`` (N > 1) runs uvicorn's own supervisor (``uvicorn.supervisors.Multiprocess``):
N worker processes, each building the app from the factory ``create_app(config)`` and accepting
on the same pre-bound socket; the supervisor replaces a worker that dies. The uvicorn
configuration travels to each worker pickled, so the protocol's header deadline rides on it as a
plain number (``SnapConfig``), not as a class made at run time. Metrics switch to
prometheus_client's multi-process mode in a temporary directory made for this serve and removed
when it ends (``snap.service.metrics``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import uvicorn

from snap.errors import ListenError as ListenError
from snap.service.metrics import MULTIPROCESS_DIR
from snap.service.problems import MALFORMED, MEDIA_TYPE, SLOW, problem

DEFAULT_HEADER_TIMEOUT = 10.0
# Seconds a worker may take to answer the supervisor's ping before it is killed and replaced;
# uvicorn's 5 s is shorter than a worker's imports on a loaded machine.
WORKER_HEALTHCHECK = 60
TLS_HANDSHAKE = b"\x16\x03"  # a TLS record of type handshake, any TLS version


def malformed_line(received: bytes) -> str:
    """Why uvicorn refused the request, as far as the bytes show."""
    if received.startswith(TLS_HANDSHAKE):
        return "a TLS handshake reached the plain HTTP port: use http://, not https://"
    return (
        "the request is not valid HTTP/1.1 (its request line, a header, Content-Length or a"
        " chunk size cannot be parsed)"
    )


def raw_problem(status: int, reason: str, document: dict[str, Any]) -> bytes:
    """A whole problem response, closing the connection, written below h11 (h11 lets a
    server answer only a request it has parsed)."""
    body = json.dumps(document, ensure_ascii=False).encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: {MEDIA_TYPE}\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def protocol_class(header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with snap's problem documents and header deadline (uvicorn
    takes a protocol class for ``http``; the deadline is a class attribute)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class SnapH11Protocol(H11Protocol):
        header_timeout_seconds: ClassVar[float] = header_timeout
        header_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.arm_header_deadline()

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm_header_deadline()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            waiting = self.cycle
            super().handle_events()
            if self.cycle is not waiting:  # a request's head was parsed
                self.disarm_header_deadline()

        def on_response_complete(self) -> None:
            self.arm_header_deadline()  # for the next request on this connection
            super().on_response_complete()

        def send_400_response(self, msg: str) -> None:
            received, _ = self.conn.trailing_data
            started = self.cycle is not None and self.cycle.response_started
            if started and not self.cycle.response_complete:
                self.transport.close()  # an answer is under way: it can only be cut short
                return
            document = problem(MALFORMED, malformed_line(received))
            self.transport.write(raw_problem(400, "Bad Request", document))
            self.transport.close()

        def arm_header_deadline(self) -> None:
            self.disarm_header_deadline()
            if not self.transport.is_closing():
                self.header_deadline = self.loop.call_later(
                    self.header_timeout_seconds, self.headers_too_slow
                )

        def disarm_header_deadline(self) -> None:
            if self.header_deadline is not None:
                self.header_deadline.cancel()
                self.header_deadline = None

        def headers_too_slow(self) -> None:
            self.header_deadline = None
            if self.transport.is_closing() or (self.cycle and not self.cycle.response_complete):
                return
            detail = (
                f"the request's headers took longer than {self.header_timeout_seconds:g} s"
                " (snap serve --header-timeout)"
            )
            self.transport.write(raw_problem(408, "Request Timeout", problem(SLOW, detail)))
            self.transport.close()

    return SnapH11Protocol


def listening_socket(host: str, port: int) -> socket.socket:
    """The bound socket (uvicorn listens on it); a failure is one line, exit 3.

    Made with its protocol named (``IPPROTO_TCP``), as ``socket.create_server`` makes one:
    asyncio turns Nagle's algorithm off (``TCP_NODELAY``) only on connections whose socket
    says it is TCP, and a socket made with protocol 0 does not. With Nagle on, h11's two writes
    of a response (head, then body) met the client's delayed ACK: every answer on a kept-alive
    connection waited about 40 ms. ``TCP_NODELAY`` on the listener too, which Linux hands to
    every connection it accepts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        reason = error.strerror or str(error)
        raise ListenError(f"cannot listen on {host}:{port}: {reason.lower()}") from None
    return sock


class SnapConfig(uvicorn.Config):
    """uvicorn's configuration with snap's h11 protocol; picklable, for worker processes."""

    def __init__(self, app: Any, *, header_timeout: float, **options: Any) -> None:
        super().__init__(app, http="h11", **options)
        self.header_timeout = header_timeout

    def load(self) -> None:
        super().load()
        self.http_protocol_class = protocol_class(self.header_timeout)


@dataclass(frozen=True)
class Listen:
    """Where and how ``snap serve`` listens (its command-line options)."""

    host: str
    port: int
    access_log: bool
    header_timeout: float
    graceful_shutdown: int  # seconds uvicorn waits for requests under way at shutdown

    def config(self, app: Any, **options: Any) -> SnapConfig:
        return SnapConfig(
            app,
            header_timeout=self.header_timeout,
            access_log=self.access_log,
            log_level="info",
            timeout_graceful_shutdown=self.graceful_shutdown,
            **options,
        )


def run(app: Any, how: Listen) -> None:
    """Serve ``app`` until SIGTERM or Ctrl-C (uvicorn then ends by that signal)."""
    sock = listening_socket(how.host, how.port)
    config = how.config(app)
    server = uvicorn.Server(config)
    announce(sock)
    server.run(sockets=[sock])
    if not server.started:
        raise ListenError("the server did not start (see the log above)")


def run_workers(factory: Callable[[], Any], how: Listen, *, workers: int) -> None:
    """Serve the app ``factory()`` builds from ``workers`` processes until SIGTERM or Ctrl-C;
    the supervisor then stops every worker and returns. ``factory`` must pickle (a
    ``functools.partial`` of a module-level function does): each worker calls it."""
    from uvicorn.supervisors import Multiprocess

    sock = listening_socket(how.host, how.port)
    with tempfile.TemporaryDirectory(prefix="snap-serve-metrics-") as shared:
        os.environ[MULTIPROCESS_DIR] = shared  # inherited by the workers, read at their import
        config = how.config(
            factory,
            factory=True,
            workers=workers,
            timeout_worker_healthcheck=WORKER_HEALTHCHECK,
        )
        announce(sock, f" with {workers} worker processes")
        try:
            Multiprocess(config, sockets=[sock]).run()
        finally:
            del os.environ[MULTIPROCESS_DIR]
            sock.close()


def announce(sock: socket.socket, how: str = "") -> None:
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    logging.getLogger("uvicorn.error").info(
        "snap serve listening on http://%s:%d%s", shown, bound_port, how
    )
