"""Errors shared by every room. Adapters map them to HTTP statuses, tool errors and exit codes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class GraphwrightError(Exception):
    """Base class: the message is written for a person to act on."""


class InvalidInput(GraphwrightError):
    """The input is malformed (HTTP 422, CLI exit 2)."""


class NotFound(GraphwrightError):
    """A named thing does not exist (HTTP 404)."""


class Conflict(GraphwrightError):
    """A version mismatch or a duplicate id (HTTP 409)."""

    def __init__(self, message: str, *, current_version: int | None = None) -> None:
        super().__init__(message)
        self.current_version = current_version


class Forbidden(GraphwrightError):
    """Authenticated, but not allowed to touch this resource (HTTP 403)."""


class Unauthorized(GraphwrightError):
    """No valid credentials (HTTP 401)."""


class Unavailable(GraphwrightError):
    """A backend this needs cannot be reached or opened now (HTTP 503)."""


class TooManyRequests(GraphwrightError):
    """The caller is over a rate limit; the message says when to try again (HTTP 429)."""


def problems(
    errors: Iterable[Mapping[str, Any]], *, whole: str = "input", drop: str | None = None
) -> list[str]:
    """pydantic's errors as `where: what` lines (`title: String should have at most 500
    characters`); `whole` names an error about the whole value, `drop` a step left out of
    `where` (FastAPI's `body`)."""
    return [
        f"{'.'.join(str(step) for step in error['loc'] if step != drop) or whole}: {error['msg']}"
        for error in errors
    ]
