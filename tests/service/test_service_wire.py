"""``snap serve`` on the wire: a real uvicorn process on loopback, spoken to over raw sockets.

What only a real server shows: the token is checked before a body byte is read, memory does
not grow with unauthenticated uploads, requests uvicorn cannot parse are problem documents,
headers that drip are cut off, and a port in use is one line.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.service.conftest import TOKEN
from tests.service.server import GUARDED_SNAP, ROOT, Served, service_env

pytestmark = pytest.mark.slow
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("wire") / "home"
    env = service_env({"SNAP_HOME": str(home), "SNAP_API_TOKENS": TOKEN})
    server = Served(env, "--header-timeout", "1", token=TOKEN)
    yield server
    server.stop()


def exchange(port: int, data: bytes, *, seconds: float = 10) -> bytes:
    """Send ``data``, then read until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as connection:
        connection.sendall(data)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
        return received


def parsed(response: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = response.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body


def one_response(connection: socket.socket) -> bytes:
    """One whole response (head and a Content-Length body) from a kept-alive connection."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += connection.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    _, headers, _ = parsed(received)
    while len(body) < int(headers["content-length"]):
        body += connection.recv(65536)
    return head + b"\r\n\r\n" + body


def peak_rss(pid: int) -> int:
    """The process's high-water resident set (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc")


# --- authentication before the body ---------------------------------------------------------


def test_no_body_byte_is_read_before_the_401(served: Served) -> None:
    """The head declares 50 MB and no body byte is sent: the 401 comes at once (the server
    used to wait for the whole body first), and the connection is closed after it."""
    head = b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n"
    started = time.monotonic()
    status, headers, body = parsed(exchange(served.port, head, seconds=5))
    assert time.monotonic() - started < 5
    assert status == 401
    assert headers["content-type"] == "application/problem+json"
    assert headers["www-authenticate"].startswith("Bearer")
    assert headers["connection"] == "close"
    assert json.loads(body)["detail"] == "no bearer token given (Authorization: Bearer <token>)"


def test_the_token_is_still_let_in(served: Served) -> None:
    assert served.call("POST", "/v1/verify", raw=b"{").status == 400  # past auth, bad JSON
    assert served.call("POST", "/v1/verify", raw=b"{", token="x" * 20).status == 401


def test_unauthenticated_uploads_do_not_grow_the_server(tmp_path: Path) -> None:
    """Eight uploads of 24 MiB at once without a token: the server's peak memory stays put
    (it used to read each whole body before checking the token: about 8 x 24 MiB more)."""
    env = service_env({"SNAP_HOME": str(tmp_path / "home"), "SNAP_API_TOKENS": TOKEN})
    server = Served(env, token=TOKEN)
    try:
        before = peak_rss(server.process.pid)
        size = 24 * MIB
        answers: list[bytes] = []

        def upload() -> None:
            head = f"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n"
            with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
                with contextlib.suppress(OSError):  # closed by the server after its answer
                    sock.sendall(head.encode() + b"[" * size)
                try:
                    answers.append(sock.recv(65536))
                except OSError:
                    answers.append(b"")

        threads = [threading.Thread(target=upload) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        grown = peak_rss(server.process.pid) - before
        assert grown < 40 * MIB, f"the server grew by {grown / MIB:.0f} MiB"
        assert any(answer.startswith(b"HTTP/1.1 401") for answer in answers)
    finally:
        server.stop()


# --- malformed requests -----------------------------------------------------------------------

MALFORMED = {
    "bad Content-Length": b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
    "two Content-Lengths": (
        b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n[]"
    ),
    "a header without a colon": b"GET /healthz HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n",
    "a TLS hello": bytes.fromhex("16030102000100020000030300") + bytes(40),
    "a non-ASCII target": "GET /v1/citations/é HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
    "a bad chunk size": (
        b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n"
        b"Transfer-Encoding: chunked\r\n\r\nzz\r\n[]\r\n0\r\n\r\n"
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_request_is_a_problem(served: Served, case: str) -> None:
    status, headers, body = parsed(exchange(served.port, MALFORMED[case]))
    assert status == 400
    assert headers["content-type"] == "application/problem+json"
    assert headers["connection"] == "close"
    document = json.loads(body)
    assert document["type"] == "/problems/malformed-request"
    assert document["status"] == 400
    if case == "a TLS hello":
        assert document["detail"].startswith("a TLS handshake reached the plain HTTP port")
    else:
        assert document["detail"].startswith("the request is not valid HTTP/1.1")


def test_the_server_answers_after_malformed_requests(served: Served) -> None:
    for data in MALFORMED.values():
        exchange(served.port, data)
    assert served.call("GET", "/healthz").status == 200


# --- the header deadline ----------------------------------------------------------------------


def test_headers_that_drip_are_cut_off(served: Served) -> None:
    """One header line every 0.2 s, never ending: dropped after --header-timeout (1 s here),
    with a 408 problem (uvicorn alone kept such a connection as long as the client liked)."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as connection:
        started = time.monotonic()
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        try:
            for _ in range(50):
                connection.sendall(b"X-Drip: 1\r\n")
                time.sleep(0.2)
        except OSError:
            pass  # closed by the server
        elapsed = time.monotonic() - started
        received = connection.recv(65536)
    assert elapsed < 5
    status, headers, body = parsed(received)
    assert status == 408
    assert headers["content-type"] == "application/problem+json"
    assert json.loads(body)["type"] == "/problems/header-timeout"


def test_a_kept_alive_connection_gets_a_fresh_header_deadline(served: Served) -> None:
    """Two requests on one connection, each head sent whole: both answered; the deadline is
    for each head, not for the connection's life."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as connection:
        for _ in range(2):
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert one_response(connection).startswith(b"HTTP/1.1 200")
            time.sleep(0.6)


# --- a port in use ----------------------------------------------------------------------------


def test_a_port_in_use_is_one_line_and_exit_3(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = service_env({"SNAP_HOME": str(tmp_path / "home")})
        done = subprocess.run(
            [sys.executable, "-c", GUARDED_SNAP, "serve", "--port", str(port)],
            env={**env, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 3
    line = f"snap: error: cannot listen on 127.0.0.1:{port}: address already in use\n"
    assert done.stderr == line
    assert done.stdout == ""
