"""A hand-written hostile HTTP server on 127.0.0.1: every byte and every pause is scripted.

``http.server`` cannot misbehave on purpose (drip a header one byte per second, send a
status line of 70 KB, reset the connection), so this one is written on raw sockets.  Each
request is answered by a *script*, ``script(peer)``, that writes through ``Peer``; ``Peer``
notices when snap hangs up, so the time snap held each connection is measured on the
server's side, where a late client cannot hide it.

Nothing here connects anywhere: the server only listens on 127.0.0.1.
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


class Gone(Exception):
    """The client closed the connection (or the server is stopping)."""


@dataclass
class Connection:
    path: str
    opened: float
    closed: float | None = None


@dataclass
class Peer:
    """One accepted connection and the request line it carried."""

    sock: socket.socket
    path: str
    base: str  # "http://127.0.0.1:PORT"
    stopping: threading.Event

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:
            raise Gone from None

    def wait(self, seconds: float) -> None:
        """Pause, but notice at once when the client hangs up."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if self.stopping.is_set():
                raise Gone
            readable, _, _ = select.select([self.sock], [], [], min(left, 0.05))
            if readable:
                try:
                    if not self.sock.recv(65536):
                        raise Gone
                except OSError:
                    raise Gone from None

    def drip(self, data: bytes, every: float) -> None:
        for index in range(len(data)):
            self.send(data[index : index + 1])
            self.wait(every)

    def reset(self) -> None:
        """Close with a TCP RST instead of a FIN."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


Script = Callable[[Peer], None]


@dataclass
class HostileServer:
    """Answers every request on 127.0.0.1 with the script registered for its first path
    segment; ``connections`` records how long each connection stayed open."""

    scripts: dict[str, Script] = field(default_factory=dict)
    connections: list[Connection] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stopping = threading.Event()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.settimeout(0.1)
        self.port = int(self._listener.getsockname()[1])
        self.base = f"http://127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def add(self, name: str, script: Script) -> str:
        self.scripts[name] = script
        return f"{self.base}/{name}"

    def held(self, name: str) -> float:
        """Seconds from the first connection for ``name`` to the end of the last one."""
        with self._lock:
            mine = [c for c in self.connections if c.path.split("/")[1] == name]
        if not mine:
            return 0.0
        ends = [c.closed if c.closed is not None else time.monotonic() for c in mine]
        return max(ends) - min(c.opened for c in mine)

    def stop(self) -> None:
        self.stopping.set()
        self._listener.close()

    def _accept_loop(self) -> None:
        while not self.stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        opened = time.monotonic()
        with sock:
            path = _read_request_path(sock)
            record = Connection(path, opened)
            with self._lock:
                self.connections.append(record)
            script = self.scripts.get(path.split("/")[1].split("?")[0], not_found)
            try:
                script(Peer(sock, path, self.base, self.stopping))
            except Gone:
                pass
            finally:
                record.closed = time.monotonic()


def _read_request_path(sock: socket.socket) -> str:
    sock.settimeout(5)
    data = b""
    try:
        while b"\r\n\r\n" not in data and len(data) < 1 << 20:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    sock.settimeout(None)
    parts = data.split(b"\r\n", 1)[0].split(b" ")
    path = parts[1].decode("latin-1") if len(parts) > 1 else "/"
    return path if path.startswith("/") else "/"


def not_found(peer: Peer) -> None:
    peer.send(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def response_head(
    status: str = "200 OK", headers: tuple[tuple[str, str], ...] = (), length: int | None = None
) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close", *(f"{k}: {v}" for k, v in headers)]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
