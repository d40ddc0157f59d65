"""A conversation's Graph Mode graph from Python: reads, edits, bulk edits, undo and redo, history,
diffs, and conversions. Every call is one REST request (`/api/graph/{conversationId}/...`); the
server versions each write and raises VersionConflict when `expected_version` is stale."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import networkx as nx

from graphwright.client import display
from graphwright.core import graph_objects as go
from graphwright.errors import NotFound

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from graphwright.client.objects import KnowledgeGraph
    from graphwright.client.transport import Transport

STATE_PAGE = 10_000  # nodes per /state request when reading a whole graph


class GraphModeGraph:
    """The Graph Mode graph of one conversation.

    >>> graph = client.graph(conversation_id)
    >>> graph.add_node("NCBIGene:7157", "TP53", "Gene")
    >>> graph.undo()
    """

    def __init__(self, transport: Transport, conversation_id: str, *, live: bool) -> None:
        self._transport = transport
        self.conversation_id = conversation_id
        self._prefix = f"/api/graph/{quote(conversation_id, safe='')}"
        self._live = live
        self.version: int | None = None  # the version after this object's last call

    def _call(
        self,
        method: str,
        path: str,
        json: Any = None,
        *,
        expected_version: int | None = None,
        **params: Any,
    ) -> Any:
        if expected_version is not None:
            params["expectedVersion"] = expected_version
        data, version = self._transport.call_with_version(
            method, self._prefix + path, json=json, params=params or None
        )
        if version is not None:
            self.version = int(version)
        return data

    # -- reads ----------------------------------------------------------------------------

    def state(self, *, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
        """One page of `{"nodes", "edges", "metadata"}` (all of it without `limit`)."""
        params = {"offset": offset} | ({"limit": limit} if limit else {})
        return self._call("GET", "/state", **params)

    def pages(self) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
        """Every node and edge as `(nodes, edges)` pages of STATE_PAGE (a page holds up to that
        many nodes and, at the same offset, as many edges). The next page is asked for before
        this one is handed over, so the server reads it while the caller uses this one."""
        offset = 0
        sent = self._start_page(offset)
        while sent is not None:
            try:
                page, version = self._transport.answer(sent)
            except NotFound:  # the only 404 of /state: no graph yet
                return
            if version is not None:
                self.version = int(version)
            offset += STATE_PAGE
            sent = self._start_page(offset) if page["metadata"].get("hasMore") else None
            yield page["nodes"], page["edges"]

    def _start_page(self, offset: int) -> concurrent.futures.Future[Any]:
        params = {"offset": offset, "limit": STATE_PAGE}
        return self._transport.start("GET", self._prefix + "/state", params=params)

    def rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Every node and edge (read in pages)."""
        nodes: list[dict[str, Any]] = []
        edges: list[dict[str, Any]] = []
        for page_nodes, page_edges in self.pages():
            nodes += page_nodes
            edges += page_edges
        return nodes, edges

    def summary(self) -> dict[str, Any]:
        """Counts by node type and edge label, and the version."""
        return self._call("GET", "/summary")

    def node(self, node_id: str) -> dict[str, Any]:
        return self._call("GET", f"/nodes/{quote(node_id, safe=':')}")

    def edge(self, edge_id: str) -> dict[str, Any]:
        return self._call("GET", f"/edges/{quote(edge_id, safe='')}")

    def search(self, text: str, limit: int = 50) -> list[dict[str, Any]]:
        """Nodes whose label or id contains `text`."""
        return self._call("GET", "/search", q=text, limit=limit)

    # -- edits ----------------------------------------------------------------------------

    def add_node(
        self,
        id: str | None,
        label: str,
        type: str,
        data: dict[str, Any] | None = None,
        *,
        expected_version: int | None = None,
    ) -> dict[str, Any]:
        """Add a node (`id` a CURIE, or None for a generated one); returns it."""
        body = {"id": id, "label": label, "type": type, "data": data or {}}
        body = {k: v for k, v in body.items() if v is not None}
        return self._call("POST", "/nodes", body, expected_version=expected_version)

    def update_node(
        self, node_id: str, *, expected_version: int | None = None, **fields: Any
    ) -> dict[str, Any]:
        """Change some of `label`, `type`, `data`, `position`."""
        path = f"/nodes/{quote(node_id, safe=':')}"
        return self._call("PATCH", path, fields, expected_version=expected_version)

    def delete_node(self, node_id: str, *, expected_version: int | None = None) -> dict[str, Any]:
        """Remove a node and its edges."""
        path = f"/nodes/{quote(node_id, safe=':')}"
        return self._call("DELETE", path, expected_version=expected_version)

    def add_edge(
        self,
        source: str,
        target: str,
        label: str | None = None,
        *,
        id: str | None = None,
        type: str | None = None,
        data: dict[str, Any] | None = None,
        expected_version: int | None = None,
    ) -> dict[str, Any]:
        body = {"id": id, "source": source, "target": target, "label": label, "type": type}
        body = {k: v for k, v in body.items() if v is not None} | {"data": data or {}}
        return self._call("POST", "/edges", body, expected_version=expected_version)

    def update_edge(
        self, edge_id: str, *, expected_version: int | None = None, **fields: Any
    ) -> dict[str, Any]:
        path = f"/edges/{quote(edge_id, safe='')}"
        return self._call("PATCH", path, fields, expected_version=expected_version)

    def delete_edge(self, edge_id: str, *, expected_version: int | None = None) -> dict[str, Any]:
        path = f"/edges/{quote(edge_id, safe='')}"
        return self._call("DELETE", path, expected_version=expected_version)

    def add_nodes(
        self, nodes: list[dict[str, Any]], *, expected_version: int | None = None
    ) -> list[dict[str, Any]]:
        """Add many nodes (`{"id", "label", "type", "data"}`) as one version."""
        return self._call(
            "POST", "/nodes/bulk", {"nodes": nodes}, expected_version=expected_version
        )

    def add_edges(
        self, edges: list[dict[str, Any]], *, expected_version: int | None = None
    ) -> list[dict[str, Any]]:
        """Add many edges (`{"source", "target", "label", ...}`) as one version."""
        return self._call(
            "POST", "/edges/bulk", {"edges": edges}, expected_version=expected_version
        )

    def delete_nodes(
        self, ids: list[str], *, preview: bool = False, expected_version: int | None = None
    ) -> dict[str, Any]:
        """Remove many nodes with their edges (with `preview`, only say what would go)."""
        body = {"ids": ids, "preview": preview}
        return self._call("DELETE", "/nodes/bulk", body, expected_version=expected_version)

    def batch(
        self, operations: list[dict[str, Any]], *, expected_version: int | None = None
    ) -> list[Any]:
        """Mixed operations (`{"op": "addNode", "node": {...}}`), atomically as one version."""
        body = {"operations": operations}
        return self._call("POST", "/batch", body, expected_version=expected_version)

    def import_graph(
        self, graph: KnowledgeGraph | dict[str, Any], *, expected_version: int | None = None
    ) -> dict[str, Any]:
        """Merge a knowledge graph (an artifact, or its content) into this graph."""
        content = graph if isinstance(graph, dict) else graph.graph
        return self._call("POST", "/import", {"graph": content}, expected_version=expected_version)

    def add_networkx(self, graph: nx.Graph, *, expected_version: int | None = None) -> list[Any]:
        """Add a networkx graph's nodes and edges that are not in this graph yet (by id) as
        one version (attributes as `to_networkx` gives them: `label`, `type`, the rest data).

        >>> g = graph.to_networkx()
        >>> g.add_edge("NCBIGene:7157", "NCBIGene:672", label="interacts with")
        >>> graph.add_networkx(g.subgraph(["NCBIGene:7157", "NCBIGene:672"]))
        """
        nodes, edges = go.networkx_to_rows(graph)
        here_nodes, here_edges = self.rows()
        present = {row["id"] for row in here_nodes} | {row["id"] for row in here_edges}
        operations = [{"op": "addNode", "node": n} for n in nodes if n["id"] not in present]
        operations += [{"op": "addEdge", "edge": e} for e in edges if e.get("id") not in present]
        return self.batch(operations, expected_version=expected_version) if operations else []

    def clear(self) -> dict[str, Any]:
        """Remove every node and edge (undoable)."""
        return self._call("POST", "/clear")

    # -- versions -------------------------------------------------------------------------

    def undo(self) -> dict[str, Any]:
        return self._call("POST", "/undo")

    def redo(self) -> dict[str, Any]:
        return self._call("POST", "/redo")

    def history(self, *, offset: int = 0, limit: int = 50) -> dict[str, Any]:
        """The change log, newest first."""
        return self._call("GET", "/history", offset=offset, limit=limit)

    def at(self, version: int) -> dict[str, Any]:
        """The graph as it was at `version`."""
        return self._call("GET", f"/versions/{version}")

    def revert(self, version: int) -> dict[str, Any]:
        """Make the graph what it was at `version` (a new version)."""
        return self._call("POST", f"/versions/{version}/revert")

    def diff(self, from_version: int, to_version: int) -> dict[str, Any]:
        """What changed between two versions."""
        return self._call("GET", "/diff", **{"from": from_version, "to": to_version})

    # -- conversions ----------------------------------------------------------------------

    def to_networkx(self) -> nx.MultiDiGraph:
        """The whole graph as a MultiDiGraph keyed by edge id (data keys are attributes),
        built page by page as the pages arrive.

        >>> g = graph.to_networkx()
        >>> g.nodes["NCBIGene:7157"]["label"], g.number_of_edges()
        """
        graph = nx.MultiDiGraph()
        for nodes, edges in self.pages():
            go.add_rows(graph, nodes, edges)
        return graph

    def to_pandas(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(nodes, edges) pandas frames, `data` spread into columns."""
        nodes, edges = self.rows()
        return go.frames_pandas(
            go.flat_rows(nodes, go.NODE_FIELDS), go.flat_rows(edges, go.EDGE_FIELDS)
        )

    def to_polars(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(nodes, edges) polars frames, `data` spread into columns."""
        nodes, edges = self.rows()
        return go.frames_polars(
            go.flat_rows(nodes, go.NODE_FIELDS), go.flat_rows(edges, go.EDGE_FIELDS)
        )

    def _repr_mimebundle_(self, **_: Any) -> dict[str, Any]:
        title = f"Graph Mode: {self.conversation_id}"
        token = self._transport.token
        if self._live and token:
            return display.live_graph_bundle(
                self._transport.base_url, token, self.conversation_id, title
            )
        nodes, edges = self.rows()
        return display.graph_bundle({"nodes": nodes, "edges": edges}, title)
