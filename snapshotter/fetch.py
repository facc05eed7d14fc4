"""Download a source (or copy a local file) into a temporary file, with its provenance.

The body is streamed to disk while it is hashed, so no body is ever held whole in memory, and
the size cap is enforced on the decoded bytes as they are produced, so a gzip bomb is refused
after at most ``max_bytes`` of output.  Every hop of a redirect chain passes the
request-forgery guard, and the connection goes to the exact address the guard checked while
the request still carries the real host name (Host header, TLS SNI, certificate check).

Ownership: ``fetch`` returns a ``Fetched`` whose body belongs to the caller: held in memory
when it is at most ``SPOOL_BYTES`` (most pages: no file is made, written, read back and removed
for them), else in a temporary file; ``Fetched.path`` writes a body held in memory to a
temporary file when a caller needs one. Call ``Fetched.cleanup()`` when done, or use ``with
fetching(...) as fetched:``. On failure nothing is left behind.

What is stored: the *decoded* body (after gzip/deflate Content-Encoding), because that is the
representation of the resource; the transfer encoding a server picked is not part of it.  Its
SHA-256 is the snapshot id.  Beside it, ``Fetched.head`` keeps every HTTP exchange of the capture
(redirect hops, then the final one) as sent and received: the request line and headers snap
sent, byte for byte, and the status line and all response headers in order, duplicates kept.
That is what a WARC export needs and what can never be recovered later; the export marks the
decoding (see ``records.exports.http_head``, which reads this format).
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import http.client
import itertools
import json
import os
import socket
import ssl
import stat
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote, unquote, urljoin, urlsplit

from snapshotter.errors import AddressRefused, FetchError, InputError, TooLarge, shown
from snapshotter.guard import check_url_scheme, resolve_checked
from snapshotter.head_format import HEAD_FORMAT
from snapshotter.options import DEFAULT_USER_AGENT as DEFAULT_USER_AGENT
from snapshotter.options import TOTAL_TIMEOUT_FACTOR as TOTAL_TIMEOUT_FACTOR
from snapshotter.options import FetchOptions as FetchOptions
from snapshotter.tempfiles import create_locked, discard, remove_stale_temp_files
from snapshotter.times import now, precise_time
from snapshotter.version import __version__
from snapshotter.weburl import InvalidURL, WebURL, has_web_scheme, web_url

CHUNK_SIZE = 64 * 1024
SPOOL_BYTES = 256 * 1024  # a body up to this size is held in memory, never in a temporary file
INFLATE_STEP = 1024 * 1024  # most decoded bytes produced (and held in memory) at once
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_HEAD_BYTES = 256 * 1024  # of a request head kept (snap's own heads are a few hundred bytes)
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


@dataclass(frozen=True)
class Fetched:
    """A captured body that the caller owns (in memory, or in a temporary file), and how it
    was captured."""

    file: Path | None  # the temporary file holding the body; None: the body is ``body``
    raw_digest: str  # "sha256:<hex>" of the body
    size: int
    url: str
    final_url: str
    status: int | None  # None for a local file
    declared_content_type: str | None
    provenance: dict[str, object] = field(default_factory=dict)
    lock: BinaryIO | None = field(default=None, compare=False, repr=False)
    # The HTTP exchanges of the capture as a ``headers`` blob (see ``head_document``); None
    # for a local file, which has no HTTP head.
    head: bytes | None = field(default=None, compare=False, repr=False)
    body: bytes | None = field(default=None, compare=False, repr=False)  # held in memory
    workdir: Path | None = field(default=None, compare=False, repr=False)

    @property
    def source(self) -> Path | bytes:
        """The body as extraction and the store read it: its bytes, or its file."""
        return self.body if self.body is not None else self.path

    @property
    def path(self) -> Path:
        """The body's temporary file. A body held in memory is written to one (locked like
        every capture file, deleted by ``cleanup``) the first time a caller asks."""
        if self.file is not None:
            return self.file
        written: tuple[Path, BinaryIO] | None = self.__dict__.get("_written")
        if written is None:
            assert self.body is not None
            path, handle = create_locked(self.workdir)
            try:
                handle.write(self.body)
                handle.flush()
            except BaseException:
                _discard(path)
                handle.close()
                raise
            written = (path, handle)
            object.__setattr__(self, "_written", written)  # frozen: set once, by this property
        return written[0]

    def read_bytes(self) -> bytes:
        return self.body if self.body is not None else self.path.read_bytes()

    def cleanup(self) -> None:
        """Delete the temporary file, then drop its lock (safe to call twice)."""
        written: tuple[Path, BinaryIO] | None = self.__dict__.get("_written")
        for path, lock in ((self.file, self.lock), written or (None, None)):
            if path is not None:
                _discard(path)
            if lock is not None:
                lock.close()


@contextmanager
def fetching(
    target: str, options: FetchOptions, *, workdir: Path | None = None, web_only: bool = False
) -> Iterator[Fetched]:
    """``fetch`` as a context manager that deletes the temporary file on exit."""
    fetched = fetch(target, options, workdir=workdir, web_only=web_only)
    try:
        yield fetched
    finally:
        fetched.cleanup()


def fetch(
    target: str, options: FetchOptions, *, workdir: Path | None = None, web_only: bool = False
) -> Fetched:
    """Fetch an http(s) URL, or copy a local path / ``file://`` URL, into a temporary file.

    A target starting with ``http:`` or ``https:`` is always a URL, never a path, and must
    pass ``snapshotter.weburl.web_url``; with ``web_only`` (the HTTP service, model output,
    the workers) every target must, so no caller of those can make snap read a local file.

    Raises FetchError (AddressRefused, TooLarge) for a failed capture, with ``url``,
    ``final_url``, ``status`` and ``provenance`` filled as far as known; InputError (exit 2)
    for a URL that is not one snap fetches and for a local file that does not exist.
    """
    if not target.strip():
        raise InputError("nothing to fetch: give an http(s) URL or a path to a file")
    try:
        target.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("the URL or path is not valid UTF-8 text") from None
    if web_only or has_web_scheme(target):
        checked = web_url(target)
        _sweep_once(workdir)
        return _HttpCapture(checked, options, workdir).run()
    local = _local_path(target)
    _sweep_once(workdir)
    return _copy_local(local, options, workdir)


def fetch_http(url: str, options: FetchOptions, *, workdir: Path | None = None) -> Fetched:
    """``fetch`` of a URL that is only ever fetched over http(s), never read from a local path
    of the same spelling: a subresource a page names (``snapshotter.browser``). The URL must
    pass ``snapshotter.weburl.web_url`` as any other: InvalidURL (exit 2) otherwise."""
    checked = web_url(url)
    _sweep_once(workdir)
    return _HttpCapture(checked, options, workdir).run()


_swept: set[Path | None] = set()


def _sweep_once(workdir: Path | None) -> None:
    """Remove what killed captures left behind, once per process and folder."""
    if workdir not in _swept:
        _swept.add(workdir)
        remove_stale_temp_files(workdir)


# --- local files -------------------------------------------------------------------------


def _local_path(target: str) -> Path:
    """The local file ``target`` names: a ``file:`` URL or a path.  Any other ``scheme:``
    (``ftp://…``) is refused as a URL snap does not fetch, unless a file of that name exists."""
    parts = urlsplit(target)
    if parts.scheme.lower() == "file":
        if parts.netloc not in ("", "localhost"):
            raise InputError(f"file URLs must name a local file, got host {parts.netloc!r}")
        return Path(unquote(parts.path))
    if len(parts.scheme) > 1 and not _exists(target):
        web_url(target)  # raises InvalidURL: only http and https URLs can be fetched
    return Path(target)


def _exists(target: str) -> bool:
    """Whether a path exists; a string no file can be named (too long, NUL) names none."""
    try:
        return Path(target).exists()
    except (OSError, ValueError):
        return False


def _open_regular(source: Path) -> tuple[BinaryIO, os.stat_result]:
    """Open a regular file for reading; a FIFO, device, socket or folder is refused.

    Opened non-blocking first so that a FIFO with no writer cannot block the open, then
    checked with ``fstat`` on the very file opened (no window to swap it for another).
    """
    try:
        descriptor = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InputError(f"no such file: {shown(source)}") from None
    except OSError as error:
        raise InputError(f"cannot read {shown(source)}: {error.strerror}") from None
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise InputError(
            f"{shown(source)} is not a regular file (a folder, FIFO, socket or device);"
            " snap captures only regular files"
        )
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb"), info


def _copy_local(source: Path, options: FetchOptions, workdir: Path | None) -> Fetched:
    """Copy the file so the snapshot is of the bytes as they were now, even if it changes."""
    try:
        handle, info = _open_regular(source)
    except ValueError:
        raise InputError("the path contains a NUL character") from None
    absolute = source.resolve()
    provenance: dict[str, object] = {
        "fetchedAt": _now(),
        "source": "file",
        "path": str(absolute),
        "mtime": precise_time(datetime.fromtimestamp(info.st_mtime, UTC)),
        "snapVersion": __version__,
    }
    uri = absolute.as_uri()
    sink = _BodySink(options.max_bytes, workdir)
    try:
        with handle:
            while chunk := handle.read(CHUNK_SIZE):
                sink.write(chunk)
    except TooLarge as error:
        sink.discard()
        raise TooLarge(str(error), url=uri, final_url=uri, provenance=provenance) from None
    except OSError as error:
        sink.discard()
        raise InputError(f"cannot read {shown(source)}: {error.strerror}") from None
    return sink.finish(
        url=uri, final_url=uri, status=None, content_type=None, provenance=provenance
    )


# --- the body sink -----------------------------------------------------------------------


class _BodySink:
    """Where a body goes as it arrives: hashed, refused past the cap, held in memory up to
    ``SPOOL_BYTES`` and moved to a temporary file beyond.

    The file stays locked (see ``snapshotter.tempfiles``) until its ``Fetched`` is cleaned
    up, so another process sweeping stale capture files never deletes it under us.
    """

    def __init__(self, max_bytes: int, workdir: Path | None) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.workdir = workdir
        self._hash = hashlib.sha256()
        self._memory: bytearray | None = bytearray()
        self.path: Path | None = None
        self._file: BinaryIO | None = None

    @property
    def room(self) -> int:
        return self.max_bytes - self.size

    def write(self, data: bytes) -> None:
        if len(data) > self.room:
            raise TooLarge(f"the body is larger than the {self.max_bytes}-byte cap")
        if self._memory is not None and len(self._memory) + len(data) > SPOOL_BYTES:
            self._spill(self._memory)
        if self._memory is not None:
            self._memory += data
        else:
            assert self._file is not None
            self._file.write(data)
        self._hash.update(data)
        self.size += len(data)

    def _spill(self, held: bytearray) -> None:
        self.path, self._file = create_locked(self.workdir)
        self._memory = None
        self._file.write(held)

    def discard(self) -> None:
        self._memory = None
        if self.path is not None:
            _discard(self.path)
        if self._file is not None:
            self._file.close()

    def finish(
        self,
        *,
        url: str,
        final_url: str,
        status: int | None,
        content_type: str | None,
        provenance: dict[str, object],
        head: bytes | None = None,
    ) -> Fetched:
        if self._file is not None:
            self._file.flush()
        return Fetched(
            file=self.path,
            body=bytes(self._memory) if self._memory is not None else None,
            workdir=self.workdir,
            raw_digest=f"sha256:{self._hash.hexdigest()}",
            size=self.size,
            url=url,
            final_url=final_url,
            status=status,
            declared_content_type=content_type,
            provenance=provenance,
            lock=self._file,
            head=head,
        )


def _discard(path: Path) -> None:
    """Delete a temporary body; a separate function so tests can observe what is discarded."""
    discard(path)


# --- content decoding --------------------------------------------------------------------


class _Decoder:
    """Undo gzip/deflate Content-Encoding incrementally, never producing more than asked for.

    ``zlib``'s ``max_length`` bounds each output, so a bomb costs at most the cap in output
    before it is refused; the unconsumed input waits in ``unconsumed_tail``.
    """

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._stream = self._new_stream()
        self._started = False

    def _new_stream(self, wbits: int | None = None) -> zlib._Decompress | None:
        if self.encoding in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        if self.encoding == "deflate":
            return zlib.decompressobj(zlib.MAX_WBITS if wbits is None else wbits)
        return None

    def feed(self, chunk: bytes, write: Callable[[bytes], None], room: Callable[[], int]) -> None:
        if self._stream is None:
            write(chunk)
            return
        pending, more = chunk, True
        while pending or more:
            pending, more = self._inflate(pending, write, room)

    def _inflate(
        self, data: bytes, write: Callable[[bytes], None], room: Callable[[], int]
    ) -> tuple[bytes, bool]:
        """Inflate part of ``data``: return the input still to inflate, and whether the
        stream may hold more output even without more input."""
        assert self._stream is not None
        limit = min(room() + 1, INFLATE_STEP)
        try:
            output = self._stream.decompress(data, limit)
        except zlib.error:
            if self.encoding == "deflate" and not self._started:
                # Some servers send raw deflate without the zlib header the RFC asks for.
                self._stream = self._new_stream(-zlib.MAX_WBITS)
                self._started = True
                return data, False
            raise
        self._started = True
        write(output)
        stream = self._stream
        if stream.eof and stream.unused_data.strip(b"\0"):
            self._stream = self._new_stream()  # a further gzip member
            return stream.unused_data, False
        return stream.unconsumed_tail, len(output) == limit and not stream.eof

    def close(self) -> None:
        if self._stream is not None and self._started and not self._stream.eof:
            raise zlib.error("the compressed body ends before its end marker")


class _BrotliDecoder:
    """Undo ``br`` Content-Encoding with the same bound as ``_Decoder``: brotli's
    ``output_buffer_limit`` caps each output, and input is only given again once the
    decompressor has handed out everything it holds.  A brotli error is raised as
    ``zlib.error``, the one "the body does not decode" error of this module."""

    def __init__(self) -> None:
        import brotli  # only bodies that are brotli-encoded load it

        self._error = brotli.error
        self._stream = brotli.Decompressor()
        self._started = False

    def feed(self, chunk: bytes, write: Callable[[bytes], None], room: Callable[[], int]) -> None:
        try:
            write(self._stream.process(chunk, output_buffer_limit=self._limit(room)))
            while not self._stream.can_accept_more_data():
                write(self._stream.process(b"", output_buffer_limit=self._limit(room)))
        except self._error as error:
            raise zlib.error(f"brotli: {error}") from None
        self._started = True

    @staticmethod
    def _limit(room: Callable[[], int]) -> int:
        return min(room() + 1, INFLATE_STEP)

    def close(self) -> None:
        if self._started and not self._stream.is_finished():
            raise zlib.error("the compressed body ends before its end marker")


def _new_decoder(encoding: str) -> _Decoder | _BrotliDecoder:
    return _BrotliDecoder() if encoding == "br" else _Decoder(encoding)


# What a fetch accepts: what it asks for (Accept-Encoding: gzip, deflate). A server that sends
# br unasked is refused, as before. A body recorded by a browser-based crawler may also be br.
SUPPORTED_CONTENT_ENCODINGS = ("identity", "gzip", "x-gzip", "deflate")
SPOOLED_CONTENT_ENCODINGS = (*SUPPORTED_CONTENT_ENCODINGS, "br")


def spool_body(
    chunks: Iterable[bytes],
    *,
    content_encoding: str,
    max_bytes: int,
    url: str,
    status: int | None,
    content_type: str | None,
    provenance: dict[str, object],
    workdir: Path | None = None,
) -> Fetched:
    """A body that arrived by other means than a fetch (a record of a web archive), decoded
    and written to a temporary file exactly as a fetched body is: Content-Encoding undone by
    the same bounded decoder, the same size cap on the decoded bytes, the same hashing.

    Raises FetchError for an encoding snap does not decode or a body that does not decode,
    TooLarge past the cap; any error of ``chunks`` itself passes through. Nothing is left on
    disk when it raises.
    """
    encoding = content_encoding.strip().lower() or "identity"
    if encoding not in SPOOLED_CONTENT_ENCODINGS:
        raise FetchError(f"unsupported Content-Encoding {shown(encoding)!r}", url=url)
    decoder = _new_decoder(encoding)
    sink = _BodySink(max_bytes, workdir)
    try:
        for chunk in chunks:
            decoder.feed(chunk, sink.write, lambda: sink.room)
        decoder.close()
    except zlib.error as error:
        sink.discard()
        raise FetchError(f"the body does not decode as {encoding}: {error}", url=url) from None
    except BaseException:
        sink.discard()
        raise
    return sink.finish(
        url=url, final_url=url, status=status, content_type=content_type, provenance=provenance
    )


# --- HTTP --------------------------------------------------------------------------------


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the address the guard checked; Host still names the real host."""

    def __init__(
        self, host: str, port: int, address: str, timeout: float, watchdog: _Watchdog
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address
        self.watchdog = watchdog
        self.peer: tuple[str, int] | None = None
        self.cert_sha256: str | None = None
        self.sent = bytearray()  # the request head exactly as written to the connection

    def send(self, data: Any) -> None:
        """Keep a copy of the request head (a GET has no body) before sending it."""
        if isinstance(data, bytes | bytearray) and len(self.sent) < MAX_HEAD_BYTES:
            self.sent += data[: MAX_HEAD_BYTES - len(self.sent)]
        super().send(data)

    def _open_socket(self) -> socket.socket:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.watchdog.watch(sock)
        name = sock.getpeername()
        self.peer = (str(name[0]), int(name[1]))
        return sock

    def connect(self) -> None:
        self.sock = self._open_socket()


class _PinnedHTTPSConnection(_PinnedHTTPConnection):
    """TLS to the checked address, with SNI and certificate checks against the real host."""

    default_port = http.client.HTTPS_PORT

    def __init__(
        self,
        host: str,
        port: int,
        address: str,
        timeout: float,
        watchdog: _Watchdog,
        context: ssl.SSLContext,
    ) -> None:
        super().__init__(host, port, address, timeout, watchdog)
        self.tls_context = context

    def connect(self) -> None:
        raw = self._open_socket()
        try:
            sock = self.tls_context.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise
        self.watchdog.watch(sock)
        certificate = sock.getpeercert(binary_form=True)
        if certificate:
            self.cert_sha256 = hashlib.sha256(certificate).hexdigest()
        self.sock = sock


class _Watchdog:
    """Ends the capture's connection when the deadline passes, whatever it is waiting for.

    Socket timeouts bound each wait, not their sum: a server that sends one header byte per
    second never lets a per-read timeout fire.  At the deadline the socket is shut down, which
    wakes any blocked connect, handshake or read.  ``expired`` must be checked after every read
    loop, because a shut-down socket reads as an ordinary end of stream.  The deadline is kept
    by the process's one ``_Deadlines`` thread, not a timer thread per capture: starting a
    thread per page cost a batch capture about a millisecond a page.
    """

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._stopped = False
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        _DEADLINES.add(time.monotonic() + max(seconds, 0.0), self)

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
            if self.expired:
                _shutdown(sock)

    def expire(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self.expired = True
            if self._socket is not None:
                _shutdown(self._socket)

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._socket = None


PRUNE_AT = 4096  # deadlines kept before those of finished captures are dropped


class _Deadlines:
    """The deadlines of every capture in the process, kept by one daemon thread."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, _Watchdog]] = []
        self._wake = threading.Condition()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, when: float, watchdog: _Watchdog) -> None:
        with self._wake:
            if len(self._due) >= PRUNE_AT:  # finished captures wait in the heap till their due
                self._due = [entry for entry in self._due if not entry[2].stopped]
                heapq.heapify(self._due)
            heapq.heappush(self._due, (when, next(self._order), watchdog))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="snap-fetch-deadlines", daemon=True
                )
                self._thread.start()
            if self._due[0][2] is watchdog:  # the thread sleeps till a later one: wake it
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._wake.wait(self._due[0][0] - time.monotonic() if self._due else None)
                _, _, watchdog = heapq.heappop(self._due)
            watchdog.expire()

    def forget(self) -> None:
        """After a fork: the child has no thread and none of the parent's captures."""
        self._due, self._thread = [], None
        self._wake = threading.Condition()


_DEADLINES = _Deadlines()
os.register_at_fork(after_in_child=_DEADLINES.forget)


def _shutdown(sock: socket.socket) -> None:
    """Shut the descriptor down directly (for TLS too: no TLS alert, no shared state)."""
    with contextlib.suppress(OSError):  # already closed or never connected
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _HttpCapture:
    """One fetch over http(s): the redirect loop, the body, and what is known so far."""

    def __init__(self, checked: WebURL, options: FetchOptions, workdir: Path | None) -> None:
        url = checked.text
        self.url = url
        self.current = url
        self.checked = checked  # the current URL as read alike by snap and browsers
        self.options = options
        self.workdir = workdir
        self.status: int | None = None
        self.redirects: list[dict[str, object]] = []
        self.exchanges: list[dict[str, object]] = []  # every hop's heads, for the headers blob
        self.provenance: dict[str, object] = {
            "fetchedAt": _now(),
            "userAgent": options.user_agent,
            "redirects": self.redirects,
            "snapVersion": __version__,
        }
        self.deadline = time.monotonic() + options.deadline_seconds
        self.watchdog = _Watchdog(options.deadline_seconds)
        self._socket: socket.socket | None = None  # kept: http.client drops it from the
        # connection once the response owns the stream, and reads need a shrinking timeout

    def run(self) -> Fetched:
        try:
            fetched = self._run()
        finally:
            self.watchdog.stop()
        return fetched

    def _run(self) -> Fetched:
        try:
            fetched = self._follow()
        except Exception as error:
            if self.watchdog.expired:  # whatever broke, it broke because time ran out
                raise self._failure(self._timeout_reason()) from None
            raise self._classified(error) from None
        if self.watchdog.expired:  # a shut-down socket reads as a normal end of the body
            fetched.cleanup()
            raise self._failure(self._timeout_reason())
        return fetched

    def _classified(self, error: Exception) -> Exception:
        """The failure as a FetchError with everything known so far; unknown errors as is."""
        if isinstance(error, FetchError):
            return type(error)(
                str(error),
                url=self.url,
                final_url=self.current,
                status=self.status,
                provenance=self.provenance,
            )
        if isinstance(error, ssl.SSLCertVerificationError):
            return self._failure(f"TLS certificate check failed: {error.verify_message}")
        if isinstance(error, TimeoutError):
            return self._failure(self._timeout_reason())
        if isinstance(error, (OSError, http.client.HTTPException, zlib.error)):
            reason = str(error) or type(error).__name__
            return self._failure(f"network error: {reason}"[:500])
        if isinstance(error, (ValueError, UnicodeError)):
            return self._failure(f"malformed response or URL: {error}"[:500])
        return error

    def _timeout_reason(self) -> str:
        if self.watchdog.expired or time.monotonic() >= self.deadline - 0.01:
            return (
                f"timed out: the whole download took over {self.options.deadline_seconds:g} s"
                " (the capture deadline)"
            )
        return f"timed out after {self.options.timeout:g} s"

    def _failure(self, reason: str) -> FetchError:
        return FetchError(
            f"could not fetch {shown(self.current)}: {reason}",
            url=self.url,
            final_url=self.current,
            status=self.status,
            provenance=self.provenance,
        )

    def _follow(self) -> Fetched:
        while True:
            connection, response = self._request(self.current)
            try:
                self.exchanges.append(_exchange(self.current, connection, response))
                location = self._redirect_target(response)
                if location is None:
                    return self._receive(response)
            finally:
                response.close()
                connection.close()
            if len(self.redirects) > self.options.max_redirects:
                raise FetchError(f"too many redirects (more than {self.options.max_redirects})")
            self.current = location
            self.status = None  # the status of the URL now being fetched is not known yet
            check_url_scheme(location)
            self.checked = _checked_redirect(location)

    def _request(self, url: str) -> tuple[_PinnedHTTPConnection, http.client.HTTPResponse]:
        connection = self._connect(self.checked)
        parts = urlsplit(url)
        target = quote(parts.path or "/", safe=_PATH_SAFE)
        if parts.query:
            target += "?" + quote(parts.query, safe=_PATH_SAFE + "?")
        headers = {
            "User-Agent": self.options.user_agent,
            "Accept": "text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.8",
            "Accept-Encoding": "gzip, deflate",
            "Connection": "close",
        }
        try:
            connection.request("GET", target, headers=headers)
            response = connection.getresponse()
        except BaseException:
            connection.close()
            raise
        self.status = response.status
        return connection, response

    def _connect(self, checked: WebURL) -> _PinnedHTTPConnection:
        """Connect to the host both snap and browsers read in the URL (``WebURL.host``)."""
        scheme, host, port = checked.scheme, checked.host, checked.port
        self.provenance.pop("ip", None)
        self.provenance.pop("tlsCertSha256", None)
        address = resolve_checked(
            host,
            port,
            allowed=self.options.allowed,
            timeout=self._remaining(self.options.deadline_seconds),
        )
        timeout = self._remaining(self.options.timeout)
        connection: _PinnedHTTPConnection
        if scheme == "https":
            connection = _PinnedHTTPSConnection(
                host, port, address, timeout, self.watchdog, self._tls_context()
            )
        else:
            connection = _PinnedHTTPConnection(host, port, address, timeout, self.watchdog)
        try:
            connection.connect()
        finally:
            self._record_peer(connection)
        self._socket = connection.sock
        return connection

    def _record_peer(self, connection: _PinnedHTTPConnection) -> None:
        if connection.peer is not None:
            self.provenance["ip"], self.provenance["port"] = connection.peer
        if connection.cert_sha256 is not None:
            self.provenance["tlsCertSha256"] = connection.cert_sha256

    def _tls_context(self) -> ssl.SSLContext:
        ca_file = self.options.ca_file
        return ssl.create_default_context(cafile=str(ca_file) if ca_file else None)

    def _remaining(self, limit: float) -> float:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        return min(limit, remaining)

    def _redirect_target(self, response: http.client.HTTPResponse) -> str | None:
        location = response.getheader("Location")
        if response.status not in REDIRECT_STATUSES or not location:
            return None
        try:
            absolute = urljoin(self.current, location.strip())
            urlsplit(absolute).port  # noqa: B018 - parses the host and port too
        except ValueError as error:
            shown = location.strip()[:200]
            raise FetchError(f"malformed redirect Location {shown!r}: {error}") from None
        hop: dict[str, object] = {
            "url": self.current,
            "status": response.status,
            "location": absolute,
        }
        self.redirects.append(hop)
        return absolute

    def _receive(self, response: http.client.HTTPResponse) -> Fetched:
        self.provenance["fetchedAt"] = _now()
        self.provenance["headers"] = _recorded_headers(response)
        if not 200 <= response.status < 300:
            raise FetchError(f"HTTP {response.status} {response.reason} from {shown(self.current)}")
        self._refuse_declared_oversize(response)
        decoder = _new_decoder(_content_encoding(response))
        sink = _BodySink(self.options.max_bytes, self.workdir)
        try:
            self._stream_body(response, decoder, sink)
        except BaseException:
            sink.discard()
            raise
        return sink.finish(
            url=self.url,
            final_url=self.current,
            status=response.status,
            content_type=response.getheader("Content-Type"),
            provenance=self.provenance,
            head=head_document(self.exchanges),
        )

    def _refuse_declared_oversize(self, response: http.client.HTTPResponse) -> None:
        declared = (response.getheader("Content-Length") or "").strip()
        cap = self.options.max_bytes
        if declared.isdigit() and int(declared) > cap:
            raise TooLarge(f"the body is {int(declared)} bytes, more than the {cap}-byte cap")

    def _stream_body(
        self,
        response: http.client.HTTPResponse,
        decoder: _Decoder | _BrotliDecoder,
        sink: _BodySink,
    ) -> None:
        received = 0
        while True:
            if response.isclosed():  # http.client closes it once the body is complete
                break
            self._set_read_timeout()
            chunk = response.read1(CHUNK_SIZE)
            if not chunk:
                break
            received += len(chunk)
            if received > self.options.max_bytes:
                raise TooLarge(f"the body is larger than the {self.options.max_bytes}-byte cap")
            decoder.feed(chunk, sink.write, lambda: sink.room)
        if response.length:  # read1 does not complain when the server hangs up early
            raise http.client.IncompleteRead(b"", response.length)
        decoder.close()

    def _set_read_timeout(self) -> None:
        """Shrink the socket timeout so that the whole download respects the deadline."""
        timeout = self._remaining(self.options.timeout)
        if self._socket is not None:
            self._socket.settimeout(timeout)


def _checked_redirect(location: str) -> WebURL:
    """A redirect target is held to the rules of a URL given by a user: a server must not
    reach, through a Location header, a host that a browser would read differently (refused
    as the guard refuses an address: the same every time, never tried again)."""
    try:
        return web_url(location)
    except InvalidURL as error:
        raise AddressRefused(
            f"refused to follow the redirect to {shown(location)}: {error.message}"
        ) from None


def _content_encoding(response: http.client.HTTPResponse) -> str:
    encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
    if encoding not in SUPPORTED_CONTENT_ENCODINGS:
        raise FetchError(f"unsupported Content-Encoding {encoding!r}")
    return encoding


def _exchange(
    url: str, connection: _PinnedHTTPConnection, response: http.client.HTTPResponse
) -> dict[str, object]:
    """One hop as it went over the wire: the peer it went to, the request head snap sent (parsed
    from the very bytes written) and the status line with every response header, in order,
    duplicates kept.

    http.client reads header bytes as ISO-8859-1, so each value maps back to its exact bytes."""
    lines = bytes(connection.sent).split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    method, _, rest = lines[0].partition(" ")
    target, _, version = rest.rpartition(" ")
    versions = {9: "HTTP/0.9", 10: "HTTP/1.0", 11: "HTTP/1.1"}
    peer = connection.peer
    return {
        "url": url,
        "ip": peer[0] if peer else None,
        "tlsCertSha256": connection.cert_sha256,
        "request": {
            "method": method,
            "target": target,
            "httpVersion": version,
            "headers": [list(line.split(": ", 1)) for line in lines[1:] if ": " in line],
        },
        "response": {
            "httpVersion": versions.get(response.version, "HTTP/1.1"),
            "status": response.status,
            "reason": response.reason,
            "headers": [[name, value] for name, value in response.msg.items()],
        },
    }


def head_document(exchanges: list[dict[str, object]]) -> bytes:
    """The ``headers`` blob: canonical JSON (sorted keys, no spaces), so the same heads always
    give the same digest."""
    document = {"format": HEAD_FORMAT, "exchanges": exchanges}
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def _recorded_headers(response: http.client.HTTPResponse) -> dict[str, str]:
    names = {
        "contentType": "Content-Type",
        "etag": "ETag",
        "lastModified": "Last-Modified",
        "date": "Date",
    }
    found = {key: response.getheader(header) for key, header in names.items()}
    return {key: value for key, value in found.items() if value is not None}


# --- time --------------------------------------------------------------------------------


def _now() -> str:
    return precise_time(now())


__all__ = [
    "DEFAULT_USER_AGENT",
    "FetchOptions",
    "Fetched",
    "fetch",
    "fetch_http",
    "fetching",
    "spool_body",
]
