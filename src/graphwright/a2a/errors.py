"""How A2A errors reach a client, alike on both bindings.

- `as_a2a_errors` wraps every operation of the request handler, which both bindings call: what
  leaves it is an a2a-sdk `A2AError` (or `ContextForbidden`). The handler refuses a client's
  mistakes with the A2A error that names them; anything else becomes an `InternalError` that
  names nothing inside the server (no SQL, no driver, no path): the server's log has the rest.
- The HTTP+JSON binding answers with the HTTP status of A2A v1.0's error table (§5.4, as the
  A2A TCK's 1.0 line checks it): 409 for `TaskNotCancelableError` and 415 for
  `ContentTypeNotSupportedError`, where a2a-sdk answers 400. Its body is `google.rpc.Status`.
- JSON-RPC answers A2A errors with HTTP 200, as a2a-sdk does; what is refused before the
  request is read as JSON-RPC (no token, another conversation's context, a body too large or
  not JSON) has its HTTP status (401, 403, 413, 415) and a JSON-RPC error body.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from a2a.utils.error_handlers import build_rest_error_payload
from a2a.utils.errors import (
    A2AError,
    ContentTypeNotSupportedError,
    InternalError,
    TaskNotCancelableError,
)
from google.protobuf.json_format import ParseError
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, Response

logger = logging.getLogger(__name__)

HTTP_STATUS: dict[type[A2AError], int] = {
    TaskNotCancelableError: 409,
    ContentTypeNotSupportedError: 415,
}
# JSON-RPC has no codes for a refused token or scope: the HTTP status says which, and so does
# the google.rpc.ErrorInfo `reason` in `data`, the shape a2a-sdk gives its own errors.
INVALID_REQUEST_CODE = -32600
PARSE_ERROR_CODE = -32700
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
ERROR_DOMAIN = "a2a-protocol.org"
INTERNAL_MESSAGE = "The server failed on this request; its log has the details"
TOO_LARGE = 413


class ContextForbidden(HTTPException):
    """A token scoped to another conversation. Raised in the request handler; an HTTP exception,
    so that the JSON-RPC dispatcher lets it through to the binding's door."""

    def __init__(self, message: str, request_id: Any) -> None:
        super().__init__(403, message)
        self.request_id = request_id


def a2a_error(exc: Exception) -> A2AError:
    """The A2A error that says what `exc` means to the client."""
    if isinstance(exc, A2AError):
        return exc
    logger.error("An A2A request failed", exc_info=exc)
    return InternalError(message=INTERNAL_MESSAGE)


@contextmanager
def as_a2a_errors() -> Iterator[None]:
    """Whatever the block raises leaves it as an A2A error (or `ContextForbidden`)."""
    try:
        yield
    except (A2AError, ContextForbidden):
        raise
    except Exception as exc:
        raise a2a_error(exc) from exc


def is_too_large(exc: Exception) -> bool:
    """The body-size limit's refusal, raised while the body is read."""
    return isinstance(exc, HTTPException) and exc.status_code == TOO_LARGE


def _error_info(reason: str) -> list[dict[str, str]]:
    return [{"@type": ERROR_INFO, "reason": reason, "domain": ERROR_DOMAIN}]


def _answer(body: dict[str, Any], status_code: int) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if status_code == 401 else None
    return JSONResponse(body, status_code=status_code, headers=headers)


def rpc_error(
    status_code: int, reason: str, message: str, request_id: Any = None, *, code: int | None = None
) -> Response:
    """A JSON-RPC error answered with an HTTP status (`request_id` None: the request was not
    read)."""
    error = {
        "code": INVALID_REQUEST_CODE if code is None else code,
        "message": message,
        "data": _error_info(reason),
    }
    return _answer({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code)


def rest_error(status_code: int, status: str, reason: str, message: str) -> Response:
    """An error of the HTTP+JSON binding: google.rpc.Status, as a2a-sdk gives its own."""
    error = {"code": status_code, "status": status, "message": message}
    return _answer({"error": {**error, "details": _error_info(reason)}}, status_code)


def rest_error_response(exc: Exception) -> Response:
    """The HTTP+JSON binding's answer to whatever a request raised."""
    if isinstance(exc, ContextForbidden):
        return rest_error(403, "PERMISSION_DENIED", "PERMISSION_DENIED", exc.detail)
    if is_too_large(exc):
        assert isinstance(exc, HTTPException)
        return rest_error(TOO_LARGE, "INVALID_ARGUMENT", "PAYLOAD_TOO_LARGE", exc.detail)
    if isinstance(exc, ParseError):  # a body or query the binding cannot read
        payload = build_rest_error_payload(exc)
    else:
        error = a2a_error(exc)
        payload = build_rest_error_payload(error)
        payload["error"]["code"] = HTTP_STATUS.get(type(error), payload["error"]["code"])
    logger.warning("A2A request refused: %s", payload["error"]["message"])
    return _answer(payload, payload["error"]["code"])
