"""Where the graph MCP server reads and writes a conversation's graph.

`GraphBackend` is what the tools need. Two implementations:
- `RestGraphBackend` talks to `/api/graph/{conversationId}/...` over HTTP with a bearer token (seed
  004's `databaseContext` protocol), and turns the `{"success": false, "error": ...}` envelope back
  into `graphwright.errors`.
- `EmbeddedGraphBackend` calls `GraphService` in this process (on a worker thread: SQLAlchemy is
  synchronous).

`BackendResolver.resolve(context)` picks one per call: the call's `databaseContext`, else
`GRAPHWRIGHT_API_URL`/`GRAPHWRIGHT_TOKEN`/`GRAPHWRIGHT_CONVERSATION`, else the embedded database.
A conversation without a graph reads as an empty graph at version 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import quote, urlsplit

import anyio.to_thread
import httpx
import orjson
from pydantic import BaseModel, TypeAdapter

from graphwright.auth.models import Principal
from graphwright.db import Database
from graphwright.envelope import ERROR_STATUS
from graphwright.errors import Conflict, Forbidden, GraphwrightError, InvalidInput, NotFound
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.schemas import (
    BatchOperation,
    ChangesetSummary,
    Edge,
    EdgeInput,
    EdgePatch,
    GraphState,
    GraphSummary,
    HistoryPage,
    ImportReport,
    Node,
    NodeInput,
    NodePatch,
    NodeSelection,
    Removal,
    Written,
)
from graphwright.graphmode.service import GraphService
from graphwright.settings import Settings

T = TypeVar("T")
Row = dict[str, Any]

MCP_ACTOR = "mcp:graph"
STATE_PAGE = 10_000  # nodes per request when the REST backend reads a whole graph
HTTP_TIMEOUT = httpx.Timeout(120.0, connect=10.0)


@dataclass(frozen=True)
class GraphRows:
    """Nodes and edges as plain rows (what `analysis` and `summary` read), in id order."""

    nodes: list[Row]
    edges: list[Row]
    version: int
    has_more: bool = False  # a window: more nodes follow it


class GraphBackend(Protocol):
    conversation_id: str

    async def get_node(self, node_id: str) -> Node: ...
    async def get_edge(self, edge_id: str) -> Edge: ...
    async def summary(self) -> GraphSummary | None: ...
    async def rows(self) -> GraphRows: ...
    async def window(
        self, offset: int, limit: int, node_types: Sequence[str] | None = None
    ) -> GraphRows: ...
    async def neighborhood(self, node_id: str, depth: int, limit: int) -> GraphRows: ...
    async def history(self, offset: int, limit: int) -> HistoryPage: ...
    async def export(self) -> str: ...

    async def add_node(self, node: NodeInput) -> Written[Node]: ...
    async def update_node(self, node_id: str, patch: NodePatch) -> Written[Node]: ...
    async def remove_node(self, node_id: str) -> Written[Removal]: ...
    async def add_edge(self, edge: EdgeInput) -> Written[Edge]: ...
    async def update_edge(self, edge_id: str, patch: EdgePatch) -> Written[Edge]: ...
    async def remove_edge(self, edge_id: str) -> Written[Removal]: ...
    async def add_nodes(self, nodes: list[NodeInput]) -> Written[list[Node]]: ...
    async def add_edges(self, edges: list[EdgeInput]) -> Written[list[Edge]]: ...
    async def remove_nodes(
        self, selection: NodeSelection, *, preview: bool
    ) -> Written[Removal]: ...
    async def remove_edges(self, edge_ids: list[str], *, preview: bool) -> Written[Removal]: ...
    async def batch(self, operations: list[BatchOperation]) -> Written[list[Any]]: ...
    async def import_graph(
        self, graph: dict[str, Any] | str, fmt: str
    ) -> Written[ImportReport]: ...
    async def merge_nodes(self, keep: str, remove: list[str]) -> Written[Node]: ...
    async def undo(self) -> Written[ChangesetSummary]: ...
    async def redo(self) -> Written[ChangesetSummary]: ...
    async def revert(self, version: int) -> Written[ChangesetSummary]: ...


# --- embedded --------------------------------------------------------------------------------


class EmbeddedGraphBackend:
    """GraphService in this process."""

    def __init__(self, service: GraphService, conversation_id: str, actor: str = MCP_ACTOR):
        self.service = service
        self.conversation_id = conversation_id
        self.actor = actor

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await anyio.to_thread.run_sync(lambda: fn(self.conversation_id, *args, **kwargs))

    async def _write(self, fn: Callable[..., Written[T]], *args: Any, **kwargs: Any) -> Written[T]:
        return await self._run(fn, *args, actor=self.actor, **kwargs)

    async def get_node(self, node_id: str) -> Node:
        return await self._run(self.service.get_node, node_id)

    async def get_edge(self, edge_id: str) -> Edge:
        return await self._run(self.service.get_edge, edge_id)

    async def summary(self) -> GraphSummary | None:
        try:
            return await self._run(self.service.summary)
        except NotFound:  # the only NotFound of `summary`: no graph yet
            return None

    async def rows(self) -> GraphRows:
        return await self._state()

    async def window(
        self, offset: int, limit: int, node_types: Sequence[str] | None = None
    ) -> GraphRows:
        return await self._state(node_types=node_types, offset=offset, limit=limit)

    async def _state(self, **page: Any) -> GraphRows:
        try:
            state = await self._run(self.service.state, **page)
        except NotFound:  # the only NotFound of `state`: no graph yet
            return GraphRows([], [], 0)
        return _state_rows(state)

    async def neighborhood(self, node_id: str, depth: int, limit: int) -> GraphRows:
        return _state_rows(
            await self._run(self.service.neighbors, node_id, depth=depth, limit=limit)
        )

    async def history(self, offset: int, limit: int) -> HistoryPage:
        return await self._run(self.service.history, offset=offset, limit=limit)

    async def export(self) -> str:
        content = await self._run(self.service.export, "json")
        return content.decode() if isinstance(content, bytes) else content

    async def add_node(self, node: NodeInput) -> Written[Node]:
        return await self._write(self.service.add_node, node)

    async def update_node(self, node_id: str, patch: NodePatch) -> Written[Node]:
        return await self._write(self.service.update_node, node_id, patch)

    async def remove_node(self, node_id: str) -> Written[Removal]:
        return await self._write(self.service.remove_node, node_id)

    async def add_edge(self, edge: EdgeInput) -> Written[Edge]:
        return await self._write(self.service.add_edge, edge)

    async def update_edge(self, edge_id: str, patch: EdgePatch) -> Written[Edge]:
        return await self._write(self.service.update_edge, edge_id, patch)

    async def remove_edge(self, edge_id: str) -> Written[Removal]:
        return await self._write(self.service.remove_edge, edge_id)

    async def add_nodes(self, nodes: list[NodeInput]) -> Written[list[Node]]:
        return await self._write(self.service.add_nodes, nodes)

    async def add_edges(self, edges: list[EdgeInput]) -> Written[list[Edge]]:
        return await self._write(self.service.add_edges, edges)

    async def remove_nodes(self, selection: NodeSelection, *, preview: bool) -> Written[Removal]:
        return await self._write(self.service.remove_nodes, selection, preview=preview)

    async def remove_edges(self, edge_ids: list[str], *, preview: bool) -> Written[Removal]:
        return await self._write(self.service.remove_edges, edge_ids, preview=preview)

    async def batch(self, operations: list[BatchOperation]) -> Written[list[Any]]:
        return await self._write(self.service.batch, operations)

    async def import_graph(self, graph: dict[str, Any] | str, fmt: str) -> Written[ImportReport]:
        return await self._write(self.service.import_graph, graph, fmt=fmt)

    async def merge_nodes(self, keep: str, remove: list[str]) -> Written[Node]:
        return await self._write(self.service.merge_nodes, keep, remove)

    async def undo(self) -> Written[ChangesetSummary]:
        return await self._write(self.service.undo)

    async def redo(self) -> Written[ChangesetSummary]:
        return await self._write(self.service.redo)

    async def revert(self, version: int) -> Written[ChangesetSummary]:
        return await self._write(self.service.revert, version)


def _state_rows(state: GraphState) -> GraphRows:
    nodes = [
        {"id": n.id, "label": n.label, "type": n.type, "data": n.data, "position": n.position}
        for n in state.nodes
    ]
    edges = [
        {
            "id": e.id,
            "source": e.source,
            "target": e.target,
            "label": e.label,
            "type": e.type,
            "data": e.data,
        }
        for e in state.edges
    ]
    return GraphRows(nodes, edges, state.metadata.version, state.metadata.has_more)


# --- REST ------------------------------------------------------------------------------------

# The API's own error statuses read back as the errors it sent them for; the statuses FastAPI
# and the server answer by themselves (bad body, body too large) are invalid input.
_ERRORS: dict[int, type[GraphwrightError]] = {
    400: InvalidInput,
    413: InvalidInput,
    **{status: kind for kind, (status, _code) in ERROR_STATUS.items()},
}


class RestGraphBackend:
    """The graph REST API of a graphwright server, as one conversation's bearer."""

    def __init__(self, client: httpx.AsyncClient, conversation_id: str, token: str | None) -> None:
        self.client = client
        self.conversation_id = conversation_id
        self._prefix = f"/api/graph/{quote(conversation_id, safe='')}"
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}

    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: BaseModel | Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> tuple[Any, int | None]:
        """The envelope's `data` and `version`, or the mapped error."""
        if isinstance(body, BaseModel):
            body = body.model_dump(mode="json", by_alias=True, exclude_none=True)
        content = orjson.dumps(body) if body is not None else None
        headers = {"Content-Type": "application/json"} if content else {}
        response = await self._send(method, path, content=content, params=params, headers=headers)
        envelope = _envelope(response)
        if response.is_success and envelope.get("success", True):
            return envelope.get("data"), envelope.get("version")
        raise _error(response.status_code, envelope)

    async def _send(
        self, method: str, path: str, *, headers: Mapping[str, str] | None = None, **request: Any
    ) -> httpx.Response:
        """The API's response to one request with the bearer token; transport failures (no
        server, timeout) become a GraphwrightError naming the address."""
        try:
            return await self.client.request(
                method, self._prefix + path, headers=self._auth | dict(headers or {}), **request
            )
        except httpx.HTTPError as exc:
            raise GraphwrightError(
                f"Cannot reach the graph API at {self.client.base_url}: {exc or type(exc).__name__}"
            ) from None

    async def _read(self, model: Any, path: str, **params: Any) -> Any:
        data, _ = await self._call("GET", path, params=params or None)
        return TypeAdapter(model).validate_python(data)

    async def _write(
        self, model: Any, method: str, path: str, body: BaseModel | Mapping[str, Any] | None = None
    ) -> Written[Any]:
        data, version = await self._call(method, path, body=body)
        return Written(TypeAdapter(model).validate_python(data), int(version or 0))

    async def get_node(self, node_id: str) -> Node:
        return await self._read(Node, f"/nodes/{quote(node_id, safe=':')}")

    async def get_edge(self, edge_id: str) -> Edge:
        return await self._read(Edge, f"/edges/{quote(edge_id, safe='')}")

    async def summary(self) -> GraphSummary | None:
        try:
            return await self._read(GraphSummary, "/summary")
        except NotFound:  # the only 404 of /summary: no graph yet
            return None

    async def rows(self) -> GraphRows:
        nodes: list[Row] = []
        edges: list[Row] = []
        while True:
            page = await self.window(len(nodes), STATE_PAGE)
            nodes += page.nodes
            edges += page.edges
            if not page.has_more:
                return GraphRows(nodes, edges, page.version)

    async def window(
        self, offset: int, limit: int, node_types: Sequence[str] | None = None
    ) -> GraphRows:
        params: dict[str, Any] = {"offset": offset, "limit": limit}
        if node_types:
            params["nodeTypes"] = list(node_types)
        try:
            data, _ = await self._call("GET", "/state", params=params)
        except NotFound:  # the only 404 of /state: no graph yet
            return GraphRows([], [], 0)
        return _json_state_rows(data)

    async def neighborhood(self, node_id: str, depth: int, limit: int) -> GraphRows:
        data, _ = await self._call(
            "GET",
            f"/neighbors/{quote(node_id, safe=':')}",
            params={"depth": depth, "limit": limit},
        )
        return _json_state_rows(data)

    async def history(self, offset: int, limit: int) -> HistoryPage:
        return await self._read(HistoryPage, "/history", offset=offset, limit=limit)

    async def export(self) -> str:
        # The export is the graph document itself, not an envelope.
        response = await self._send("GET", "/export", params={"format": "json"})
        if not response.is_success:
            raise _error(response.status_code, _envelope(response))
        return response.text

    async def add_node(self, node: NodeInput) -> Written[Node]:
        return await self._write(Node, "POST", "/nodes", node)

    async def update_node(self, node_id: str, patch: NodePatch) -> Written[Node]:
        return await self._write(Node, "PATCH", f"/nodes/{quote(node_id, safe=':')}", patch)

    async def remove_node(self, node_id: str) -> Written[Removal]:
        return await self._write(Removal, "DELETE", f"/nodes/{quote(node_id, safe=':')}")

    async def add_edge(self, edge: EdgeInput) -> Written[Edge]:
        return await self._write(Edge, "POST", "/edges", edge)

    async def update_edge(self, edge_id: str, patch: EdgePatch) -> Written[Edge]:
        return await self._write(Edge, "PATCH", f"/edges/{quote(edge_id, safe='')}", patch)

    async def remove_edge(self, edge_id: str) -> Written[Removal]:
        return await self._write(Removal, "DELETE", f"/edges/{quote(edge_id, safe='')}")

    async def add_nodes(self, nodes: list[NodeInput]) -> Written[list[Node]]:
        return await self._write(list[Node], "POST", "/nodes/bulk", {"nodes": _dump(nodes)})

    async def add_edges(self, edges: list[EdgeInput]) -> Written[list[Edge]]:
        return await self._write(list[Edge], "POST", "/edges/bulk", {"edges": _dump(edges)})

    async def remove_nodes(self, selection: NodeSelection, *, preview: bool) -> Written[Removal]:
        body = _dump([selection])[0] | {"preview": preview}
        return await self._write(Removal, "DELETE", "/nodes/bulk", body)

    async def remove_edges(self, edge_ids: list[str], *, preview: bool) -> Written[Removal]:
        body = {"ids": edge_ids, "preview": preview}
        return await self._write(Removal, "DELETE", "/edges/bulk", body)

    async def batch(self, operations: list[BatchOperation]) -> Written[list[Any]]:
        return await self._write(list[Any], "POST", "/batch", {"operations": _dump(operations)})

    async def import_graph(self, graph: dict[str, Any] | str, fmt: str) -> Written[ImportReport]:
        body = {"graph": graph} if isinstance(graph, dict) else {"content": graph, "format": fmt}
        return await self._write(ImportReport, "POST", "/import", body)

    async def merge_nodes(self, keep: str, remove: list[str]) -> Written[Node]:
        return await self._write(Node, "POST", "/merge-nodes", {"keep": keep, "remove": remove})

    async def undo(self) -> Written[ChangesetSummary]:
        return await self._write(ChangesetSummary, "POST", "/undo")

    async def redo(self) -> Written[ChangesetSummary]:
        return await self._write(ChangesetSummary, "POST", "/redo")

    async def revert(self, version: int) -> Written[ChangesetSummary]:
        return await self._write(ChangesetSummary, "POST", f"/versions/{version}/revert")


def _json_state_rows(state: Mapping[str, Any]) -> GraphRows:
    """GraphRows of a GraphState as the API sends it (camelCase JSON)."""
    metadata = state["metadata"]
    return GraphRows(
        state["nodes"], state["edges"], metadata["version"], bool(metadata.get("hasMore"))
    )


def _dump(models: Sequence[BaseModel]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in models]


def _envelope(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _error(status: int, envelope: Mapping[str, Any]) -> GraphwrightError:
    error = envelope.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    message = message or f"The graph API answered HTTP {status}"
    kind = _ERRORS.get(status, GraphwrightError)
    if kind is Conflict:
        return Conflict(message, current_version=error.get("currentVersion") if error else None)
    return kind(message)


# --- choosing a backend per call -------------------------------------------------------------


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
