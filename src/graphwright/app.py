"""The FastAPI application: services built once, routers, MCP over streamable HTTP at /mcp/NAME,
`/health`, the error envelope and the request body limit. Each room adds its router here with
one line."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from graphwright import __version__, api_docs, mcp_registry
from graphwright.a2a import api as a2a_api
from graphwright.artifacts.service import ArtifactService
from graphwright.artifacts.store import SqlArtifactStore
from graphwright.artifacts.tools import artifacts_server
from graphwright.auth.service import create_auth_service
from graphwright.chat import api as chat_api
from graphwright.core import biolink, ids
from graphwright.db import Database
from graphwright.envelope import error_response, failure, ok
from graphwright.errors import GraphwrightError, problems
from graphwright.graphmode import api as graph_api
from graphwright.graphmode.backend_resolver import BackendResolver
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.limits import GraphLimits
from graphwright.graphmode.service import GraphService
from graphwright.graphmode.tools import graph_server
from graphwright.http_policy import ResponsePolicy
from graphwright.knowledge import api as knowledge_api
from graphwright.knowledge.backends import open_backend
from graphwright.knowledge.service import KnowledgeService
from graphwright.knowledge.tools import knowledge_server
from graphwright.llm import load_chat_model
from graphwright.miner import api as miner_api
from graphwright.miner.service import MinerService
from graphwright.miner.tools import miner_server
from graphwright.nul_guard import refuse_nul
from graphwright.openapi import install_openapi
from graphwright.serving import (
    BODY_PARSE_ERROR,
    UnexpectedErrors,
    json_syntax_failure,
    undecodable_body_failure,
)
from graphwright.settings import Settings, get_settings

HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}


def create_app(
    settings: Settings | None = None,
    *,
    database: Database | None = None,
    web: bool = False,
    warm_start: bool = False,
) -> FastAPI:
    """The app; with `web`, also the NiceGUI UI at `/` (one per process: see graphwright.web).
    With `warm_start` (`graphwright serve`), the Biolink model and the prefix map are read before
    the app takes requests, and the processes that the chat's tools and people's knowledge-base
    queries run in start in the background once it is up, not on first use; without it (tests,
    the in-process client) nothing starts ahead."""
    settings = settings or get_settings()
    db = database or Database(settings.resolved_database_url)
    events = create_graph_events(db)
    auth = create_auth_service(db, where=settings.data_location)
    graph_service = GraphService(db, events, GraphLimits.from_settings(settings))
    graph_backends = BackendResolver(settings, graph_service)
    knowledge = KnowledgeService.from_settings(db, open_backend(settings), settings)
    model = load_chat_model(settings)
    miner = MinerService.from_settings(db, settings, knowledge, model=model)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        events.start()
        auth.start()
        await knowledge.ensure_started(sample_data=settings.kb_sample_data)
        await miner.ensure_started()
        if warm_start:
            await run_in_threadpool(biolink.load)
            await run_in_threadpool(ids.load)
            knowledge.start_query_workers()
        yield
        await miner.aclose()
        await knowledge.aclose()
        await graph_backends.aclose()
        events.close()
        auth.close()
        if database is None:
            db.dispose()

    app = FastAPI(
        title="graphwright",
        version=__version__,
        lifespan=lifespan,
        summary="Knowledge graphs per conversation, versioned, with undo and redo.",
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(refuse_nul)],
    )
    api_docs.install(app)  # /docs and /redoc from local files, not a CDN
    app.state.settings = settings
    app.state.warm_start = warm_start
    app.state.model_setup = model
    app.state.database = db
    app.state.auth_service = auth
    app.state.graph_events = events
    app.state.graph_service = graph_service
    app.state.artifact_service = ArtifactService(SqlArtifactStore(db))
    app.state.knowledge_service = knowledge
    app.state.miner_service = miner

    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(UnexpectedErrors)
    _install_error_handlers(app)
    install_openapi(app)

    @app.get("/health", tags=["health"], summary="Liveness; needs no token")
    def health() -> Response:
        return ok({"status": "ok", "version": __version__})

    app.include_router(graph_api.router)
    app.include_router(graph_api.listing_router)
    app.include_router(chat_api.router)
    app.include_router(knowledge_api.router)
    app.include_router(miner_api.router)
    a2a_api.mount(app)
    mcp_registry.mount_all(
        app,
        verify_token=app.state.auth_service.authenticate,
        host=settings.host,
        settings=settings,
        servers={
            "graph": graph_server(graph_backends),
            "artifacts": artifacts_server(app.state.artifact_service, settings=settings),
            "knowledge": knowledge_server(knowledge, settings=settings),
            "miner": miner_server(miner, settings=settings),
        },
    )
    if web:
        from graphwright.web import mount  # NiceGUI is imported only where the UI is served

        mount(app)
    # Outermost, so that it also sees the cookie the web UI's session middleware sets.
    app.add_middleware(ResponsePolicy, secure_cookies=settings.secure_cookies)
    return app


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(GraphwrightError)
    async def _domain_error(_request: Request, exc: GraphwrightError) -> Response:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        syntax = next((e for e in exc.errors() if e["type"] == "json_invalid"), None)
        if syntax is not None:
            return json_syntax_failure(await request.body(), syntax)
        found = problems(exc.errors(), whole="body", drop="body")
        return failure(
            422,
            "invalid_input",
            "; ".join(found[:5]),
            details=[{k: err[k] for k in ("loc", "msg", "type")} for err in exc.errors()],
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400 and exc.detail == BODY_PARSE_ERROR:
            return undecodable_body_failure(await request.body())
        response = failure(
            exc.status_code, HTTP_CODES.get(exc.status_code, "http_error"), exc.detail
        )
        response.headers.update(exc.headers or {})  # e.g. `Allow` on a 405
        return response


class BodyTooLarge(StarletteHTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"The request body exceeds the limit of {limit} bytes")


class BodySizeLimit:
    """Refuse bodies over `max_bytes` with 413, by Content-Length or while they stream in."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            message = BodyTooLarge(self.max_bytes).detail
            await failure(413, "too_large", message)(scope, receive, send)
            return
        await self.app(scope, self._counting(receive), send)

    def _counting(self, receive: Receive) -> Callable[[], Awaitable[MutableMapping[str, Any]]]:
        seen = 0

        async def counted() -> MutableMapping[str, Any]:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise BodyTooLarge(self.max_bytes)
            return message

        return counted
