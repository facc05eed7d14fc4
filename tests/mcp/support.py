"""What the MCP tests share: a loopback page, a home for snap, and the tools' calls."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import jsonschema
from mcp import ClientSession
from mcp.types import CallToolResult

PAGE = (
    "<html><head><title>Caching</title></head><body><article><p>A cache hit ratio of 90 "
    "percent means the origin serves only 1 request in 10. Raise the ratio to 99 percent and "
    "the origin serves 1 request in 100.</p>"
    + "".join(
        f"<p>Section {n}: a purge after every deploy empties the cache, and every request"
        f" goes to the origin until the cache is warm again.</p>"
        for n in range(1, 12)
    )
    + "</article></body></html>"
)
FOUND = "the origin serves only 1 request in 10"
CHANGED = "Raise the ratio to 99 percent and the origin serves 1 request in 1000"
TOOLS = {"verify_quote", "verify_answer", "capture", "audit", "show_text"}


def snap_env(home: Path, **extra: str) -> dict[str, str]:
    """snap's environment: its own home, loopback 127.0.0.1 allowed, nothing else."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAP_")}
    env |= {"SNAP_HOME": str(home), "SNAP_ALLOW_NETWORKS": "127.0.0.1/32"} | extra
    return env


def snap_command() -> tuple[str, list[str]]:
    return sys.executable, ["-m", "snap"]


def structured(schema: dict[str, Any], result: CallToolResult) -> dict[str, Any]:
    """The tool's document, checked against the output schema it declared."""
    assert not result.isError, result
    assert result.structuredContent is not None, result
    document: dict[str, Any] = result.structuredContent
    jsonschema.validate(document, schema)
    assert json.loads(result.content[0].text) == document  # type: ignore[union-attr]
    return document


async def exercise_every_tool(session: ClientSession, page_url: str, refused_url: str) -> None:
    """List the tools, check their schemas, and call each one on the captured page."""
    listed = (await session.list_tools()).tools
    assert {tool.name for tool in listed} == TOOLS
    for tool in listed:
        assert tool.inputSchema["type"] == "object", tool.name
        assert tool.outputSchema is not None, tool.name
        assert tool.outputSchema["type"] == "object", tool.name
        assert tool.description
    schemas = {tool.name: tool for tool in listed}
    out = {tool.name: tool.outputSchema or {} for tool in listed}
    assert schemas["verify_quote"].inputSchema["required"] == ["quote"]
    assert "closest" in schemas["verify_quote"].outputSchema["properties"]  # type: ignore[index]

    captured = structured(out["capture"], await session.call_tool("capture", {"url": page_url}))
    snapshot_id = captured["snapshotId"]
    assert snapshot_id.startswith("sha256:")

    found = structured(
        out["verify_quote"],
        await session.call_tool("verify_quote", {"quote": FOUND, "url": page_url}),
    )
    assert found["status"] == "quote_found"
    assert found["quote"]["exact"] == FOUND
    assert set(found["offsets"]) >= {"codepoint", "utf16", "utf8"}

    changed = structured(
        out["verify_quote"],
        await session.call_tool("verify_quote", {"quote": CHANGED, "snapshot_id": snapshot_id}),
    )
    assert changed["status"] == "not_found", changed
    assert changed["closest"]["text"].endswith("1 request in 100")

    unknown = structured(
        out["verify_quote"],
        await session.call_tool(
            "verify_quote", {"quote": FOUND, "snapshot_id": "sha256:" + "0" * 64}
        ),
    )
    assert unknown["status"] == "unknown_snapshot"

    answer = {
        "claims": [
            {"text": "A tenth reaches the origin.", "snapshotId": snapshot_id, "quote": FOUND},
            {"text": "One in a thousand.", "snapshotId": snapshot_id, "quote": CHANGED},
        ]
    }
    verified = structured(
        out["verify_answer"], await session.call_tool("verify_answer", {"response": answer})
    )
    assert [r["status"] for r in verified["results"]] == ["quote_found", "not_found"]
    assert verified["summary"]["shareVerified"] == 0.5

    as_text = await session.call_tool("verify_answer", {"response": json.dumps(answer)})
    assert structured(out["verify_answer"], as_text)["summary"] == verified["summary"]
    broken = await session.call_tool("verify_answer", {"response": "{not json"})
    assert broken.isError
    assert json.loads(broken.content[0].text)["exitCode"] == 2  # type: ignore[union-attr]
    both = await session.call_tool(
        "verify_quote", {"quote": FOUND, "url": page_url, "snapshot_id": snapshot_id}
    )
    assert json.loads(both.content[0].text)["type"] == "/problems/unusable-input"  # type: ignore[union-attr]

    audited = structured(
        out["audit"], await session.call_tool("audit", {"snapshot_id": snapshot_id})
    )
    assert json.dumps(audited).count("intact") >= 1

    shown = structured(
        out["show_text"], await session.call_tool("show_text", {"snapshot_id": snapshot_id})
    )
    assert FOUND in shown["text"]
    resource = await session.read_resource(f"snap://snapshots/{snapshot_id}/text")  # type: ignore[arg-type]
    assert FOUND in resource.contents[0].text  # type: ignore[union-attr]

    refused = await session.call_tool("capture", {"url": refused_url})
    assert refused.isError
    problem = json.loads(refused.content[0].text)  # type: ignore[union-attr]
    assert problem["type"] == "/problems/address-refused", problem
    assert problem["exitCode"] != 0

    local = await session.call_tool("capture", {"url": "file:///etc/passwd"})
    assert local.isError
    assert json.loads(local.content[0].text)["type"] == "/problems/unusable-input"  # type: ignore[union-attr]

    missing = await session.call_tool("show_text", {"snapshot_id": "sha256:" + "1" * 64})
    assert missing.isError
    assert json.loads(missing.content[0].text)["type"] == "/problems/not-found"  # type: ignore[union-attr]
