"""The server's error envelope (`{"success": false, "error": {"code", "message", ...}}`) raised as
the typed errors the server raised it for, so a notebook can `except VersionConflict`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphwright.envelope import ERROR_STATUS
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

InvalidRequest = InvalidInput  # the client's name for the server's 4xx about bad input


class VersionConflict(Conflict):
    """The graph is not at the version a write expected (HTTP 409 with `currentVersion`)."""


__all__ = [
    "Conflict",
    "Forbidden",
    "GraphwrightError",
    "InvalidInput",
    "InvalidRequest",
    "NotFound",
    "TooManyRequests",
    "Unauthorized",
    "Unavailable",
    "VersionConflict",
    "error_for",
]

# The statuses the app answers by itself (bad body, too large, wrong media type) are bad input.
_BY_STATUS: dict[int, type[GraphwrightError]] = {
    400: InvalidInput,
    405: InvalidInput,
    406: InvalidInput,
    413: InvalidInput,
    415: InvalidInput,
    **{status: kind for kind, (status, _code) in ERROR_STATUS.items()},
}


def error_for(status: int, body: Any) -> GraphwrightError:
    """The typed error of a failed response (`body` its parsed JSON, or anything else)."""
    error = body.get("error") if isinstance(body, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    message = str(error.get("message") or f"The server answered HTTP {status}")
    kind = _BY_STATUS.get(status, GraphwrightError)
    if kind is Conflict:
        current = error.get("currentVersion")
        kind = VersionConflict if current is not None else Conflict
        return kind(message, current_version=current)
    return kind(message)
