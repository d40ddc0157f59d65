"""The doors of A2A's two bindings: every request but the agent card's passes one.

A door checks the caller's token (401 without a valid one), refuses a body that is not JSON
(`application/json` or `application/a2a+json`; anything else is 415), reads the body within the
server's limit (413), then calls the binding's endpoint and answers whatever it raises in the
binding's own shape (`errors`). JSON-RPC's door also reads the body as JSON: a body Python's
reader refuses (not UTF-8, nested past its recursion limit, an integer of more than 4,300
digits) is the client's parse error, not an internal one.
"""

from __future__ import annotations

import inspect
import json
import types
from collections.abc import Awaitable, Callable
from typing import Any

from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.utils.errors import ContentTypeNotSupportedError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from graphwright.a2a.auth import PRINCIPAL
from graphwright.a2a.errors import (
    HTTP_STATUS,
    PARSE_ERROR_CODE,
    TOO_LARGE,
    ContextForbidden,
    rest_error,
    rest_error_response,
    rpc_error,
)
from graphwright.auth.header import token_in
from graphwright.auth.service import AuthService
from graphwright.errors import Unauthorized

Endpoint = Callable[[Request], Awaitable[Response]]
JSON_MEDIA_TYPES = frozenset({"application/json", "application/a2a+json"})


async def _authenticated(request: Request, auth: AuthService | None) -> Unauthorized | None:
    """Put the caller's principal on the request; the error when the token is not valid
    (`auth` None: no check, for tests of the protocol)."""
    if auth is None:
        return None
    token = token_in(request.headers.get("authorization", ""))
    try:
        principal = await auth.authenticate_from_loop(token)
    except Unauthorized as exc:
        return exc
    request.scope[PRINCIPAL] = principal
    return None


async def _not_json_typed(request: Request) -> ContentTypeNotSupportedError | None:
    """Why the request's body (read here, within the body limit) is refused for its
    Content-Type, or None."""
    if not await request.body():
        return None
    given = request.headers.get("content-type", "")
    if given.partition(";")[0].strip().lower() in JSON_MEDIA_TYPES:
        return None
    return ContentTypeNotSupportedError(
        message=f"The body's Content-Type is '{given or 'none'}'; "
        "send application/a2a+json or application/json"
    )


def not_utf8(body: bytes) -> str | None:
    """Why `body` is not UTF-8 JSON text, or None. `json.loads` guesses UTF-16 or UTF-32 from NUL
    bytes, even in valid UTF-8, so both must agree."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return str(exc)
    encoding = json.detect_encoding(body)
    return None if encoding == "utf-8" else f"its NUL bytes read as {encoding}"


async def _not_json(request: Request) -> str | None:
    """Why the body cannot be read as JSON, or None; the JSON read is kept on the request, where
    the JSON-RPC dispatcher reads it again."""
    problem = not_utf8(await request.body())
    if problem:
        return f"The body is not UTF-8: {problem}"
    try:
        await request.json()
    except (ValueError, RecursionError) as exc:
        return f"The body cannot be read as JSON: {exc}"
    return None


def rpc_door(endpoint: Endpoint, auth: AuthService | None) -> Endpoint:
    """The JSON-RPC endpoint behind its door."""

    async def door(request: Request) -> Response:
        refused = await _authenticated(request, auth)
        if refused is not None:
            return rpc_error(401, "UNAUTHENTICATED", str(refused))
        try:
            wrong_type = await _not_json_typed(request)
            if wrong_type is not None:
                status = HTTP_STATUS[ContentTypeNotSupportedError]
                return JSONResponse(build_error_response(None, wrong_type), status_code=status)
            problem = await _not_json(request)
            if problem is not None:
                # Parse errors are answered as JSON-RPC's own, with HTTP 200.
                error = {"code": PARSE_ERROR_CODE, "message": problem}
                return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error})
            return await endpoint(request)
        except ContextForbidden as exc:
            return rpc_error(403, "PERMISSION_DENIED", exc.detail, exc.request_id)
        except HTTPException as exc:
            if exc.status_code != TOO_LARGE:
                raise
            return rpc_error(TOO_LARGE, "PAYLOAD_TOO_LARGE", exc.detail)

    return door


def rest_door(endpoint: Endpoint, auth: AuthService | None) -> Endpoint:
    """An HTTP+JSON endpoint behind its door."""

    async def door(request: Request) -> Response:
        refused = await _authenticated(request, auth)
        if refused is not None:
            return rest_error(401, "UNAUTHENTICATED", "UNAUTHENTICATED", str(refused))
        try:
            wrong_type = await _not_json_typed(request)
            if wrong_type is not None:
                return rest_error_response(wrong_type)
            return await endpoint(request)
        except Exception as exc:
            return rest_error_response(exc)

    return door


def rest_routes(routes: list[BaseRoute], auth: AuthService | None) -> list[BaseRoute]:
    """The HTTP+JSON binding's routes, each behind its door. a2a-sdk's endpoints answer 500 for
    any exception outside its own error table and the table's 400s where A2A v1.0 gives 409 and
    415; the door calls each endpoint without that decorator and answers its errors itself."""
    doors: list[BaseRoute] = []
    for route in routes:
        if isinstance(route, Mount):
            doors.append(Mount(route.path, routes=rest_routes(list(route.routes), auth)))
        elif isinstance(route, Route):
            endpoint = rest_door(_undecorated(route.endpoint), auth)
            doors.append(Route(route.path, endpoint=endpoint, methods=route.methods))
    return doors


def _undecorated(endpoint: Any) -> Endpoint:
    if isinstance(endpoint, types.MethodType):
        return types.MethodType(inspect.unwrap(endpoint.__func__), endpoint.__self__)
    return inspect.unwrap(endpoint)
