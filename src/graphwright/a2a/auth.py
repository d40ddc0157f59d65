"""Who may use the A2A endpoint: graphwright's own bearer tokens, checked by the auth service.

Every A2A route except the agent card needs a valid token. Without one the answer is HTTP 401
with `WWW-Authenticate: Bearer` and a JSON-RPC error body; a token scoped to one conversation may
only use that A2A context, and any other gets HTTP 403 with a JSON-RPC error body (raised as
`ContextForbidden` by the request handler, which knows each request's context).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.routes import DefaultServerCallContextBuilder
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from graphwright.auth.header import token_in
from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService
from graphwright.errors import Forbidden, Unauthorized

PRINCIPAL = "graphwright.principal"
ANONYMOUS_ACTOR = "a2a"
# JSON-RPC has no codes for these: the HTTP status says which, and so does the
# google.rpc.ErrorInfo `reason` in `data`, the shape a2a-sdk gives its own errors.
AUTH_ERROR_CODE = -32600
PARSE_ERROR_CODE = -32700
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
ERROR_DOMAIN = "a2a-protocol.org"


class ContextForbidden(HTTPException):
    """Raised inside the JSON-RPC dispatcher, which lets HTTP exceptions through to the route."""

    def __init__(self, message: str, request_id: Any) -> None:
        super().__init__(403, message)
        self.request_id = request_id


def rpc_error(status_code: int, reason: str, message: str, request_id: Any = None) -> Response:
    """A JSON-RPC error response (`request_id` None: the request was not read)."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": AUTH_ERROR_CODE, "message": message, "data": _error_info(reason)},
    }
    return _refusal(body, status_code)


def _error_info(reason: str) -> list[dict[str, str]]:
    return [{"@type": ERROR_INFO, "reason": reason, "domain": ERROR_DOMAIN}]


def _refusal(body: dict[str, Any], status_code: int) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if status_code == 401 else None
    return JSONResponse(body, status_code=status_code, headers=headers)


async def _authenticated(request: Request, auth: AuthService | None) -> Unauthorized | None:
    """Put the caller's principal on the request; the error when the token is not valid."""
    if auth is None:
        return None
    token = token_in(request.headers.get("authorization", ""))
    try:
        principal = await asyncio.to_thread(auth.authenticate, token)
    except Unauthorized as exc:
        return exc
    request.scope[PRINCIPAL] = principal
    return None


def not_utf8(body: bytes) -> str | None:
    """Why `body` is not UTF-8 JSON text, or None. `json.loads` guesses UTF-16 or UTF-32 from NUL
    bytes, even in valid UTF-8, so both must agree."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return str(exc)
    encoding = json.detect_encoding(body)
    return None if encoding == "utf-8" else f"its NUL bytes read as {encoding}"


def guarded(
    endpoint: Callable[[Request], Awaitable[Response]], auth: AuthService | None
) -> Callable[[Request], Awaitable[Response]]:
    """The JSON-RPC endpoint behind a token check (`auth` None: no check, for tests of the
    protocol)."""

    async def guarded_endpoint(request: Request) -> Response:
        refused = await _authenticated(request, auth)
        if refused is not None:
            return rpc_error(401, "UNAUTHENTICATED", str(refused))
        problem = not_utf8(await request.body())
        if problem:
            # The SDK would answer -32603 (internal error) and log a traceback: it is the
            # client's parse error.
            return JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": PARSE_ERROR_CODE,
                        "message": f"The body is not UTF-8: {problem}",
                    },
                }
            )
        try:
            return await endpoint(request)
        except ContextForbidden as exc:
            return rpc_error(403, "PERMISSION_DENIED", exc.detail, exc.request_id)

    return guarded_endpoint


def rest_error(status_code: int, reason: str, message: str) -> Response:
    """An error of the HTTP+JSON binding: google.rpc.Status, as a2a-sdk gives its own."""
    error = {"code": status_code, "status": reason, "message": message}
    return _refusal({"error": {**error, "details": _error_info(reason)}}, status_code)


def rest_guarded(
    endpoint: Callable[[Request], Awaitable[Response]], auth: AuthService | None
) -> Callable[[Request], Awaitable[Response]]:
    """An HTTP+JSON endpoint behind the same token check, answering in that binding's shape."""

    async def guarded_endpoint(request: Request) -> Response:
        refused = await _authenticated(request, auth)
        if refused is not None:
            return rest_error(401, "UNAUTHENTICATED", str(refused))
        try:
            return await endpoint(request)
        except ContextForbidden as exc:
            return rest_error(403, "PERMISSION_DENIED", exc.detail)

    return guarded_endpoint


class TokenUser(User):
    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self.principal.actor


class CallContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call context, with the caller's principal in its state."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        principal = request.scope.get(PRINCIPAL)
        if principal is not None:
            context.state[PRINCIPAL] = principal
            context.user = TokenUser(principal)
        return context


def principal_of(context: ServerCallContext) -> Principal | None:
    return context.state.get(PRINCIPAL)


def actor_of(context: ServerCallContext) -> str:
    principal = principal_of(context)
    return principal.actor if principal is not None else ANONYMOUS_ACTOR


def authorize_context(context: ServerCallContext, context_id: str) -> None:
    principal = principal_of(context)
    if principal is None:
        return
    try:
        AuthService.authorize(principal, context_id)
    except Forbidden as exc:
        raise ContextForbidden(str(exc), context.state.get("request_id")) from None
