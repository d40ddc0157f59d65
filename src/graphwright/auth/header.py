"""The bearer token of an `Authorization` header, for the adapters that read headers themselves
(A2A and MCP over HTTP; FastAPI routes use `auth.api`). Kept apart from `auth.api` so that the
MCP servers load without FastAPI."""

from __future__ import annotations


def token_in(authorization: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header's value, else None."""
    scheme, _, token = authorization.partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None
