"""How a command beside the server reaches the knowledge base: in its own process, or through
the running server's API when that server holds the embedded store (Oxigraph lets one process
open it). Both ways answer with the same models, so a command's output is the same either way.

Through the server, the command uses GRAPHWRIGHT_TOKEN, or mints a short-lived token of its own
in the home it shares with the server (recorded as its actor) and revokes it when done.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

import httpx

from graphwright.auth.service import AuthService
from graphwright.db import Database
from graphwright.errors import (
    Conflict,
    Forbidden,
    GraphwrightError,
    InvalidInput,
    NotFound,
    Unauthorized,
    Unavailable,
)
from graphwright.knowledge.backends import open_backend
from graphwright.knowledge.backends.stores import StoreUnavailable
from graphwright.knowledge.schemas import (
    AssetMetadata,
    PublicationRequestView,
    QueryAnswer,
    RequestPage,
    SampleDataRemoval,
)
from graphwright.knowledge.service import KnowledgeService
from graphwright.server_record import running_server
from graphwright.settings import Settings

COMMAND_TOKEN_TTL = timedelta(minutes=15)
COMMAND_TOKEN_PURPOSE = "a graphwright kb command went through the running server with it"
REQUESTS_SHOWN = 500
ERRORS_BY_STATUS: dict[int, type[GraphwrightError]] = {
    400: InvalidInput, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    422: InvalidInput,
}  # fmt: skip


class KnowledgeAccess(Protocol):
    """What the `kb` commands do with the knowledge base."""

    async def publish(
        self, content: Any, *, title: str | None, revision_of: str | None
    ) -> PublicationRequestView: ...

    async def jsonld(self, ual: str) -> Any: ...

    async def nquads(self, ual: str) -> list[str]: ...

    async def metadata(self, ual: str) -> AssetMetadata: ...

    async def query(self, sparql: str, *, limit: int | None) -> QueryAnswer: ...

    async def requests(self, *, status: str | None) -> tuple[list[PublicationRequestView], int]: ...

    async def approve(self, request_id: str, *, content: Any | None) -> PublicationRequestView: ...

    async def reject(self, request_id: str, *, reason: str) -> PublicationRequestView: ...

    async def export(self, fmt: str) -> bytes: ...

    async def remove_sample_data(self) -> SampleDataRemoval: ...


@dataclass
class InProcess:
    """The knowledge service in this process, acting for `actor`."""

    service: KnowledgeService
    actor: str

    async def publish(
        self, content: Any, *, title: str | None, revision_of: str | None
    ) -> PublicationRequestView:
        return await self.service.publish_now(
            content, actor=self.actor, title=title, revision_of=revision_of, source="cli"
        )

    async def jsonld(self, ual: str) -> Any:
        return await self.service.get_jsonld(ual)

    async def nquads(self, ual: str) -> list[str]:
        return (await self.service.get_asset(ual)).public

    async def metadata(self, ual: str) -> AssetMetadata:
        return await self.service.metadata(ual)

    async def query(self, sparql: str, *, limit: int | None) -> QueryAnswer:
        return await self.service.query(sparql, limit=limit)

    async def requests(self, *, status: str | None) -> tuple[list[PublicationRequestView], int]:
        return self.service.list_requests(status=status, limit=REQUESTS_SHOWN)

    async def approve(self, request_id: str, *, content: Any | None) -> PublicationRequestView:
        return await self.service.approve(request_id, approver=self.actor, content=content)

    async def reject(self, request_id: str, *, reason: str) -> PublicationRequestView:
        return self.service.reject(request_id, by=self.actor, reason=reason)

    async def export(self, fmt: str) -> bytes:
        return await self.service.export(fmt)

    async def remove_sample_data(self) -> SampleDataRemoval:
        return await self.service.remove_sample_data(actor=self.actor)


@dataclass
class ThroughServer:
    """The running server's knowledge API; it records the token's name as the actor."""

    http: httpx.AsyncClient

    async def publish(
        self, content: Any, *, title: str | None, revision_of: str | None
    ) -> PublicationRequestView:
        body = {"content": content, "title": title, "revisionOf": revision_of}
        filed = PublicationRequestView.model_validate(
            await self._data("POST", "/requests", json=body)
        )
        return await self.approve(filed.id, content=None)

    async def jsonld(self, ual: str) -> Any:
        return await self._data("GET", f"/assets/{ual}")

    async def nquads(self, ual: str) -> list[str]:
        response = await self._send("GET", f"/assets/{ual}", params={"format": "nquads"})
        return response.text.splitlines()

    async def metadata(self, ual: str) -> AssetMetadata:
        return AssetMetadata.model_validate(await self._data("GET", f"/metadata/{ual}"))

    async def query(self, sparql: str, *, limit: int | None) -> QueryAnswer:
        body = {"query": sparql, "limit": limit}
        return QueryAnswer.model_validate(await self._data("POST", "/query", json=body))

    async def requests(self, *, status: str | None) -> tuple[list[PublicationRequestView], int]:
        params: dict[str, Any] = {"limit": REQUESTS_SHOWN}
        if status:
            params["status"] = status
        page = RequestPage.model_validate(await self._data("GET", "/requests", params=params))
        return page.requests, page.total

    async def approve(self, request_id: str, *, content: Any | None) -> PublicationRequestView:
        body = {"content": content} if content is not None else None
        data = await self._data("POST", f"/requests/{request_id}/approve", json=body)
        return PublicationRequestView.model_validate(data)

    async def reject(self, request_id: str, *, reason: str) -> PublicationRequestView:
        data = await self._data("POST", f"/requests/{request_id}/reject", json={"reason": reason})
        return PublicationRequestView.model_validate(data)

    async def export(self, fmt: str) -> bytes:
        return (await self._send("GET", "/export", params={"format": fmt})).content

    async def remove_sample_data(self) -> SampleDataRemoval:
        return SampleDataRemoval.model_validate(await self._data("DELETE", "/sample-data"))

    async def _data(self, method: str, path: str, **options: Any) -> Any:
        return (await self._send(method, path, **options)).json()["data"]

    async def _send(self, method: str, path: str, **options: Any) -> httpx.Response:
        try:
            response = await self.http.request(method, path, **options)
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"The knowledge base is held by the server at {self.http.base_url}, which did "
                f"not answer: {exc}"
            ) from None
        if response.is_success:
            return response
        try:
            message = str(response.json()["error"]["message"])
        except (ValueError, KeyError, TypeError):
            message = f"HTTP {response.status_code} from {response.url}"
        raise ERRORS_BY_STATUS.get(response.status_code, Unavailable)(message)


@asynccontextmanager
async def open_access(settings: Settings, *, actor: str) -> AsyncIterator[KnowledgeAccess]:
    """The knowledge base in this process, or through the server that holds its store."""
    db = Database(settings.resolved_database_url)
    try:
        try:
            backend = open_backend(settings)
        except StoreUnavailable:
            url = running_server(settings.home)
            if url is None:
                raise  # held by a process that is not a server: the error says what to do
            async with _through_server(url, settings, db, actor) as access:
                yield access
            return
        service = KnowledgeService.from_settings(db, backend, settings)
        try:
            await service.ensure_started(sample_data=settings.kb_sample_data)
            yield InProcess(service, actor)
        finally:
            await service.aclose()
    finally:
        db.dispose()


@asynccontextmanager
async def _through_server(
    url: str, settings: Settings, db: Database, actor: str
) -> AsyncIterator[ThroughServer]:
    auth = AuthService(db)
    own = None
    if settings.token is not None:
        token = settings.token.get_secret_value()
    else:
        own = token = auth.mint(label=actor, ttl=COMMAND_TOKEN_TTL, purpose=COMMAND_TOKEN_PURPOSE)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with httpx.AsyncClient(
            base_url=f"{url.rstrip('/')}/api/knowledge", headers=headers, timeout=120
        ) as http:
            yield ThroughServer(http)
    finally:
        if own is not None:
            auth.revoke_token(own)
