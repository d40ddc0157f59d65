"""How the app meets HTTP: every error in the JSON envelope, even those raised before FastAPI
sees a request (an over-long URL, bad bytes) or by a bug (a 500 that keeps the connection)."""

from __future__ import annotations

import gc
import logging
import socket
from collections.abc import Mapping
from typing import Any

import orjson
import uvicorn
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from graphwright.envelope import failure

logger = logging.getLogger("graphwright.server")


def envelope_bytes(code: str, message: str, **extra: Any) -> bytes:
    return orjson.dumps({"success": False, "error": {"code": code, "message": message, **extra}})


class EnvelopeH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, answering malformed requests with the JSON envelope."""

    def send_400_response(self, msg: str) -> None:
        body = envelope_bytes(
            "bad_request",
            f"{msg.rstrip('.')}: the request line or headers are malformed or too long",
        )
        head = (
            b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n"
        )
        self.transport.write(head + body)
        self.transport.close()


class UnexpectedErrors:
    """A bug answers 500 in the envelope and the connection stays open for the next request
    (Starlette's own handler re-raises, and uvicorn then closes the connection)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception:
            logger.exception("Unexpected error in %s %s", scope["method"], scope["path"])
            if started:
                raise
            body = envelope_bytes("internal_error", "An unexpected error occurred on the server")
            await send(
                {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})


def json_error_position(body: bytes, offset: int) -> dict[str, int]:
    """Line and column (both from 1) of a character offset in a request body."""
    before = body[:offset].decode("utf-8", "replace")
    line = before.count("\n") + 1
    column = len(before) - (before.rfind("\n") + 1) + 1
    return {"line": line, "column": column, "offset": offset}


BODY_PARSE_ERROR = (
    "There was an error parsing the body"  # FastAPI's words for a body it cannot read
)


def json_syntax_failure(body: bytes, error: Mapping[str, Any]) -> Response:
    """422 for FastAPI's `json_invalid` error, saying where in the body and what is wrong."""
    where = json_error_position(body, error["loc"][-1])
    reason = error.get("ctx", {}).get("error", "not JSON")
    message = (
        f"The body is not valid JSON at line {where['line']}, column {where['column']}"
        f" (character {where['offset']}): {reason}"
    )
    return failure(422, "invalid_json", message, position=where)


def undecodable_body_failure(body: bytes) -> Response:
    """422 for a body FastAPI could not read at all: where its bytes stop being UTF-8."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = json_error_position(body, exc.start)
        message = (
            f"The body is not valid JSON at line {where['line']}, column {where['column']} "
            f"(byte {exc.start}): it is not UTF-8 text"
        )
        return failure(422, "invalid_json", message, position=where)
    return failure(422, "invalid_json", "The body could not be read as JSON")


# On SIGTERM, requests still running after this long are cancelled (their queries' workers are
# killed), and event streams, which never end by themselves, are closed.
GRACEFUL_SHUTDOWN_SECONDS = 3
# An idle connection is kept longer than clients keep theirs (httpx 5 s, load balancers up to
# 60 s), so that a client never sends its next request just as the server closes it: uvicorn's
# default, 5 s, lost such requests. nginx's default.
KEEP_ALIVE_SECONDS = 75


class GraphwrightServer(uvicorn.Server):
    """uvicorn's server, which moves what the app made at startup out of the garbage collector's
    full passes once it has started.

    The modules, the app and its services (some 400,000 objects) live as long as the process,
    and a full collection scanned them all: 0.2 s idle, 0.4 to 1.2 s under the load benchmark's
    mix, while no request moved. Frozen, they are never scanned again; a full pass scans only
    what came after. Tests that run many apps in one process keep uvicorn's own server.
    """

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        gc.collect()  # what startup left over is freed first, not frozen
        gc.freeze()


def server_config(app: ASGIApp, *, host: str, port: int, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration `graphwright serve` (and live-server tests) run with."""
    options.setdefault("timeout_graceful_shutdown", GRACEFUL_SHUTDOWN_SECONDS)
    options.setdefault("timeout_keep_alive", KEEP_ALIVE_SECONDS)
    return uvicorn.Config(app, host=host, port=port, http=EnvelopeH11Protocol, **options)
