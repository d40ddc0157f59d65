"""FastAPI dependencies that check the bearer token and the conversation scope.

FastAPI runs a plain `def` dependency in its thread pool, and each hand-off waits for a free
thread and then for the event loop: under load those waits were most of an edit's time. So a
dependency that does no I/O is `async def`, in every room; only the token check, when it reads
the database (a token the server has not kept, see `auth.checked`), is handed off."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService

bearer = HTTPBearer(auto_error=False, description="A token from `graphwright token create`.")


async def get_auth_service(request: Request) -> AuthService:
    return request.app.state.auth_service


async def bearer_token(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str | None:
    """The raw bearer token, for routes that must check it again later (long-lived streams)."""
    return credentials.credentials if credentials else None


async def current_principal(
    service: Annotated[AuthService, Depends(get_auth_service)],
    token: Annotated[str | None, Depends(bearer_token)],
) -> Principal:
    return await service.authenticate_from_loop(token)


Caller = Annotated[Principal, Depends(current_principal)]
"""A route parameter: the caller, once its bearer token is checked."""


async def conversation_principal(
    conversation_id: str, principal: Annotated[Principal, Depends(current_principal)]
) -> Principal:
    """The caller, once it is known to be allowed into `conversation_id` (a path parameter)."""
    AuthService.authorize(principal, conversation_id)
    return principal
