"""``snap mcp --transport http``: the SDK's Streamable HTTP client, with and without a token."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.http_fixtures import LoopbackServer
from tests.mcp.support import PAGE, TOOLS, exercise_every_tool, snap_command, snap_env

TOKEN = "t" * 32


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def snap_mcp_http(home: Path, **env: str) -> Iterator[str]:
    """``snap mcp --transport http`` on 127.0.0.1; yields its /mcp URL, stopped after."""
    port = free_port()
    command, args = snap_command()
    log = home.parent / f"mcp-{port}.log"
    with log.open("wb") as written:
        process = subprocess.Popen(
            [command, *args, "mcp", "--transport", "http", "--port", str(port)],
            env=snap_env(home, **env),
            stdout=subprocess.DEVNULL,
            stderr=written,
        )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def with_session(url: str, headers: dict[str, str], pages: LoopbackServer) -> set[str]:
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        await exercise_every_tool(
            client, pages.url("/cache.html"), pages.url("/cache.html", host="127.0.0.2")
        )
        return {tool.name for tool in (await client.list_tools()).tools}


def test_every_tool_over_http_without_tokens(tmp_path: Path) -> None:
    with LoopbackServer() as pages, snap_mcp_http(tmp_path / "home") as url:
        pages.route("/cache.html", body=PAGE.encode())
        names = asyncio.run(asyncio.wait_for(with_session(url, {}, pages), 120))
    assert names == TOOLS


def test_tokens_guard_the_http_transport(tmp_path: Path) -> None:
    with (
        LoopbackServer() as pages,
        snap_mcp_http(tmp_path / "home", SNAP_API_TOKENS=TOKEN) as url,
    ):
        pages.route("/cache.html", body=PAGE.encode())
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        accept = {"Accept": "application/json, text/event-stream"}
        refused = httpx.post(url, json=initialize, headers=accept, timeout=10)
        wrong = httpx.post(
            url, json=initialize, headers=accept | {"Authorization": "Bearer " + "x" * 32}
        )
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        names = asyncio.run(asyncio.wait_for(with_session(url, bearer, pages), 120))
    assert refused.status_code == 401
    assert refused.json()["type"] == "/problems/unauthorized"
    assert wrong.status_code == 401
    assert names == TOOLS
