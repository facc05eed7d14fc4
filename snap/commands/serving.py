"""``snap serve`` and ``snap mcp``: the HTTP API and the agents' tools, over the same use cases."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from snap.cli_support import PRIVATE_HELP, F, allow_network_option, emit_json
from snap.config import Settings
from snap.errors import InputError


def request_timeout_option(help_text: str) -> Callable[[F], F]:
    """``--request-timeout``, as ``snap serve`` and ``snap mcp`` over HTTP both take it."""
    return click.option(
        "--request-timeout",
        type=click.FloatRange(min=0, min_open=True, max=24 * 3600),
        default=60.0,
        show_default=True,
        help=help_text,
    )


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--allow-private",
    is_flag=True,
    default=None,
    help="Server-wide, never per request: " + PRIVATE_HELP,
)
@allow_network_option
@request_timeout_option("Seconds a request may take before it is answered 504.")
@click.option(
    "--header-timeout",
    type=click.FloatRange(min=0, min_open=True, max=3600),
    default=10.0,
    show_default=True,
    help="Seconds a request's line and headers may take before the connection is dropped.",
)
@click.option(
    "--max-citations",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Citations one POST /v1/verify may carry (more is answered 413).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes sharing the port (uvicorn's supervisor restarts one that dies).",
)
@click.option(
    "--checkpoint-interval",
    type=click.FloatRange(min=0, max=24 * 3600),
    default=30.0,
    show_default=True,
    help="Seconds between the log's checkpoints (signed, timestamped) after requests that"
    " recorded anything: a burst makes one; one more at shutdown.",
)
@click.option("--access-log", is_flag=True, help="Log every request (uvicorn's access log).")
@click.option("--print-openapi", is_flag=True, help="Print the OpenAPI document and exit.")
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    allow_private: bool | None,
    allow_networks: Any,
    request_timeout: float,
    header_timeout: float,
    max_citations: int,
    workers: int,
    checkpoint_interval: float,
    access_log: bool,
    print_openapi: bool,
) -> None:
    """Serve the HTTP API (verify, captures, snapshots, audit, reverify, metrics).

    Bearer tokens come from SNAP_API_TOKENS (comma-separated); with none set, the server
    listens only on a loopback address and asks for no token.
    """
    from snap.service.app import openapi_document

    if print_openapi:
        emit_json(openapi_document())
        return
    from records.inputs.reader import max_input_bytes
    from snap.service import serving
    from snap.service.app import ServiceConfig, create_app
    from snap.service.auth import check_bind, parse_tokens

    tokens = parse_tokens(os.environ.get("SNAP_API_TOKENS"))
    check_bind(host, tokens)
    settings: Settings = ctx.obj
    if allow_private is not None:
        settings = settings.with_overrides(allow_private=allow_private)
    if allow_networks is not None:
        settings = settings.with_overrides(allow_networks=allow_networks)
    config = ServiceConfig(
        settings, tokens, max_input_bytes(), request_timeout, max_citations, checkpoint_interval
    )
    from records.workspace import Workspace

    opened = Workspace.open(settings)  # a bad store or database is one line, before binding
    how = serving.Listen(
        host.strip("[]"), port, access_log, header_timeout, int(request_timeout) + 1
    )
    if workers == 1:
        serving.run(create_app(config, workspace=opened), how)
        return
    opened.close()  # each worker process opens its own
    import functools

    serving.run_workers(functools.partial(create_app, config), how, workers=workers)


@click.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for desktop and CLI agents; http for Streamable HTTP at /mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address (http only).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@request_timeout_option("Seconds an HTTP request may take before it is answered 504.")
@click.pass_context
def mcp(ctx: click.Context, transport: str, host: str, port: int, request_timeout: float) -> None:
    """Serve snap's tools to AI agents over MCP (verify_quote, verify_answer, capture, audit,
    show_text).

    Over http, the same bearer tokens (SNAP_API_TOKENS) and limits as snap serve; the
    capture allow-list comes from settings (SNAP_ALLOW_PRIVATE, SNAP_ALLOW_NETWORKS).
    """
    from records.inputs.reader import max_input_bytes
    from records.workspace import Workspace
    from snap.service.auth import check_bind, is_loopback_host, parse_tokens

    tokens = parse_tokens(os.environ.get("SNAP_API_TOKENS")) if transport == "http" else ()
    if transport == "http":
        check_bind(host, tokens)
    try:
        from snap.mcp import build_server, http_app
    except ImportError as error:  # pragma: no cover - the SDK is a dependency
        raise InputError(f"snap mcp needs the MCP SDK: pip install 'mcp' ({error})") from None
    settings: Settings = ctx.obj
    opened = Workspace.open(settings)  # a bad store or database is one line, before serving
    from records.attest.schedule import CheckpointSchedule

    checkpoints = CheckpointSchedule(opened, MCP_CHECKPOINT_INTERVAL)
    try:
        server = build_server(
            opened,
            host=host,
            port=port,
            loopback=is_loopback_host(host),
            checkpoints=checkpoints,
        )
        if transport == "stdio":
            server.run("stdio")
            return
        from snap.service import serving

        app = http_app(server, tokens, max_body=max_input_bytes(), timeout=request_timeout)
        how = serving.Listen(
            host=host.strip("[]"),
            port=port,
            access_log=False,
            header_timeout=10.0,
            graceful_shutdown=int(request_timeout) + 1,
        )
        serving.run(app, how)
    finally:
        checkpoints.close()  # the last checkpoint of what the tools recorded
        opened.close()


MCP_CHECKPOINT_INTERVAL = 30.0  # as snap serve's default --checkpoint-interval
