"""The one capture deadline also covers what the hostile HTTP server cannot drip: the TLS
handshake and the name lookup.  In-process, on 127.0.0.1; the slow "resolver" is a
replacement of ``socket.getaddrinfo`` in this process, so no name is ever looked up.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from snap.errors import FetchError
from snapshotter.fetch import FetchOptions, fetch

DEADLINE = 1.5


@pytest.fixture
def handshake_dripper() -> Iterator[int]:
    """Accepts TLS connections and answers the ClientHello one byte every 0.3 s: a record
    header announcing 16 KiB, then its body, which never completes in time."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                record = b"\x16\x03\x03\x40\x00"  # a 16 KiB handshake record, dripped
                while not stop.is_set():
                    try:
                        conn.sendall(record[:1] or b"\x00")
                    except OSError:
                        break
                    record = record[1:]
                    time.sleep(0.3)

    worker = threading.Thread(target=serve, daemon=True)
    worker.start()
    yield int(listener.getsockname()[1])
    stop.set()
    worker.join(2)
    listener.close()


def options() -> FetchOptions:
    """Per-operation timeouts longer than the deadline, so only the deadline can end it."""
    return FetchOptions(
        max_bytes=1 << 20, timeout=5.0, max_redirects=3, allow_private=True, total_timeout=DEADLINE
    )


def test_a_tls_handshake_drip_ends_at_the_deadline(handshake_dripper: int) -> None:
    started = time.monotonic()
    with pytest.raises(FetchError, match="capture deadline") as caught:
        fetch(f"https://127.0.0.1:{handshake_dripper}/", options())
    elapsed = time.monotonic() - started
    assert DEADLINE - 0.1 <= elapsed <= DEADLINE + 1.0
    assert "\n" not in caught.value.message


def test_a_slow_name_lookup_ends_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    connects: list[object] = []

    def slow_getaddrinfo(*args: Any, **kwargs: Any) -> list[Any]:
        time.sleep(5)
        return []

    def no_connect(address: object, *args: object, **kwargs: object) -> socket.socket:
        connects.append(address)
        raise AssertionError("no connection may be attempted")

    monkeypatch.setattr(socket, "getaddrinfo", slow_getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", no_connect)
    started = time.monotonic()
    with pytest.raises(FetchError, match="capture deadline"):
        fetch("http://slow-resolver.test/", options())
    assert time.monotonic() - started <= DEADLINE + 1.0
    assert connects == []
