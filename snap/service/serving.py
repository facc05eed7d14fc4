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
where ``httptools`` is installed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from typing import Any, ClassVar

from snap.errors import ListenError as ListenError
from snap.service.problems import MALFORMED, MEDIA_TYPE, SLOW, problem

DEFAULT_HEADER_TIMEOUT = 10.0
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
    """The bound socket (uvicorn listens on it); a failure is one line, exit 3."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        reason = error.strerror or str(error)
        raise ListenError(f"cannot listen on {host}:{port}: {reason.lower()}") from None
    return sock


def run(
    app: Any,
    *,
    host: str,
    port: int,
    access_log: bool,
    header_timeout: float,
    graceful_shutdown: int,
) -> None:
    """Serve ``app`` until SIGTERM or Ctrl-C (uvicorn then ends by that signal)."""
    import uvicorn

    sock = listening_socket(host, port)
    config = uvicorn.Config(
        app,
        http=protocol_class(header_timeout),
        access_log=access_log,
        log_level="info",
        timeout_graceful_shutdown=graceful_shutdown,
    )
    server = uvicorn.Server(config)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    logging.getLogger("uvicorn.error").info(
        "snap serve listening on http://%s:%d", shown, bound_port
    )
    server.run(sockets=[sock])
    if not server.started:
        raise ListenError("the server did not start (see the log above)")
