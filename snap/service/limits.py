"""The request limits of ``snap serve``, as one pure ASGI middleware around the whole app.

- Admission: the request head is checked first (the bearer token, by ``admit``), so a client
  without a token never has a body byte read: it is answered 401 and the connection closed.
- Size: the body is read here, up to the input reader's limit (``SNAP_MAX_INPUT_BYTES``),
  before any route sees it; one byte more answers 413 at once (a ``Content-Length`` over the
  limit is refused before a byte is read). The route then gets the body replayed.
- Time: the app runs as a task of its own; past the time limit the client gets a 504 problem.
  Work already handed to a thread is not killed: it calls the request's ``Deadline`` between
  citations (or snapshot groups), which raises once the 504 went out, so the thread stops
  there; what a reverify finished before is recorded (as after a CLI run killed between
  groups), a verify records nothing.
- Metrics: every answer is counted by route template and status, with its latency.

Pure ASGI, not Starlette's BaseHTTPMiddleware, so the timeout can answer while the endpoint's
task is still running and the body is never buffered twice.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from snap.errors import InputTooLarge
from snap.service.metrics import UNMATCHED, Metrics
from snap.service.problems import MEDIA_TYPE, TIMEOUT, problem, problem_of

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
DEADLINE_KEY = "snap.deadline"  # where the request's Deadline is in the ASGI scope
CLOSE = (b"connection", b"close")


@dataclass(frozen=True)
class Refusal:
    """A request refused from its head alone (no token): the problem and its headers."""

    document: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


Admit = Callable[[Scope], Refusal | None]


class DeadlinePassed(Exception):
    """Raised in a worker thread at a checkpoint after its request was answered 504."""


class Deadline:
    """One request's time limit, shared by the event loop and the thread doing its work."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.expired = threading.Event()

    def left(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def checkpoint(self) -> None:
        """Stop the work (raise) once the request was answered 504. Only the event counts,
        not the clock, so a thread never stops before the 504 went out (it would otherwise
        answer first, with an error of its own)."""
        if self.expired.is_set():
            raise DeadlinePassed


def deadline_of(scope: Scope) -> Deadline:
    """The request's deadline; one without a time limit for an app called without Limits."""
    deadline: Deadline | None = scope.get(DEADLINE_KEY)
    return deadline if deadline is not None else Deadline(float("inf"))


def too_large(limit: int) -> InputTooLarge:
    return InputTooLarge(
        f"request body: larger than the input limit of {limit} bytes (SNAP_MAX_INPUT_BYTES)"
    )


def problem_bytes(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


async def send_problem(
    send: Send, document: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = problem_bytes(document)
    headers = [(b"content-type", MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode())]
    headers += extra or []
    await send({"type": "http.response.start", "status": document["status"], "headers": headers})
    await send({"type": "http.response.body", "body": body})


def declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def has_body(scope: Scope) -> bool:
    """Whether a body may follow the head (a length other than 0, or chunked)."""
    for name, value in scope.get("headers", ()):
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False


def route_template(scope: Scope) -> str:
    """The template of the route a request was for (``/v1/verify``). A request refused here,
    before the router saw it (too large, no token, too slow to send), is labelled by the route
    its path matches, as the router would have; ``unmatched`` is only a path no route has."""
    from starlette.routing import Match

    route = scope.get("route")
    if route is None:
        routes = getattr(getattr(scope.get("app"), "router", None), "routes", ())
        route = next((r for r in routes if r.matches(scope)[0] is not Match.NONE), None)
    return getattr(route, "path", None) or UNMATCHED


class Limits:
    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body: int,
        timeout: float,
        metrics: Metrics,
        admit: Admit | None = None,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.timeout = timeout
        self.metrics = metrics
        self.admit = admit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        answer = _Answer(send)
        try:
            await self.limited(scope, receive, answer)
        finally:
            status = answer.status or 500
            self.metrics.observe_request(
                route_template(scope),
                scope.get("method", ""),
                status,
                time.perf_counter() - started,
            )

    async def limited(self, scope: Scope, receive: Receive, answer: _Answer) -> None:
        # Unread body bytes would follow an early answer: close the connection after it.
        unread = [CLOSE] if has_body(scope) else []
        refusal = self.admit(scope) if self.admit is not None else None
        if refusal is not None:
            extra = [(k.lower().encode(), v.encode()) for k, v in refusal.headers.items()]
            await answer.problem(refusal.document, extra + unread)
            return
        deadline = Deadline(self.timeout)
        scope[DEADLINE_KEY] = deadline
        try:
            body = await asyncio.wait_for(self.read_body(scope, receive), self.timeout)
        except TimeoutError:
            deadline.expired.set()
            await answer.problem(problem(TIMEOUT, self.timeout_line()), unread)
            return
        except InputTooLarge as error:
            await answer.problem(problem_of(error), unread)
            return
        if body is None:  # the client went away
            return
        replay = _Replay(body, receive)
        task = asyncio.ensure_future(self.app(scope, replay, answer.send))
        done, _ = await asyncio.wait({task}, timeout=deadline.left())
        if task in done:
            task.result()  # an exception goes on to the app's error handler (a 500 problem)
            return
        deadline.expired.set()  # the thread doing the work stops at its next checkpoint
        task.add_done_callback(_forget)
        task.cancel()
        await answer.problem(problem(TIMEOUT, self.timeout_line()))

    def timeout_line(self) -> str:
        return (
            f"the request took longer than {self.timeout:g} s (snap serve --request-timeout);"
            " its work was stopped (a reverify keeps the snapshot groups it finished)"
        )

    async def read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        declared = declared_length(scope)
        if declared is not None and declared > self.max_body:
            raise too_large(self.max_body)
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > self.max_body:
                raise too_large(self.max_body)
            if not message.get("more_body", False):
                return bytes(body)


def _forget(task: asyncio.Future[None]) -> None:
    """A timed-out task's outcome has nobody to go to; read it so asyncio does not warn."""
    if not task.cancelled():
        task.exception()


class _Replay:
    """The body read by the middleware, given to the app as one message; then the real
    ``receive`` (which reports a disconnect)."""

    def __init__(self, body: bytes, receive: Receive) -> None:
        self.body: bytes | None = body
        self.receive = receive

    async def __call__(self) -> Message:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        return await self.receive()


class _Answer:
    """The response side: remembers the status, and drops whatever a timed-out app still
    tries to send after the 504 went out."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.status: int | None = None
        self.closed = False

    async def send(self, message: Message) -> None:
        if self.closed:
            return
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        await self._send(message)

    async def problem(
        self, document: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        if self.status is not None:  # the response had begun: it can only be cut short
            self.closed = True
            return
        self.status = int(document["status"])
        self.closed = True
        await send_problem(self._send, document, extra)
