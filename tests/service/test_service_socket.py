"""snap serve's listening socket hands out connections with Nagle's algorithm off.

With it on, h11's two writes of a response (head, then body) waited for the client's delayed
ACK: every answer on a kept-alive connection took about 40 ms more (a /healthz 44 ms instead of
under 1 ms). asyncio turns it off itself only for sockets that name their protocol as TCP.
"""

from __future__ import annotations

import socket

from snap.service.serving import listening_socket


def test_an_accepted_connection_has_nagle_off_and_says_it_is_tcp() -> None:
    listener = listening_socket("127.0.0.1", 0)
    try:
        listener.listen()
        with socket.create_connection(listener.getsockname()[:2], timeout=10):
            accepted, _ = listener.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
                assert accepted.proto == socket.IPPROTO_TCP  # what asyncio checks first
    finally:
        listener.close()
