"""Who may use the A2A endpoints: graphwright's own bearer tokens, checked by the auth service.

Every A2A route except the agent card needs a valid token (each binding's door checks it and
puts the caller's principal on the request; see `doors`). A token scoped to one conversation
may only use that A2A context: the request handler, which knows each request's context, raises
`ContextForbidden` for any other, and the door answers 403.
"""

from __future__ import annotations

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.utils.constants import VERSION_HEADER
from starlette.requests import Request

from graphwright.a2a.errors import ContextForbidden
from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService
from graphwright.errors import Forbidden

PRINCIPAL = "graphwright.principal"
ANONYMOUS_ACTOR = "a2a"


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
    """The SDK's call context, with the caller's principal in its state, and the `A2A-Version`
    request parameter taken as the header when there is no header (A2A v1.0, §3.6.1)."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        headers = context.state["headers"]
        version = request.query_params.get(VERSION_HEADER)
        if version is not None and VERSION_HEADER.lower() not in headers:
            headers[VERSION_HEADER.lower()] = version
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
