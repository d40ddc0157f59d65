"""The API's response envelope, `{"success": true, "data": ...}` or `{"success": false, "error":
{"code", "message", ...}}`, shared by every room's router."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import Query, Response
from pydantic import BaseModel

from graphwright.errors import (
    Conflict,
    Forbidden,
    GraphwrightError,
    InvalidInput,
    NotFound,
    TooManyRequests,
    Unauthorized,
    Unavailable,
)

ERROR_STATUS: dict[type[GraphwrightError], tuple[int, str]] = {
    InvalidInput: (422, "invalid_input"),
    NotFound: (404, "not_found"),
    Conflict: (409, "conflict"),
    Forbidden: (403, "forbidden"),
    Unauthorized: (401, "unauthorized"),
    Unavailable: (503, "unavailable"),
    TooManyRequests: (429, "rate_limited"),
}
# A list route's paging parameters, the same on every room's router.
Offset = Annotated[int, Query(ge=0, le=1_000_000)]
Limit = Annotated[int, Query(ge=1, le=500)]


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def ok(
    data: Any = None,
    *,
    version: int | None = None,
    status_code: int = 200,
    message: str | None = None,
) -> Response:
    """A success envelope; `version` (the graph version after a write) also goes in `ETag`."""
    extra: dict[str, Any] = {}
    headers = {}
    if version is not None:
        extra["version"] = version
        headers["ETag"] = f'"{version}"'
    if message:
        extra["message"] = message
    if isinstance(data, BaseModel):
        # pydantic writes the JSON itself, much faster than dumping an intermediate dict.
        tail = b"".join(b"," + orjson.dumps(k) + b":" + orjson.dumps(v) for k, v in extra.items())
        content = b'{"success":true,"data":' + data.model_dump_json(by_alias=True).encode()
        content += tail + b"}"
    else:
        content = orjson.dumps(
            {"success": True, "data": _plain(data), **extra}, option=orjson.OPT_NON_STR_KEYS
        )
    return Response(
        content, status_code=status_code, media_type="application/json", headers=headers
    )


def failure(status_code: int, code: str, message: str, **extra: Any) -> Response:
    body = {"success": False, "error": {"code": code, "message": message, **extra}}
    headers = {"WWW-Authenticate": "Bearer"} if status_code == 401 else None
    return Response(
        orjson.dumps(body, default=str),
        status_code=status_code,
        media_type="application/json",
        headers=headers,
    )


def error_response(exc: GraphwrightError) -> Response:
    for kind in type(exc).__mro__:
        if kind in ERROR_STATUS:
            status_code, code = ERROR_STATUS[kind]
            break
    else:
        status_code, code = 400, "bad_request"
    code = getattr(exc, "code", code)
    status_code = getattr(exc, "http_status", status_code)
    extra: dict[str, Any] = dict(getattr(exc, "details", None) or {})
    if isinstance(exc, Conflict) and exc.current_version is not None:
        extra["currentVersion"] = exc.current_version
    return failure(status_code, code, str(exc), **extra)
