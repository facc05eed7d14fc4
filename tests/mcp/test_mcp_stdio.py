"""``snap mcp`` over stdio, driven by the MCP SDK's own client, on a captured loopback page."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.http_fixtures import LoopbackServer
from tests.mcp.support import PAGE, exercise_every_tool, snap_command, snap_env


def test_every_tool_over_stdio(tmp_path: Path) -> None:
    command, args = snap_command()
    with LoopbackServer() as pages:
        pages.route("/cache.html", body=PAGE.encode())
        parameters = StdioServerParameters(
            command=command, args=[*args, "mcp"], env=snap_env(tmp_path / "home")
        )

        async def session() -> None:
            async with (
                stdio_client(parameters) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                await exercise_every_tool(
                    client,
                    pages.url("/cache.html"),
                    pages.url("/cache.html", host="127.0.0.2"),
                )

        asyncio.run(asyncio.wait_for(session(), 120))
