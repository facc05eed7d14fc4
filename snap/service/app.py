"""``snap serve``: the HTTP service, a thin FastAPI shell over the use cases the CLI runs.

Each endpoint parses, makes the same library call as its ``snap`` command, and returns that
command's ``--json`` document; errors become problem documents in ``snap.service.problems``
only. One workspace (database engine, store client, shared tokenized texts) is opened per
process at start-up and closed at shutdown. Endpoints that touch the database or the store are
plain ``def`` functions, which FastAPI runs in its threadpool; the use cases keep every
transaction short and never hold one across blob I/O.

The dependencies (token, parameter checks, the workspace and metrics of ``app.state``) are
``async def``: they only compute a little, and FastAPI runs a plain ``def`` dependency in its
threadpool, one hand-over to a thread and back each: eight per verify took 0.6 of the 1.75 ms
of CPU the event loop's thread spent per answer, and doubled the context switches (100 per
answer against 53 without them; issue 25).
``/v1/verify`` encodes its answer in the worker thread that made it and returns the response:
FastAPI then neither validates the document against the response model nor encodes it again
on the event loop (the model stays in the decorator, for the OpenAPI document).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
import anyio.to_thread
from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from records.inputs.documents import DocumentMap
from records.inputs.reader import DEFAULT_MAX_INPUT_BYTES
from records.workspace import Workspace
from snap import __version__
from snap.config import Settings
from snap.errors import InputError, SnapError, VerifierError
from snap.reverify_submission import ReverifyRequest as Reverification
from snap.service import auth
from snap.service.dispatch import dispatch_reverify
from snap.service.flights import SharedCaptures
from snap.service.limits import DeadlinePassed, Limits, Refusal, Scope, deadline_of
from snap.service.metrics import CONTENT_TYPE, Metrics
from snap.service.problems import (
    BAD_REQUEST,
    INTERNAL,
    MEDIA_TYPE,
    PROBLEM_SCHEMA,
    TIMEOUT,
    UNAUTHORIZED,
    ProblemKind,
    http_problem,
    problem,
    problem_of,
)
from snap.service.public import Redactor, served_json

if TYPE_CHECKING:
    from records.attest.schedule import CheckpointSchedule

log = logging.getLogger("snap.service")
DEFAULT_REQUEST_TIMEOUT = 60.0
# Citations one request may carry: checking 10,000 takes seconds, well inside the request
# timeout; 1.2 million (a 56 MiB body) took 2.4 GB and minutes.
DEFAULT_MAX_CITATIONS = 10_000
# At most one checkpoint of the log (one TSA request) per interval, after requests that
# recorded anything; and one at shutdown (records.attest.schedule).
DEFAULT_CHECKPOINT_INTERVAL = 30.0
OPEN_PATHS = frozenset({"/healthz", "/openapi.json"})  # answered without a token
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="snap"'}
WORKER_THREADS = 15


def checking_threads() -> int:
    """Threads that check citations without fetching at once: one per core, and one more
    for the moments one of them waits on the database or the store."""
    return (os.cpu_count() or 1) + 1


PRIVATE_FIELDS = (
    "allow_private",
    "allowprivate",
    "allow-private",
    "allow_network",
    "allow_networks",
    "allownetwork",
    "allownetworks",
    "allow-network",
    "allow-networks",
)
PRIVATE_LINE = (
    "allow_private is server configuration (snap serve --allow-private, SNAP_ALLOW_PRIVATE),"
    " never a request field"
)
NETWORKS_LINE = (
    "allow_networks is server configuration (snap serve --allow-network, SNAP_ALLOW_NETWORKS),"
    " never a request field"
)
WEB_ONLY_LINE = (
    "only http and https URLs are captured over HTTP: a client never makes the server read"
    " its own files"
)


@dataclass(frozen=True)
class ServiceConfig:
    settings: Settings
    tokens: tuple[bytes, ...] = ()
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_citations: int = DEFAULT_MAX_CITATIONS
    checkpoint_interval: float = DEFAULT_CHECKPOINT_INTERVAL


class ProblemError(Exception):
    """A condition of the HTTP layer (no token), answered as a problem document."""

    def __init__(self, kind: ProblemKind, detail: str, headers: dict[str, str]) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.headers = kind, detail, headers


class ProblemResponse(JSONResponse):
    media_type = MEDIA_TYPE


class SnapJSONResponse(JSONResponse):
    """The CLI's JSON: non-ASCII kept as is, anything else (a datetime) as its string."""

    def render(self, content: Any) -> bytes:
        return served_json(content)


class CaptureRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=1, max_length=8192, description="An http or https URL.")
    capture: Literal["http", "browser", "auto"] | None = Field(
        None,
        description="How to capture: over HTTP, in the browser (every request through snap's"
        " fetcher; rendered text, screenshot and subresources stored too), or auto (the"
        " browser when the server has one). Default: the server's SNAP_CAPTURE.",
    )


class ReverifyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str | None = Field(None, max_length=8192, description="Only citations of this URL.")
    since: datetime | None = Field(None, description="Only citations recorded since then.")
    refetch: bool = Field(False, description="Capture every cited source again first.")
    run: str | None = Field(
        None, max_length=200, description="Continue an interrupted run (its run id)."
    )


PROBLEM_REF = "#/components/schemas/Problem"
# The problems of a route, beside those it names itself (see ``responses``).
EVERY_REQUEST = (413, 500, 504)  # Limits: a body over the limit, the time limit; and a bug
GUARDED = (400, 401)  # a bad parameter or body (``invalid``, ``refuse_bad_parameters``); no token
BACKENDS = 503  # the database or the store cannot be used


def responses(
    ok: int,
    description: str,
    *problems: int,
    guarded: bool = True,
    content: dict[str, Any] | None = None,
) -> dict[int | str, dict[str, Any]]:
    """A route's answers for the OpenAPI document: its result, and the problem documents it may
    answer with: those it names, those of any request (``EVERY_REQUEST``) and, unless it is
    open (``guarded=False``), those of the token and parameter checks (``GUARDED``).

    A route that names 422 declares snap's own (``NothingToCheck``); FastAPI's validation 422
    is taken out of the document by ``without_validation_422``, since snap answers 400."""
    problem_content = {MEDIA_TYPE: {"schema": {"$ref": PROBLEM_REF}}}
    documented: dict[int | str, dict[str, Any]] = {
        ok: {"description": description, "content": content or ANY_JSON}
    }
    for status in sorted({*problems, *EVERY_REQUEST, *(GUARDED if guarded else ())}):
        documented[status] = {"description": "A problem (RFC 9457)", "content": problem_content}
    return documented


# What FastAPI declares on every route with parameters, and snap never sends (its handler of
# RequestValidationError answers a 400 problem): fastapi.openapi.utils.get_openapi_path.
FASTAPI_VALIDATION_REF = "#/components/schemas/HTTPValidationError"
FASTAPI_VALIDATION_SCHEMAS = ("HTTPValidationError", "ValidationError")


def without_validation_422(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` without FastAPI's 422 ``HTTPValidationError`` and its two schemas.

    FastAPI adds that 422 to each operation with parameters or a body unless the route
    declares a 422, ``4XX`` or ``default`` answer of its own, and has no setting to leave it
    out; snap answers a bad parameter or body with a 400 problem document instead (``invalid``
    in ``add_error_handlers``), so the document says so rather than what FastAPI would send.
    A route's own 422 (a problem: ``NothingToCheck``) is kept."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            answers = operation.get("responses", {})
            schema = answers.get("422", {}).get("content", {}).get("application/json", {})
            if schema.get("schema", {}).get("$ref") == FASTAPI_VALIDATION_REF:
                del answers["422"]
    schemas = document.get("components", {}).get("schemas", {})
    for name in FASTAPI_VALIDATION_SCHEMAS:
        schemas.pop(name, None)
    return document


BEARER = HTTPBearer(auto_error=False, description="A token of SNAP_API_TOKENS")
ANY_JSON: dict[str, Any] = {"application/json": {"schema": {"type": "object"}}}
JSON_BODY: dict[str, Any] = {"content": ANY_JSON}


async def workspace_of(request: Request) -> Workspace:
    workspace: Workspace = request.app.state.workspace
    return workspace


async def metrics_of(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


async def refuse_bad_parameters(request: Request) -> None:
    """Two refusals every route makes, in one dependency (FastAPI spends about as much on
    solving a dependency as these checks cost): a parameter only the server's configuration
    may set (``PRIVATE_FIELDS``), and a NUL (or any control character) in a path or query
    parameter, which is unusable input, 400 (it never reaches the database, where it would be
    a 503)."""
    from snapshotter.weburl import refuse_control_characters

    for name in request.query_params:
        if name.lower() in PRIVATE_FIELDS:
            raise InputError(private_line(name))
    for name, value in request.path_params.items():
        refuse_control_characters(str(value), f"the {name} in the path")
    for name, value in request.query_params.multi_items():
        refuse_control_characters(value, f"the query parameter {name[:40]}")


def private_line(name: str) -> str:
    return NETWORKS_LINE if "network" in name.lower() else PRIVATE_LINE


def unauthorized_line(presented: str | None) -> str:
    if presented is None:
        return "no bearer token given (Authorization: Bearer <token>)"
    return "the bearer token is not one of SNAP_API_TOKENS"


async def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
) -> None:
    """The route's own check, which also puts the bearer scheme in the OpenAPI document; the
    Limits middleware has already refused a request without a token (``admission``)."""
    config: ServiceConfig = request.app.state.config
    presented = credentials.credentials if credentials is not None else None
    if not auth.token_matches(presented, config.tokens):
        raise ProblemError(UNAUTHORIZED, unauthorized_line(presented), CHALLENGE)


def admission(tokens: tuple[bytes, ...]) -> Callable[[Scope], Refusal | None]:
    """The token check on the request head, made before any body byte is read: every path but
    ``OPEN_PATHS`` needs a token when tokens are configured."""

    def admit(scope: Scope) -> Refusal | None:
        if not tokens or scope.get("path") in OPEN_PATHS:
            return None
        given = [value for name, value in scope.get("headers", ()) if name == b"authorization"]
        presented = auth.bearer_of(given[0].decode("latin-1")) if len(given) == 1 else None
        if auth.token_matches(presented, tokens):
            return None
        document = problem(UNAUTHORIZED, unauthorized_line(presented))
        return Refusal(document, CHALLENGE)

    return admit


def checkpoints_of(request: Request) -> CheckpointSchedule:
    schedule: CheckpointSchedule = request.app.state.checkpoints
    return schedule


async def records_appended(request: Request) -> AsyncIterator[None]:
    """On a route that records captures or checks: once it is done, whatever its answer, the
    log's new entries are due in the next coalesced checkpoint (records.attest.schedule).
    Called on the event loop: ``appended`` only flips a flag under a lock that the schedule's
    thread never holds across a checkpoint."""
    try:
        yield
    finally:
        checkpoints_of(request).appended()


def redactor_of(request: Request) -> Redactor:
    redactor: Redactor = request.app.state.redactor
    return redactor


async def public_of(request: Request) -> Redactor:
    return redactor_of(request)


WorkspaceDep = Annotated[Workspace, Depends(workspace_of)]
MetricsDep = Annotated[Metrics, Depends(metrics_of)]
PublicDep = Annotated[Redactor, Depends(public_of)]  # what a served document may say


def create_app(config: ServiceConfig, *, workspace: Workspace | None = None) -> FastAPI:
    """The app; ``workspace`` (already opened by ``snap serve``, so a bad setting is one line
    before the server starts) or one opened from ``config.settings`` at start-up."""
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from starlette.concurrency import run_in_threadpool

        from records.attest.schedule import CheckpointSchedule
        from records.texts import PreparedCache

        opened: Workspace = (
            workspace
            if workspace is not None
            else await run_in_threadpool(Workspace.open, config.settings)
        )
        # One worker thread per pooled connection at most (SQLAlchemy's QueuePool: 5 + 10
        # overflow): each use case holds one connection at a time, so a request never waits
        # 30 s for a connection and fails; more requests queue for a thread instead.
        anyio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
        app.state.checking = anyio.CapacityLimiter(checking_threads())
        opened.prepared = opened.prepared or PreparedCache(folder=opened.prepared_folder())
        opened.stores  # noqa: B018  (built once, before threads share it)
        app.state.workspace = opened
        app.state.checkpoints = CheckpointSchedule(opened, config.checkpoint_interval)
        try:
            yield
        finally:
            await run_in_threadpool(app.state.checkpoints.close)  # the last checkpoint
            opened.close()

    app = FastAPI(
        title="snap",
        version=__version__,
        description="Content-addressed snapshots and checkable citations, over HTTP.",
        lifespan=lifespan,
        docs_url=None,  # the interactive pages load scripts from a CDN; /openapi.json is enough
        redoc_url=None,
        default_response_class=SnapJSONResponse,
    )
    app.state.metrics = metrics
    app.state.config = config
    app.state.redactor = Redactor(config.settings)
    guarded = [
        Depends(require_token),
        Depends(refuse_bad_parameters),
    ]
    add_routes(app, guarded, config)
    add_error_handlers(app)
    app.add_middleware(
        Limits,
        max_body=config.max_input_bytes,
        timeout=config.request_timeout,
        metrics=metrics,
        admit=admission(config.tokens),
    )
    original_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        document = without_validation_422(original_openapi())
        document.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM_SCHEMA
        return document

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def add_routes(app: FastAPI, guarded: list[Any], config: ServiceConfig) -> None:
    verify_body = {
        "requestBody": {
            "required": True,
            "description": (
                "Any input `snap verify` reads, as the bytes of the file: a citation record or "
                "a list, an answer with claims, W3C annotations, a provider's response "
                "(Anthropic, OpenAI, Gemini, Perplexity) or its saved event stream. At most "
                f"{config.max_citations} citations (`snap serve --max-citations`) and "
                f"{config.max_input_bytes} bytes (`SNAP_MAX_INPUT_BYTES`); more is refused 413."
            ),
            "content": {"application/json": {"schema": {}}},
        },
        "x-max-citations": config.max_citations,
    }

    appending = [*guarded, Depends(records_appended)]
    # fetch=true: concurrent requests of this process for one missing URL share one capture
    shared_captures = SharedCaptures()

    @app.post(
        "/v1/verify",
        dependencies=appending,
        response_model=dict[str, Any],  # the OpenAPI document's; the answer is encoded as is
        openapi_extra=verify_body,
        responses=responses(200, "As `snap verify --json`", 422, BACKENDS),
        summary="Check citations against their stored snapshots",
    )
    async def verify(
        request: Request,
        fetch: Annotated[
            bool, Query(description="Capture a cited http(s) URL that has no snapshot yet.")
        ] = False,
        documents: Annotated[
            str | None,
            Query(
                max_length=8192,
                description=(
                    "As `snap verify --documents`, inline: a JSON map from a model's document "
                    'index, title or file id to a URL or snapshot id, e.g. {"0": "https://…"}'
                ),
            ),
        ] = None,
    ) -> Response:
        # Read here, not through dependencies: FastAPI solves each dependency on the event
        # loop for every request, and this is the route answers are asked of (four fewer took
        # the loop's thread from 3.14 to 2.77 M instructions an answer).
        state = request.app.state
        workspace: Workspace = state.workspace
        metrics: Metrics = state.metrics
        public: Redactor = state.redactor
        body = await request.body()  # already bounded by the Limits middleware
        from records.verify import verify_citations
        from records.wire import verify_report_json
        from snap.service.cap import verify_input_within

        def checked() -> Response:
            given = verify_input_within(body, document_map(documents), config.max_citations)
            checkpoint = deadline_of(request.scope).checkpoint
            report = verify_citations(
                workspace,
                given,
                fetch_missing=fetch,
                checkpoint=checkpoint,
                capture_missing=shared_captures,
            )
            metrics.count_statuses(report.counts.by_status)
            # Encoded here, in the worker thread, once: returned as a response, the document
            # is not validated against the response model and re-encoded on the event loop.
            served = public.encoded(verify_report_json(report))
            return Response(served, media_type=SnapJSONResponse.media_type)

        # A check that fetches nothing only computes: it takes a thread of the small pool,
        # since more threads than cores only contend for the GIL (15 threads spent twice the
        # CPU per answer of 3); one that may fetch waits on the network in the large pool.
        limiter = None if fetch else request.app.state.checking
        return await anyio.to_thread.run_sync(checked, limiter=limiter)

    @app.post(
        "/v1/captures",
        dependencies=appending,
        status_code=201,
        responses=responses(201, "As `snap fetch --json`", 403, 409, 501, 502, BACKENDS),
        summary="Capture a URL and store it write-once",
    )
    def capture(
        workspace: WorkspaceDep, metrics: MetricsDep, public: PublicDep, given: CaptureRequest
    ) -> JSONResponse:
        from records.capture import capture_source
        from records.wire import stored_capture_json
        from snapshotter.weburl import has_web_scheme, web_url

        if not has_web_scheme(given.url):
            raise InputError(WEB_ONLY_LINE)
        web_url(given.url)  # an absolute http(s) URL with a host, read alike by browsers
        try:
            record = capture_source(workspace, given.url, web_only=True, method=given.capture)
        except SnapError as error:
            metrics.capture_failed(type(error).__name__)
            raise
        location = f"/v1/snapshots/{record.snapshot_id}"
        return SnapJSONResponse(
            public.document(stored_capture_json(record)),
            status_code=201,
            headers={"Location": location},
        )

    @app.get(
        "/v1/snapshots/{snapshot_id}",
        dependencies=guarded,
        responses=responses(200, "As `snap audit --snapshot ID --json`", 404, BACKENDS),
        summary="Everything recorded about a snapshot, its blobs re-hashed now",
    )
    def snapshot(workspace: WorkspaceDep, public: PublicDep, snapshot_id: str) -> dict[str, Any]:
        from records.audit import audit
        from records.wire import audit_json

        report = audit(workspace, citation_id=None, url=None, snapshot_id=snapshot_id)
        return dict(public.document(audit_json(report)))

    @app.get(
        "/v1/snapshots/{snapshot_id}/text",
        dependencies=guarded,
        responses=responses(200, "As `snap show ID --json`", 404, 409, 410, BACKENDS),
        summary="The stored text of a snapshot, re-hashed on the way out",
    )
    def snapshot_text(
        workspace: WorkspaceDep,
        snapshot_id: str,
        page: Annotated[str | None, Query(max_length=200, description="A PDF page")] = None,
        around: Annotated[
            int | None, Query(ge=0, le=2**62, description="A code-point offset")
        ] = None,
    ) -> dict[str, Any]:
        from records.show import show
        from records.wire import shown_json

        return shown_json(show(workspace, snapshot_id, what="text", page=page, around=around))

    @app.get(
        "/v1/citations/{citation_id}",
        dependencies=guarded,
        responses=responses(200, "As `snap audit CITATION_ID --json`", 404, BACKENDS),
        summary="The audit record of a citation",
    )
    def citation(workspace: WorkspaceDep, public: PublicDep, citation_id: str) -> dict[str, Any]:
        from records.audit import audit
        from records.wire import audit_json

        report = audit(workspace, citation_id=citation_id, url=None, snapshot_id=None)
        return dict(public.document(audit_json(report)))

    @app.get(
        "/v1/audit",
        dependencies=guarded,
        responses=responses(200, "As `snap audit --url URL --json`", 404, BACKENDS),
        summary="Everything recorded about a URL",
    )
    def audit_url(
        workspace: WorkspaceDep,
        public: PublicDep,
        url: Annotated[str, Query(min_length=1, max_length=8192)],
    ) -> dict[str, Any]:
        from records.audit import audit
        from records.wire import audit_json

        report = audit(workspace, citation_id=None, url=url, snapshot_id=None)
        return dict(public.document(audit_json(report)))

    @app.post(
        "/v1/reverify",
        dependencies=appending,
        responses={
            **responses(200, "As `snap reverify --json` (no broker configured)", 404, BACKENDS),
            202: {
                "description": "Queued for the workers: the batch to follow",
                "content": ANY_JSON,
            },
        },
        summary="Re-check recorded citations against the latest snapshot of each source",
    )
    def reverify(
        request: Request,
        workspace: WorkspaceDep,
        metrics: MetricsDep,
        public: PublicDep,
        given: ReverifyRequest,
    ) -> JSONResponse:
        from snapshotter.weburl import refuse_control_characters

        for name, value in (("url", given.url), ("run", given.run)):
            if value is not None:
                refuse_control_characters(value, f"request body: {name}")
        since = given.since
        if since is not None and since.tzinfo is None:
            since = since.replace(tzinfo=UTC)
        filters = Reverification(given.url, since, given.refetch, given.run)
        checkpoint = deadline_of(request.scope).checkpoint
        dispatched = dispatch_reverify(workspace, filters, checkpoint)
        metrics.count_statuses(dispatched.by_status)
        for _ in range(dispatched.refetch_failures):
            metrics.capture_failed("refetch")
        body = public.document(dispatched.body)
        return SnapJSONResponse(body, status_code=dispatched.status_code)

    @app.post(
        "/v1/log/checkpoint",
        dependencies=guarded,
        responses=responses(200, "As `snap log checkpoint --json`", 409, BACKENDS),
        summary="Sign and timestamp the log's size and root now",
    )
    def log_checkpoint(request: Request) -> dict[str, Any]:
        """On demand, beside the service's own checkpoints (one per interval after requests
        that recorded anything, and one at shutdown): nothing new when the newest checkpoint
        already covers every entry (``created`` is then false)."""
        from records.wire_attest import checkpoint_result_json

        return checkpoint_result_json(checkpoints_of(request).now())

    @app.get(
        "/v1/jobs/{batch}",
        dependencies=guarded,
        responses=responses(200, "As `snap jobs BATCH --json`", 404, BACKENDS),
        summary="Progress of a batch, from the database",
    )
    def job(
        workspace: WorkspaceDep,
        public: PublicDep,
        batch: Annotated[str, Path(min_length=1, max_length=200)],
    ) -> dict[str, Any]:
        from records.jobs import batch_progress
        from records.wire import batch_progress_json

        return dict(public.document(batch_progress_json(batch_progress(workspace.db, batch))))

    @app.get(
        "/healthz",
        summary="The database answers",
        responses=responses(200, "The service and its database answer", BACKENDS, guarded=False),
    )
    def healthz(workspace: WorkspaceDep) -> dict[str, Any]:
        revision = workspace.db.current_revision()
        return {"status": "ok", "version": __version__, "database": revision}

    @app.get(
        "/metrics",
        dependencies=guarded,
        response_class=Response,
        responses=responses(
            200, "Prometheus text format", content={CONTENT_TYPE: {"schema": {"type": "string"}}}
        ),
        summary="Prometheus text exposition",
    )
    def metrics_text(metrics: MetricsDep) -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE)


def add_error_handlers(app: FastAPI) -> None:
    def snap_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, (SnapError, VerifierError))
        document = problem_of(error)
        document["detail"] = redactor_of(request).message(document["detail"])
        return ProblemResponse(document, status_code=document["status"])

    def problem_error(_request: Request, error: Exception) -> Response:
        assert isinstance(error, ProblemError)
        document = problem(error.kind, error.detail)
        return ProblemResponse(document, status_code=error.kind.status, headers=error.headers)

    def invalid(_request: Request, error: Exception) -> Response:
        assert isinstance(error, RequestValidationError)
        document = problem(
            BAD_REQUEST, validation_line(error), exitCode=2, errorType=InputError.__name__
        )
        return ProblemResponse(document, status_code=400)

    def http_error(_request: Request, error: Exception) -> Response:
        assert isinstance(error, StarletteHTTPException)
        document = http_problem(error.status_code, str(error.detail))
        return ProblemResponse(document, status_code=error.status_code, headers=error.headers)

    def internal(_request: Request, error: Exception) -> Response:
        log.error("internal error", exc_info=error)
        document = problem(INTERNAL, f"internal error: {type(error).__name__} (see the log)")
        return ProblemResponse(document, status_code=500)

    def too_late(_request: Request, _error: Exception) -> Response:
        # Only reached when the work stopped before Limits answered (it answers 504 itself).
        document = problem(TIMEOUT, "the request took longer than the time limit")
        return ProblemResponse(document, status_code=TIMEOUT.status)

    app.add_exception_handler(DeadlinePassed, too_late)
    app.add_exception_handler(SnapError, snap_error)
    app.add_exception_handler(VerifierError, snap_error)
    app.add_exception_handler(ProblemError, problem_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, internal)


def document_map(documents: str | None) -> DocumentMap:
    """The ``documents`` parameter through the one input reader, as ``--documents`` is."""
    from records.inputs.documents import NO_DOCUMENTS, parse_document_map
    from records.inputs.reader import parse_input_bytes

    if documents is None:
        return NO_DOCUMENTS
    try:
        return parse_document_map(parse_input_bytes(documents.encode("utf-8"), "documents"))
    except InputError as error:
        message = error.message.removeprefix("documents: ")
        raise InputError(f"documents: {message}") from None


def validation_line(error: RequestValidationError) -> str:
    """FastAPI's list of validation errors as one line: where, then what."""
    parts = []
    for item in error.errors()[:3]:
        where = ".".join(str(part) for part in item.get("loc", ()))
        if (field := str(item.get("loc", ("",))[-1])).lower() in PRIVATE_FIELDS:
            return private_line(field)
        if where == "body" and item.get("type") in ("model_attributes_type", "dict_type"):
            return "request body: expected a JSON object (sent as Content-Type: application/json)"
        parts.append(f"{where}: {item.get('msg', 'invalid')}")
    more = len(error.errors()) - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document, without opening any workspace (``snap serve --print-openapi``)."""
    settings = Settings.from_env({"SNAP_HOME": "/nonexistent"})
    return create_app(ServiceConfig(settings)).openapi()
