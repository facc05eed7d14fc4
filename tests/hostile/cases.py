"""The hostile cases: what each server does, and the documented exit snap must end with.

Exit codes (docs/commands.md): 0 stored, 1 a capture failed (and is recorded as failed), 2 unusable
input or configuration.  Every redirect target below is a loopback literal or a URL the guard
refuses before any lookup (bad scheme, malformed): no case makes snap resolve a name.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from tests.hostile.servers import Peer, Script, response_head

MIB = 1024 * 1024
TIMEOUT = 1.5  # SNAP_TIMEOUT: each connect and read
DEADLINE = 2.5  # SNAP_DEADLINE: the whole capture
MAX_BYTES = MIB  # SNAP_MAX_BYTES
TEXT = ("Grüße aus Köln: a plain text source with enough words to be a page. " * 20).encode()
HTML = b"<html><head><title>t</title></head><body><p>" + TEXT + b"</p></body></html>"


@dataclass(frozen=True)
class Case:
    name: str
    script: Script
    exit_code: int
    says: str = ""  # a fragment the one-line error (or the stored extractor id) must contain


def _serve(head: bytes, body: bytes = b"") -> Script:
    def script(peer: Peer) -> None:
        peer.send(head + body)

    return script


def _ok(content_type: str, body: bytes) -> Script:
    return _serve(response_head(headers=(("Content-Type", content_type),), length=len(body)), body)


def _redirect(location: Callable[[Peer], str], status: str = "302 Found") -> Script:
    def script(peer: Peer) -> None:
        peer.send(response_head(status, (("Location", location(peer)),), length=0))

    return script


@cache
def _bomb(encoding: str) -> bytes:
    """64 MiB of zeros compressed (about 64 KB): 64 times the size cap once inflated."""
    wbits = {"gzip": 31, "deflate": 15, "raw-deflate": -15}[encoding]
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(MIB)
    return b"".join(packer.compress(block) for _ in range(64)) + packer.flush()


def _bomb_script(encoding: str) -> Script:
    header = "deflate" if encoding == "raw-deflate" else encoding
    body = _bomb(encoding)
    headers = (("Content-Type", "text/plain"), ("Content-Encoding", header))
    return _serve(response_head(headers=headers, length=len(body)), body)


def _gzip_members() -> Script:
    member = gzip.compress(bytes(MIB // 4))
    body = member * 16  # four times the cap, one small member after another
    headers = (("Content-Type", "text/plain"), ("Content-Encoding", "gzip"))
    return _serve(response_head(headers=headers, length=len(body)), body)


def _forever(make: Callable[[Peer], None]) -> Script:
    def script(peer: Peer) -> None:
        while True:
            make(peer)

    return script


def _header_drip(peer: Peer) -> None:
    peer.send(b"HTTP/1.1 200 OK\r\n")
    peer.drip(b"X-Slow: " + b"a" * 10_000, 1.0)  # one header byte per second


def _status_drip(peer: Peer) -> None:
    peer.drip(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0.5)


def _body_drip(peer: Peer) -> None:
    peer.send(response_head(headers=(("Content-Type", "text/plain"),), length=100_000))
    peer.drip(b"x" * 100_000, 0.5)


def _chunked_head() -> bytes:
    return response_head(headers=(("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")))


def _chunk_drip(peer: Peer) -> None:
    peer.send(_chunked_head())
    while True:
        peer.send(b"4\r\nabcd\r\n")
        peer.wait(0.3)


def _trailer_drip(peer: Peer) -> None:
    peer.send(_chunked_head() + b"4\r\nabcd\r\n0\r\n")
    while True:
        peer.send(b"X-Trailer: y\r\n")
        peer.wait(0.3)


def _endless_chunks(peer: Peer) -> None:
    peer.send(_chunked_head())
    chunk = b"%x\r\n" % (64 * 1024) + b"z" * (64 * 1024) + b"\r\n"
    while True:
        peer.send(chunk)


def _endless_identity(peer: Peer) -> None:
    peer.send(response_head(headers=(("Content-Type", "text/plain"),)))
    while True:
        peer.send(b"y" * 65536)


def _silent(peer: Peer) -> None:
    peer.wait(3600)


def _slow_redirects(peer: Peer) -> None:
    """Each hop answers after 0.8 s, to the next hop: only the deadline ends the chain."""
    last = peer.path.rsplit("/", 1)[-1]
    hop = int(last.removeprefix("hop-")) if last.startswith("hop-") else 0
    peer.wait(0.8)
    location = f"{peer.base}/slow-redirects/hop-{hop + 1}"
    peer.send(response_head("302 Found", (("Location", location),), length=0))


def _reset(peer: Peer) -> None:
    peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
    peer.reset()


def _nothing(peer: Peer) -> None:
    return None


def charset_cases() -> list[Case]:
    labels = ["rot13", "base64", "hex", "zlib", "bz2", "punycode", "undefined", "idna"]
    labels += ["utf-7", "unicode_escape", "x-no-such-charset", "a" * 300, "utf-8\0", "ut\u00e9"]
    cases = []
    for index, label in enumerate(labels):
        declared = f"text/plain; charset={label}".encode().decode("latin-1")
        cases.append(Case(f"charset-{index}-text", _ok(declared, TEXT), 0, "+detected"))
    for index, label in enumerate(labels[:6]):
        declared = f"text/html; charset={label}"
        cases.append(Case(f"charset-{index}-html", _ok(declared, HTML), 0, "trafilatura"))
    latin1 = TEXT.decode().encode("latin-1")
    cases.append(
        Case("charset-rot13-undecodable", _ok("text/plain; charset=rot13", latin1), 1, "rot13")
    )
    return cases


def server_cases() -> list[Case]:
    """Every server case; the name is also the URL path."""
    deadline = "the capture deadline"
    return [
        *charset_cases(),
        Case("header-drip", _header_drip, 1, deadline),
        Case("status-drip", _status_drip, 1, deadline),
        Case("body-drip", _body_drip, 1, deadline),
        Case("chunk-drip", _chunk_drip, 1, deadline),
        Case("trailer-drip", _trailer_drip, 1, deadline),
        Case("slow-redirects", _slow_redirects, 1, deadline),
        Case("silent", _silent, 1, "timed out after 1.5 s"),
        Case("endless-chunks", _endless_chunks, 1, "cap"),
        Case("endless-identity", _endless_identity, 1, "cap"),
        Case("gzip-bomb", _bomb_script("gzip"), 1, "cap"),
        Case("deflate-bomb", _bomb_script("deflate"), 1, "cap"),
        Case("raw-deflate-bomb", _bomb_script("raw-deflate"), 1, "cap"),
        Case("gzip-members", _gzip_members(), 1, "cap"),
        Case(
            "gzip-truncated",
            _serve(
                response_head(headers=(("Content-Encoding", "gzip"),), length=20),
                gzip.compress(TEXT)[:20],
            ),
            1,
            "network error",
        ),
        Case(
            "brotli",
            _serve(response_head(headers=(("Content-Encoding", "br"),), length=3), b"abc"),
            1,
            "unsupported Content-Encoding",
        ),
        Case(
            "huge-header-line",
            _serve(b"HTTP/1.1 200 OK\r\nX-Big: " + b"b" * MIB + b"\r\n\r\n"),
            1,
            "network error",
        ),
        Case(
            "many-headers",
            _serve(b"HTTP/1.1 200 OK\r\n" + b"X-H: v\r\n" * 5000 + b"\r\n"),
            1,
            "network error",
        ),
        Case("huge-status-line", _serve(b"HTTP/1.1 200 " + b"O" * 200_000 + b"\r\n\r\n"), 1, ""),
        Case("garbage-status", _serve(b"HELLO THERE\r\n\r\nbody"), 1, "network error"),
        Case("http09", _serve(b"just a body, no status line"), 1, "network error"),
        Case("empty-response", _nothing, 1, "network error"),
        Case("reset", _reset, 1, "network error"),
        Case(
            "short-body",
            _serve(response_head(length=1000), b"only ten b"),
            1,
            "network error",
        ),
        Case(
            "declared-huge",
            _serve(response_head(length=10 * 1024**3)),
            1,
            "more than the 1048576-byte cap",
        ),
        Case(
            "chunk-size-huge",
            _serve(_chunked_head() + b"f" * 40 + b"\r\nabc"),
            1,
            "network error",
        ),
        Case("chunk-size-bad", _serve(_chunked_head() + b"zz\r\nabc\r\n"), 1, "network error"),
        Case(
            "chunk-size-line-long",
            _serve(_chunked_head() + b"1" + b";x" * 100_000 + b"\r\n"),
            1,
            "network error",
        ),
        Case("redirect-ipv6-unclosed", _redirect(lambda p: "http://[::1"), 1, "malformed redirect"),
        Case(
            "redirect-bad-port",
            _redirect(lambda p: "http://127.0.0.1:99999/"),
            1,
            "malformed redirect",
        ),
        Case("redirect-loop", _redirect(lambda p: f"{p.base}/redirect-loop"), 1, "too many"),
        Case("redirect-gopher", _redirect(lambda p: "gopher://127.0.0.1/"), 1, "only http"),
        Case("redirect-file", _redirect(lambda p: "file:///etc/passwd"), 1, "only http"),
        Case(
            "redirect-long",
            _redirect(lambda p: f"{p.base}/nowhere/" + "a" * 20_000),
            1,
            "characters]…",  # HTTP 404, with the 20 KB URL shortened in the one line
        ),
        Case("redirect-no-location", _serve(response_head("302 Found", length=0)), 1, "HTTP 302"),
        Case(
            "redirect-control-chars",
            _redirect(lambda p: f"{p.base}/x\x01y"),
            1,
            "/x\\x01y",  # escaped, never sent to the terminal raw
        ),
        Case(
            "redirect-unicode-host",
            _redirect(lambda p: "http://[::ffff:127.0.0.1]:1/\u00e9"),
            1,
            "network error",
        ),
    ]
