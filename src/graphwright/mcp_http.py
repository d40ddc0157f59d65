"""graphwright's MCP servers over streamable HTTP: mounted in an app, behind a bearer token.

`mount_http` serves a server at /mcp/NAME; `BearerAuth` checks each request's token and binds
each MCP session to the principal that opened it; `http_principal` gives a tool that principal.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphwright.auth.header import token_in
from graphwright.errors import Unauthorized

TokenVerifier = Callable[[str], Any]
"""Sync or async: truthy (a principal) for a valid bearer token; falsy or raises Unauthorized."""


SESSION_HEADER = "mcp-session-id"


class SessionOwners:
    """Which principal opened each streamable-HTTP session; first owner wins.

    Memory stays bounded and no token can crowd the others out: a principal keeps at most
    `per_principal` sessions (opening one more evicts its own oldest), and all principals
    together at most `limit` (past it, the oldest session of the principal holding the most
    goes). `claim` returns the evicted session ids, for the caller to close. An evicted session
    is refused like an unknown one, so its client opens a new session; it is never bound to
    anyone else. Principals must be hashable.
    """

    def __init__(self, limit: int = 1_000, per_principal: int | None = None) -> None:
        self.limit = limit
        self.per_principal = min(per_principal or limit, limit)
        self._owners: dict[str, Any] = {}
        # Per principal, its sessions oldest first (a dict keeps insertion order).
        self._sessions_of: dict[Any, dict[str, None]] = {}

    def __len__(self) -> int:
        return len(self._owners)

    def owner(self, session_id: str) -> Any:
        """The principal that opened `session_id`, or None if it is not recorded."""
        return self._owners.get(session_id)

    def claim(self, session_id: str, principal: Any) -> list[str]:
        """Record `session_id` for `principal`; returns the sessions evicted to make room."""
        if session_id in self._owners:
            return []
        self._owners[session_id] = principal
        own = self._sessions_of.setdefault(principal, {})
        own[session_id] = None
        evicted: list[str] = []
        if len(own) > self.per_principal:
            evicted.append(self._evict_oldest_of(principal))
        if len(self._owners) > self.limit:
            heaviest = max(self._sessions_of, key=lambda who: len(self._sessions_of[who]))
            evicted.append(self._evict_oldest_of(heaviest))
        return evicted

    def forget(self, session_id: str) -> None:
        principal = self._owners.pop(session_id, None)
        own = self._sessions_of.get(principal)
        if own is not None:
            own.pop(session_id, None)
            if not own:
                del self._sessions_of[principal]

    def _evict_oldest_of(self, principal: Any) -> str:
        oldest = next(iter(self._sessions_of[principal]))
        self.forget(oldest)
        return oldest


SessionCloser = Callable[[str], Awaitable[None]]
"""Closes an evicted session in the app behind `BearerAuth`, so it frees its memory."""


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
    the record. Sessions past the quotas of `SessionOwners` are closed with `close_session`.
    """

    def __init__(
        self,
        app: ASGIApp,
        verify: TokenVerifier,
        *,
        max_sessions: int = 1_000,
        sessions_per_principal: int | None = None,
        close_session: SessionCloser | None = None,
    ) -> None:
        self.app = app
        self.verify = verify
        self.sessions = SessionOwners(max_sessions, sessions_per_principal)
        self.close_session = close_session

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
                    for evicted in self.sessions.claim(opened, principal):
                        if self.close_session is not None:
                            await self.close_session(evicted)
            await send(message)

        return send_and_bind

    async def _principal(self, scope: Scope) -> Any:
        token = token_in(_header(scope.get("headers") or [], "authorization"))
        if token is None:
            raise Unauthorized("A bearer token is required: send 'Authorization: Bearer <token>'.")
        if inspect.iscoroutinefunction(self.verify):
            return await self.verify(token)
        return await anyio.to_thread.run_sync(self.verify, token)

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
    sessions_per_token: int = 32,
    max_sessions: int = 1_000,
) -> str:
    """Serve `server` over streamable HTTP at /mcp/NAME inside `app` (FastAPI or Starlette).

    Adds a route and chains the server's session manager into the app's lifespan, so call it
    before the app starts. `verify_token=None` serves without auth (tests, local tools only).
    `host` is the address the app is served on: loopback hosts get DNS-rebinding protection.
    A token keeps at most `sessions_per_token` sessions open and all tokens `max_sessions`
    (see `SessionOwners`). Returns the mounted path.
    """
    # The SDK's own cap refuses everyone with 503 once reached; ours evicts first, so the SDK's
    # is only a backstop for sessions still opening (twice ours).
    server.streamable_http_app(streamable_http_path="/", host=host, max_sessions=2 * max_sessions)
    manager = server.session_manager
    endpoint: ASGIApp = StreamableHTTPASGIApp(manager)

    async def close_session(session_id: str) -> None:
        # The SDK has no public call to end a session server-side; DELETE needs the client's
        # own request. `_discard_session` is what its idle timeout uses.
        transport = manager._server_instances.get(session_id)
        if transport is not None:
            await manager._discard_session(session_id, transport)

    if verify_token is not None:
        endpoint = BearerAuth(
            endpoint,
            verify_token,
            max_sessions=max_sessions,
            sessions_per_principal=sessions_per_token,
            close_session=close_session,
        )
    path = f"/mcp/{name}"
    app.router.routes.append(Route(path, endpoint=endpoint))

    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        async with manager.run(), outer(asgi_app) as state:
            yield state

    app.router.lifespan_context = lifespan
    return path
