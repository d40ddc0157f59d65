"""Where the graph MCP server reads and writes a conversation's graph.

`GraphBackend` is what the tools need. Two implementations:
- `EmbeddedGraphBackend` (here) calls `GraphService` in this process (on a worker thread:
  SQLAlchemy is synchronous).
- `RestGraphBackend` (`client_rest.py`) talks to the graph REST API over HTTP with a bearer token.

`BackendResolver` (`backend_resolver.py`) picks one per call. A conversation without a graph
reads as an empty graph at version 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import anyio.to_thread

from graphwright.errors import NotFound
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

T = TypeVar("T")
Row = dict[str, Any]

MCP_ACTOR = "mcp:graph"


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
