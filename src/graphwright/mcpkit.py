"""Shared plumbing for graphwright's MCP servers (official `mcp` SDK, `MCPServer`).

Artifact convention: a tool result carries text for the model plus, per artifact, one MCP-native
`EmbeddedResource` (TextResourceContents: uri `graphwright://artifact/<uuid>`, the artifact's
mimeType, text = its content, `_meta` = {title, metadata?}, audience ["user"]).
"""

from __future__ import annotations

import functools
import inspect
import re
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import orjson
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp_types import (
    Annotations,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    EmptyResult,
    SetLevelRequestParams,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphwright import __version__
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, MARKDOWN
from graphwright.errors import GraphwrightError, Unauthorized

ARTIFACT_URI_PREFIX = "graphwright://artifact/"

__all__ = [
    "BIBLIOGRAPHY",
    "KNOWLEDGE_GRAPH",
    "MARKDOWN",
    "Artifact",
    "BearerAuth",
    "SessionOwners",
    "TokenVerifier",
    "add_tool",
    "error_result",
    "hints",
    "http_principal",
    "mount_http",
    "new_server",
    "run_stdio",
    "tool",
    "tool_result",
]

TokenVerifier = Callable[[str], Any]
"""Sync or async: truthy (a principal) for a valid bearer token; falsy or raises Unauthorized."""


def new_server(name: str, *, instructions: str) -> MCPServer[Any]:
    """An MCPServer named `name` that logs warnings only (stdout is the stdio transport)."""
    server = MCPServer(name, version=__version__, instructions=instructions, log_level="WARNING")
    server.middleware.append(_readable_argument_errors)
    # The logging capability (2025-11-25): the SDK re-provides `logging/setLevel` only through
    # the low-level server's handler table, which MCPServer does not expose.
    server._lowlevel_server.add_request_handler(
        "logging/setLevel", SetLevelRequestParams, _set_log_level
    )
    return server


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_session_levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _connection_of(session: Any) -> Any:
    # A ServerSession lives for one request; the level belongs to the client's connection.
    return getattr(session, "_connection", session)


async def _set_log_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
    """Remember the connection's level: `log` sends only messages at or above it."""
    _session_levels[_connection_of(ctx.session)] = params.level
    return EmptyResult()


async def log(ctx: Context, level: str, message: str) -> None:
    """A log notification to the client of this call, if its session's level lets it through
    (every level when the client never set one)."""
    wanted = _session_levels.get(_connection_of(ctx.request_context.session), "debug")
    if LOG_LEVELS.index(level) >= LOG_LEVELS.index(wanted):
        await ctx.request_context.session.send_log_message(  # pyright: ignore[reportDeprecated]
            level=level, data=message, logger=None, related_request_id=ctx.request_id
        )


async def progress(ctx: Context, done: float, total: float, message: str) -> None:
    """Progress of a long call, as MCP progress (sent only if the caller asked for it) and as
    an info log line."""
    await ctx.report_progress(done, total, message)
    await log(ctx, "info", message)


_PYDANTIC_HEADER = re.compile(
    r"^(?:Error executing tool (?P<tool>[^:]+): )?\d+ validation errors? for \S+$"
)
_PYDANTIC_DETAIL = re.compile(
    r"^\s+(?P<msg>.*?)(?: \[type=[^,\]]+(?:, input_value=(?P<value>.*?))?(?:, input_type=\w+)?\])?$"
)


def readable_tool_error(text: str) -> str:
    """pydantic's validation report, as MCP SDKs pass it on, worded one line per field:
    `Invalid arguments for sleep:` then `- seconds: Input should be a valid number (got 'abc')`.
    Any other text comes back as it was."""
    lines = text.splitlines()
    header = _PYDANTIC_HEADER.match(lines[0]) if lines else None
    if header is None:
        return text
    problems, field = [], "arguments"
    for line in lines[1:]:
        if "errors.pydantic.dev" in line:
            continue
        if not line.startswith(" "):
            field = line.strip() or "arguments"
            continue
        detail = _PYDANTIC_DETAIL.match(line)
        if detail is None:
            continue
        value = detail.group("value")
        got = f" (got {value})" if value and len(value) <= 80 else ""
        problems.append(f"- {field}: {detail.group('msg')}{got}")
    tool = header.group("tool")
    return "\n".join([f"Invalid arguments{f' for {tool}' if tool else ''}:", *problems])


async def _readable_argument_errors(ctx: Any, call_next: Any) -> Any:
    """Tool errors worded by `readable_tool_error` (the result arrives as its JSON dict)."""
    result = await call_next(ctx)
    if ctx.method == "tools/call" and isinstance(result, dict) and result.get("isError"):
        for item in result.get("content") or []:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                item["text"] = readable_tool_error(item["text"])
    return result


def hints(
    *,
    read_only: bool,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    title: str | None = None,
) -> ToolAnnotations:
    """Tool annotations with every hint stated, so clients never fall back to the spec defaults.

    `open_world` is True for tools that reach external services (PubMed, RePORTER, the web).
    A read-only tool is always idempotent and never destructive.
    """
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=False if read_only else destructive,
        idempotent_hint=True if read_only else idempotent,
        open_world_hint=open_world,
    )


@dataclass(frozen=True)
class Artifact:
    """One artifact for the person: a knowledge graph, a bibliography or a document."""

    mime_type: str
    title: str
    content: str | dict[str, Any] | list[Any]
    metadata: dict[str, Any] | None = None
    id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def uri(self) -> str:
        return f"{ARTIFACT_URI_PREFIX}{self.id}"

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return orjson.dumps(self.content).decode()

    def to_resource(self) -> EmbeddedResource:
        meta: dict[str, Any] = {"title": self.title}
        if self.metadata:
            meta["metadata"] = self.metadata
        contents = TextResourceContents(
            uri=self.uri, mime_type=self.mime_type, text=self.text(), _meta=meta
        )
        return EmbeddedResource(resource=contents, annotations=Annotations(audience=["user"]))


def tool_result(
    text: str,
    *,
    structured: BaseModel | dict[str, Any] | None = None,
    artifacts: Sequence[Artifact] = (),
) -> CallToolResult:
    """A successful result: `text` for the model, optional structuredContent and artifacts."""
    content: list[ContentBlock] = [TextContent(text=text)]
    content.extend(artifact.to_resource() for artifact in artifacts)
    if isinstance(structured, BaseModel):
        structured = structured.model_dump(mode="json", by_alias=True)
    return CallToolResult(content=content, structured_content=structured)


def error_result(message: str) -> CallToolResult:
    """A tool error (isError: true) whose text is the message, for the model to act on."""
    return CallToolResult(content=[TextContent(text=message)], is_error=True)


def _catch_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a GraphwrightError raised by `fn` into an error result; keep fn's signature."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except GraphwrightError as exc:
                return error_result(str(exc))

        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GraphwrightError as exc:
            return error_result(str(exc))

    return wrapper


def add_tool(
    server: MCPServer[Any],
    fn: Callable[..., Any],
    *,
    annotations: ToolAnnotations,
    name: str | None = None,
    description: str | None = None,
) -> None:
    """Register `fn` as a tool whose GraphwrightErrors become tool errors.

    Declare the return type `Annotated[CallToolResult, SomeModel]` to publish SomeModel as the
    outputSchema (the SDK validates structuredContent against it), or `CallToolResult` for text.
    The description defaults to the docstring: write it for the model.
    """
    description = description or inspect.cleandoc(fn.__doc__ or "")
    server.add_tool(_catch_errors(fn), name=name, description=description, annotations=annotations)


def tool(
    server: MCPServer[Any],
    *,
    annotations: ToolAnnotations,
    name: str | None = None,
    description: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator form of `add_tool`."""

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        add_tool(server, fn, annotations=annotations, name=name, description=description)
        return fn

    return decorator


def run_stdio(server: MCPServer[Any]) -> None:
    """Serve `server` over stdin/stdout until the client closes the pipe."""
    anyio.run(server.run_stdio_async)


SESSION_HEADER = "mcp-session-id"


class SessionOwners:
    """Which principal opened each streamable-HTTP session; first owner wins.

    Memory stays bounded: only the `limit` most recently opened sessions are kept (a dict keeps
    insertion order, so the oldest is dropped first). A dropped session is refused like an
    unknown one, so its client opens a new session; it is never bound to anyone else.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._owners: dict[str, Any] = {}

    def owner(self, session_id: str) -> Any:
        """The principal that opened `session_id`, or None if it is not recorded."""
        return self._owners.get(session_id)

    def claim(self, session_id: str, principal: Any) -> None:
        if session_id in self._owners:
            return
        self._owners[session_id] = principal
        if len(self._owners) > self.limit:
            del self._owners[next(iter(self._owners))]

    def forget(self, session_id: str) -> None:
        self._owners.pop(session_id, None)


class BearerAuth:
    """ASGI wrapper: 401 unless `Authorization: Bearer <token>` passes the verifier.

    The verifier returns something truthy (kept as `request.state.principal`) or falsy, or
    raises Unauthorized, whose message is sent back. A sync verifier runs in a worker thread,
    since it may query the database.

    Each MCP session is bound to the principal that opened it (the MCP spec asks servers to
    bind session ids to the user): the `mcp-session-id` of the app's response is recorded in
    `sessions` for the request's principal. A request naming a session that is not recorded
    for its principal (compared with `==`) gets 404 `{"error": "Session not found"}`, the
    spec's answer for an unknown session, without reaching the app. A successful DELETE drops
    the record.
    """

    def __init__(self, app: ASGIApp, verify: TokenVerifier, *, max_sessions: int = 10_000) -> None:
        self.app = app
        self.verify = verify
        self.sessions = SessionOwners(max_sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            principal = await self._principal(scope)
        except Unauthorized as exc:
            await self._refuse(str(exc), scope, receive, send)
            return
        if not principal:
            await self._refuse("The bearer token is not valid.", scope, receive, send)
            return
        session_id = _header(scope.get("headers") or [], SESSION_HEADER)
        if session_id and self.sessions.owner(session_id) != principal:
            # 404, not 403: the client re-initialises, and learns nothing of others' sessions.
            await JSONResponse({"error": "Session not found"}, status_code=404)(
                scope, receive, send
            )
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, self._binding(send, scope, session_id, principal))

    def _binding(self, send: Send, scope: Scope, session_id: str, principal: Any) -> Send:
        """`send`, recording the session the response names, or forgetting a deleted one."""

        async def send_and_bind(message: Message) -> None:
            if message["type"] == "http.response.start":
                deleted = scope["method"] == "DELETE" and 200 <= message["status"] < 300
                if deleted and session_id:
                    self.sessions.forget(session_id)
                elif opened := _header(message.get("headers") or [], SESSION_HEADER):
                    self.sessions.claim(opened, principal)
            await send(message)

        return send_and_bind

    async def _principal(self, scope: Scope) -> Any:
        header = _header(scope.get("headers") or [], "authorization")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("A bearer token is required: send 'Authorization: Bearer <token>'.")
        if inspect.iscoroutinefunction(self.verify):
            return await self.verify(token.strip())
        return await anyio.to_thread.run_sync(self.verify, token.strip())

    @staticmethod
    async def _refuse(message: str, scope: Scope, receive: Receive, send: Send) -> None:
        response = JSONResponse(
            {"error": message}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
        )
        await response(scope, receive, send)


def _header(headers: Sequence[tuple[bytes, bytes]], name: str) -> str:
    """The value of header `name` (lower case) in ASGI `headers`; "" when absent."""
    wanted = name.encode("latin-1")
    return next((value.decode("latin-1") for key, value in headers if key.lower() == wanted), "")


def http_principal(ctx: Context) -> Any:
    """The principal `BearerAuth` let through for this call over streamable HTTP; None over
    stdio, where the local user who started the server is trusted."""
    request = ctx.request_context.request
    return getattr(request.state, "principal", None) if isinstance(request, Request) else None


def mount_http(
    app: Starlette,
    name: str,
    server: MCPServer[Any],
    *,
    verify_token: TokenVerifier | None,
    host: str = "127.0.0.1",
) -> str:
    """Serve `server` over streamable HTTP at /mcp/NAME inside `app` (FastAPI or Starlette).

    Adds a route and chains the server's session manager into the app's lifespan, so call it
    before the app starts. `verify_token=None` serves without auth (tests, local tools only).
    `host` is the address the app is served on: loopback hosts get DNS-rebinding protection.
    Returns the mounted path.
    """
    server.streamable_http_app(streamable_http_path="/", host=host)
    manager = server.session_manager
    endpoint: ASGIApp = StreamableHTTPASGIApp(manager)
    if verify_token is not None:
        endpoint = BearerAuth(endpoint, verify_token)
    path = f"/mcp/{name}"
    app.router.routes.append(Route(path, endpoint=endpoint))

    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        async with manager.run(), outer(asgi_app) as state:
            yield state

    app.router.lifespan_context = lifespan
    return path
