"""The graph REST API as a `GraphBackend`: `/api/graph/{conversationId}/...` over HTTP with a
bearer token (seed 004's `databaseContext` protocol); the `{"success": false, "error": ...}`
envelope turns back into `graphwright.errors`."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx
import orjson
from pydantic import BaseModel, TypeAdapter

from graphwright.envelope import ERROR_STATUS
from graphwright.errors import Conflict, GraphwrightError, InvalidInput, NotFound
from graphwright.graphmode.client import GraphRows, Row
from graphwright.graphmode.schemas import (
    BatchOperation,
    ChangesetSummary,
    Edge,
    EdgeInput,
    EdgePatch,
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

STATE_PAGE = 10_000  # nodes per request when the REST backend reads a whole graph


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
        content = _json_body(body) if body is not None else None
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
        # /state pages nodes and edges at the same offset: the offset moves by whole pages,
        # not by the nodes read (a graph with more edges than nodes would read one page forever)
        for offset in itertools.count(0, STATE_PAGE):
            page = await self.window(offset, STATE_PAGE)
            nodes += page.nodes
            edges += page.edges
            if not page.has_more:
                return GraphRows(nodes, edges, page.version)
        raise AssertionError("unreachable")

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


def _json_body(body: Any) -> bytes:
    """`body` as JSON. orjson refuses integers past 64 bits; those go through the standard
    library, so that the API refuses them in its own words (as the embedded backend does)."""
    try:
        return orjson.dumps(body)
    except orjson.JSONEncodeError:
        return json.dumps(body).encode()


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
