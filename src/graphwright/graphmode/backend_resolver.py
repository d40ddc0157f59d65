"""Which backend serves one graph tool call: the call's `databaseContext`, else
`GRAPHWRIGHT_API_URL`/`GRAPHWRIGHT_TOKEN`/`GRAPHWRIGHT_CONVERSATION`, else the embedded database.
Over HTTP, only this server's own graph API, with the caller's token."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from graphwright.auth.models import Principal
from graphwright.db import Database
from graphwright.errors import Forbidden, InvalidInput
from graphwright.graphmode.client import EmbeddedGraphBackend, GraphBackend
from graphwright.graphmode.client_rest import RestGraphBackend
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.service import GraphService
from graphwright.settings import Settings

HTTP_TIMEOUT = httpx.Timeout(120.0, connect=10.0)


@dataclass(frozen=True)
class DatabaseContext:
    """Seed 004's `databaseContext`: which conversation, and which API to reach it through."""

    conversation_id: str
    api_base_url: str | None = None
    access_token: str | None = None

    @classmethod
    def parse(cls, raw: Any) -> DatabaseContext:
        if not isinstance(raw, Mapping):
            raise InvalidInput(
                "databaseContext must be an object {conversationId, apiBaseUrl, accessToken}"
            )
        conversation = raw.get("conversationId")
        if not isinstance(conversation, str) or not conversation.strip():
            raise InvalidInput("databaseContext.conversationId must be a non-empty string")
        api = raw.get("apiBaseUrl") or None
        token = raw.get("accessToken") or None
        if api is not None and (
            not isinstance(api, str) or urlsplit(api).scheme not in ("http", "https")
        ):
            raise InvalidInput("databaseContext.apiBaseUrl must be an http or https URL")
        if token is not None and not isinstance(token, str):
            raise InvalidInput("databaseContext.accessToken must be a string")
        return cls(conversation.strip(), api, token)


@dataclass(frozen=True)
class HttpCaller:
    """Who sent a tool call over streamable HTTP: this server's own API address (from the
    listening socket, never the Host header), the caller's bearer token and the conversation
    that token is scoped to (when the app's bearer check let it through)."""

    own_api: str
    token: str | None
    conversation: str | None = None

    @classmethod
    def of(cls, scope: Mapping[str, Any], headers: Mapping[str, str]) -> HttpCaller:
        host, port = scope["server"]
        host = f"[{host}]" if ":" in host else host
        scheme = "https" if scope.get("scheme") == "https" else "http"
        scheme_name, _, token = headers.get("authorization", "").partition(" ")
        bearer = token.strip() if scheme_name.lower() == "bearer" and token.strip() else None
        principal = scope.get("state", {}).get("principal")
        scoped = principal.conversation_id if isinstance(principal, Principal) else None
        return cls(f"{scheme}://{host}:{port}", bearer, scoped)


_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    host = "loopback" if host in _LOOPBACK else host
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, host, parts.port or default


def _require_same_server(url: str, *allowed: str) -> None:
    if _origin(url) not in {_origin(other) for other in allowed}:
        raise Forbidden(
            f"Over HTTP this server reaches only its own graph API; databaseContext.apiBaseUrl "
            f"'{url}' is another server"
        )


NO_CONVERSATION = (
    "No conversation selected: the client must pass databaseContext.conversationId, or the "
    "server must be started with GRAPHWRIGHT_CONVERSATION set"
)


class BackendResolver:
    """Builds the backend of one tool call; owns the HTTP clients and the embedded service."""

    def __init__(self, settings: Settings, service: GraphService | None = None) -> None:
        self.settings = settings
        self._service = service
        self._clients: dict[str, httpx.AsyncClient] = {}

    def resolve(
        self, context: DatabaseContext | None, caller: HttpCaller | None = None
    ) -> GraphBackend:
        """The backend of one call. `caller` is set when the call came over HTTP: then a call
        without databaseContext works on the conversation its token is scoped to, and the
        graph is reached only through this server's own REST API (or GRAPHWRIGHT_API_URL) with
        a bearer token, so a token scoped to one conversation cannot reach another, and a
        databaseContext cannot send this server to any other address."""
        scoped = caller.conversation if caller else None
        conversation = context.conversation_id if context else scoped or self.settings.conversation
        if not conversation:
            raise InvalidInput(NO_CONVERSATION)
        given_token = context.access_token if context else None
        if caller is not None:
            target = self.settings.api_url or caller.own_api
            if context and context.api_base_url:
                _require_same_server(context.api_base_url, target, caller.own_api)
            token = given_token or caller.token
            return RestGraphBackend(self._client(target), conversation, token)
        if context and context.api_base_url:
            return RestGraphBackend(self._client(context.api_base_url), conversation, given_token)
        if self.settings.api_url:
            settings_token = self.settings.token.get_secret_value() if self.settings.token else None
            token = given_token or settings_token
            return RestGraphBackend(self._client(self.settings.api_url), conversation, token)
        return EmbeddedGraphBackend(self.service, conversation)

    @property
    def service(self) -> GraphService:
        if self._service is None:
            db = Database(self.settings.resolved_database_url)
            self._service = GraphService(db, create_graph_events(db))
        return self._service

    def _client(self, base_url: str) -> httpx.AsyncClient:
        """One keep-alive client per API address; tokens travel per request."""
        key = base_url.rstrip("/")
        if key not in self._clients:
            # The bearer token must reach this API only, never an environment-configured proxy.
            self._clients[key] = httpx.AsyncClient(
                base_url=key, timeout=HTTP_TIMEOUT, trust_env=False
            )
        return self._clients[key]

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
