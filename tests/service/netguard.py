"""Loopback only, enforced in the process: no test of the service sends a packet elsewhere.

Schemathesis makes up URLs (``http://8.8.8.8/``, ``http://example.com/``) and the service
captures what it is asked to; the request-forgery guard lets public addresses through by
design. So every test process of tests/service replaces name resolution and ``connect``: a
name other than ``localhost`` is never looked up (the resolver lives outside loopback), and a
connection to an address outside 127.0.0.0/8 and ::1 fails before a packet leaves. The
uvicorn subprocess of the end-to-end tests installs the same guard first (``install``).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

REFUSED = "tests/service/netguard: only loopback is reachable from the tests"
_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if name is not None and not is_loopback(name):
        raise socket.gaierror(socket.EAI_NONAME, f"{REFUSED} (lookup of {name!r})")
    return _real_getaddrinfo(host, *args, **kwargs)


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not is_loopback(address[0]):
        raise ConnectionRefusedError(f"{REFUSED} (connect to {address[0]})")


def guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _real_connect(self, address)


def guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)


def install() -> None:
    """For a subprocess: guard this interpreter for good."""
    socket.getaddrinfo = guarded_getaddrinfo  # type: ignore[assignment]
    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
