"""``snap mcp``: snap's checks as tools for AI agents, on the official MCP Python SDK.

Each tool is a thin shell over the use case its ``snap`` command runs (``records.verify``,
``records.capture``, ``records.audit``, ``records.show``, the input reader in
``records.inputs``): it builds the same input, makes the same call and returns the same
``--json`` document, with a typed input and output schema for the agent. A use case that fails
answers an MCP tool error whose content is the problem document ``snap serve`` answers for the
same error (``snap.service.problems``), so an agent acts on the same ``type`` and ``exitCode``.

Capture goes through the service's guard: only absolute http(s) URLs, the server's allow-list
from settings (``--allow-private``, ``--allow-network``), never a tool argument.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from records.workspace import Workspace
from snap import __version__
from snap.config import settings_of
from snap.errors import InputError, SnapError, VerifierError
from snap.service.problems import INTERNAL, problem, problem_of
from snap.service.public import Redactor

INSTRUCTIONS = (
    "snap keeps write-once, SHA-256-addressed copies of web sources and checks that quoted "
    "words are really in them, character for character. Capture a URL, then verify quotes or "
    "a whole model answer against the stored copy; a quote that is not found comes with the "
    "closest passage of the source."
)
WEB_ONLY_LINE = (
    "only http and https URLs are captured over MCP: an agent never makes snap read a file on"
    " this machine"
)
TEXT_URI = "snap://snapshots/{snapshot_id}/text"

if TYPE_CHECKING:
    from records.attest.schedule import CheckpointSchedule
    from records.verify import VerifyReport


class Wire(BaseModel):
    """snap's JSON members as they are on every other edge (camelCase), extra members kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Span(Wire):
    start: int
    end: int


class Offsets(Wire):
    codepoint: Span | None = None
    utf16: Span | None = None
    utf8: Span | None = None


class StoredQuote(Wire):
    prefix: str
    exact: str
    suffix: str


class ClosestPassage(Wire):
    score: float
    text: str
    start: int
    end: int
    differences: list[list[int]]
    offsets: Offsets | None = None


class Seal(Wire):
    """The signature and trusted timestamp of the capture a check read, checked with its
    blobs; a seal that does not hold makes the check an integrity_failure."""

    intact: bool
    signed: bool
    stamped: bool
    signature: str = Field(description="valid (key …), not signed: why, or what is wrong")
    timestamp: str = Field(description="valid (time, TSA), no trusted timestamp: why, or …")
    problems: list[str] = Field(default_factory=list)


class QuoteResult(Wire):
    """One checked citation, as ``snap verify --json`` prints each result."""

    citationId: str
    status: str = Field(description="quote_found, not_found, unknown_snapshot, …")
    snapshotId: str | None = None
    url: str | None = None
    span: Span | None = Field(None, description="where the quote is, in code points")
    spanUtf16: Span | None = None
    quote: StoredQuote | None = Field(None, description="the stored span with its context")
    matches: int = 0
    offsets: Offsets | None = Field(None, description="code points, UTF-16 and UTF-8 bytes")
    closest: ClosestPassage | None = Field(None, description="on a fail: the nearest passage")
    reason: str | None = None
    seal: Seal | None = Field(
        None, description="the seal of the capture read: signature and trusted timestamp"
    )


class AnswerResult(Wire):
    results: list[QuoteResult]
    summary: dict[str, Any] = Field(
        description="total, quoteFound, byStatus and shareVerified (the verification rate)"
    )


class Position(BaseModel):
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    unit: str = Field("codepoint", pattern="^(codepoint|utf16)$")


def build_server(
    workspace: Workspace,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    loopback: bool = True,
    checkpoints: CheckpointSchedule | None = None,
) -> FastMCP:
    """The MCP server over one opened workspace (closed by the caller). ``checkpoints``: told
    after each tool that records captures or checks, as ``snap serve``'s routes tell theirs
    (records.attest.schedule)."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=loopback,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    server = SnapMCP(
        "snap",
        instructions=INSTRUCTIONS,
        host=host,
        port=port,
        stateless_http=True,
        json_response=True,
        transport_security=security,
    )
    server._mcp_server.version = __version__
    public = Redactor(settings_of(workspace))
    add_tools(server, workspace, public, checkpoints)
    add_resources(server, workspace)
    return server


class SnapMCP(FastMCP):
    """FastMCP whose tool errors carry snap's problem documents instead of a bare message."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        try:
            return await super().call_tool(name, arguments)
        except ToolError as error:
            cause = error.__cause__
            if isinstance(cause, SnapError | VerifierError):
                document = problem_of(cause)
            elif cause is None:
                document = problem(INTERNAL, str(error))
            else:  # never a traceback: the class only, as the CLI's internal-error line
                document = problem(INTERNAL, f"internal error ({type(cause).__name__})")
            return CallToolResult(
                content=[TextContent(type="text", text=json.dumps(document, ensure_ascii=False))],
                structuredContent=document,
                isError=True,
            )


READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)


def add_tools(
    server: FastMCP,
    workspace: Workspace,
    public: Redactor,
    checkpoints: CheckpointSchedule | None = None,
) -> None:
    async def recording(function: Any, *args: Any) -> Any:
        """A use case that records captures or checks; its log entries are then due in the
        next checkpoint, whatever its answer."""
        try:
            return await run(function, *args)
        finally:
            if checkpoints is not None:
                checkpoints.appended()

    @server.tool(annotations=ToolAnnotations(openWorldHint=False, idempotentHint=True))
    async def verify_quote(
        quote: Annotated[str, Field(min_length=1, description="the quoted words, exactly")],
        url: Annotated[str | None, Field(description="the cited URL (its latest snapshot)")] = None,
        snapshot_id: Annotated[str | None, Field(description="sha256:… or a prefix")] = None,
        prefix: Annotated[str | None, Field(description="text just before the quote")] = None,
        suffix: Annotated[str | None, Field(description="text just after the quote")] = None,
        position: Annotated[Position | None, Field(description="where it claims to be")] = None,
    ) -> QuoteResult:
        """Check that a quote is word for word in a stored snapshot (by URL or snapshot id).

        Returns the status, the stored span with its context, its offsets in code points,
        UTF-16 and UTF-8, and on a fail the closest passage of the source, differences marked.
        Every check is recorded, as `snap verify` records it."""
        if (url is None) == (snapshot_id is None):
            raise InputError("give exactly one of url and snapshot_id")
        selector: dict[str, Any] = {"quote": {"exact": quote}}
        for name, value in (("prefix", prefix), ("suffix", suffix)):
            if value is not None:
                selector["quote"][name] = value
        if position is not None:
            selector["position"] = position.model_dump()
        record: dict[str, Any] = {"selector": selector}
        record |= {"url": url} if url is not None else {"snapshotId": snapshot_id}
        from records.wire import citation_result_json

        report = await recording(verify_input, workspace, record)
        [result] = report.results  # one record in, one result out
        return QuoteResult.model_validate(public.document(citation_result_json(result)))

    @server.tool(annotations=ToolAnnotations(openWorldHint=False, idempotentHint=True))
    async def verify_answer(
        response: Annotated[
            dict[str, Any] | list[Any] | str,
            Field(
                description=(
                    "a provider's response (Anthropic, OpenAI, Gemini, Perplexity) or a snap "
                    "answer document, as JSON, as the JSON text or as a saved event stream"
                )
            ),
        ],
        documents: Annotated[
            dict[str, str] | list[str] | None,
            Field(
                description=(
                    "as snap verify --documents: the URL or snapshot id of each document the "
                    "model was given, by index (a list, in order) or title"
                )
            ),
        ] = None,
    ) -> AnswerResult:
        """Check every quote of a model's answer against the stored sources.

        Returns one result per cited quote and a summary with the verification rate
        (shareVerified); the same formats and checks as `snap verify`."""
        report = await recording(verify_document, workspace, response, public, documents)
        return AnswerResult.model_validate(report)

    @server.tool(annotations=ToolAnnotations(openWorldHint=True, idempotentHint=True))
    async def capture(
        url: Annotated[str, Field(min_length=1, description="an absolute http(s) URL")],
    ) -> dict[str, Any]:
        """Capture a web page write-once: raw bytes and text stored under their SHA-256.

        Returns the snapshot id and the capture's provenance, as `snap fetch --json`. Only
        http(s) URLs the server's allow-list admits are captured."""
        captured: dict[str, Any] = await recording(capture_document, workspace, url, public)
        return captured

    @server.tool(annotations=READ_ONLY)
    async def audit(
        citation_id: Annotated[str | None, Field(description="a recorded citation")] = None,
        url: Annotated[str | None, Field(description="everything recorded for a URL")] = None,
        snapshot_id: Annotated[str | None, Field(description="a snapshot")] = None,
    ) -> dict[str, Any]:
        """Everything recorded about a citation, URL or snapshot, its blobs re-hashed now (as
        `snap audit --json`)."""
        from records.audit import audit as audit_of

        if sum(value is not None for value in (citation_id, url, snapshot_id)) != 1:
            raise InputError("give exactly one of citation_id, url and snapshot_id")
        from records.wire import audit_json

        report = await run(
            audit_of, workspace, citation_id=citation_id, url=url, snapshot_id=snapshot_id
        )
        return dict(public.document(audit_json(report)))

    @server.tool(annotations=READ_ONLY)
    async def show_text(
        snapshot_id: Annotated[str, Field(min_length=1, description="sha256:… or a prefix")],
        page: Annotated[str | None, Field(description="a PDF page label or number")] = None,
        around: Annotated[int | None, Field(ge=0, description="a code-point offset")] = None,
    ) -> dict[str, Any]:
        """The stored text of a snapshot, read from its recorded version and re-hashed on the
        way out (as `snap show --json`)."""
        from records.show import show
        from records.wire import shown_json

        shown = await run(show, workspace, snapshot_id, what="text", page=page, around=around)
        return shown_json(shown)


def add_resources(server: FastMCP, workspace: Workspace) -> None:
    @server.resource(TEXT_URI, mime_type="text/plain", name="snapshot-text")
    async def snapshot_text(snapshot_id: str) -> str:
        """A snapshot's stored text, digest-checked."""
        from records.show import show

        shown = await run(show, workspace, snapshot_id, what="text")
        text: str = shown.text or ""
        return text


async def run(function: Any, *args: Any, **kwargs: Any) -> Any:
    """A use case in a worker thread: it reads blobs and the database, never on the loop."""
    return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))


def verify_document(
    workspace: Workspace, document: Any, public: Redactor, documents: Any = None
) -> dict[str, Any]:
    """``snap verify --json`` of one input document, read by the same input reader."""
    from records.wire import verify_report_json

    report = verify_input(workspace, document, documents)
    return dict(public.document(verify_report_json(report)))


def verify_input(workspace: Workspace, document: Any, documents: Any = None) -> VerifyReport:
    """The checks of one input document (a tool's argument), read by ``snap verify``'s input
    reader: the typed report, for the tool to answer from."""
    from records.inputs import verify_input_from_bytes
    from records.inputs.documents import NO_DOCUMENTS, parse_document_map
    from records.inputs.reader import max_input_bytes
    from records.verify import verify_citations
    from snap.errors import InputTooLarge

    # JSON text (or a saved event stream) is read as a file's bytes would be: the same reader
    if isinstance(document, str):
        data = document.encode("utf-8", "surrogatepass")
    else:
        data = json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")
    limit = max_input_bytes()
    if len(data) > limit:
        raise InputTooLarge(f"the input has {len(data)} bytes; the limit is {limit}")
    mapped = NO_DOCUMENTS if documents is None else parse_document_map(documents)
    given = verify_input_from_bytes(data, "the tool's input", mapped)
    return verify_citations(workspace, given)


def capture_document(workspace: Workspace, url: str, public: Redactor) -> dict[str, Any]:
    """``snap fetch --json`` of a web URL, through the service's guard."""
    from records.capture import capture_source, web_url_refusal
    from records.wire import stored_capture_json

    refused = web_url_refusal(url, WEB_ONLY_LINE)
    if refused is not None:
        raise InputError(refused)
    record = capture_source(workspace, url, web_only=True)
    return dict(public.document(stored_capture_json(record)))


def http_app(server: FastMCP, tokens: tuple[bytes, ...], *, max_body: int, timeout: float) -> Any:
    """The Streamable HTTP app (``/mcp``) behind ``snap serve``'s limits: the bearer tokens
    checked on the request head before any body byte is read, the body-size cap and the
    request timeout (``snap.service.limits``)."""
    from snap.service.app import admission
    from snap.service.limits import Limits
    from snap.service.metrics import Metrics

    return Limits(
        server.streamable_http_app(),
        max_body=max_body,
        timeout=timeout,
        metrics=Metrics(),
        admit=admission(tokens),
    )
