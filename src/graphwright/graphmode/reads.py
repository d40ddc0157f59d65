"""Graph Mode reads: the current graph, paged and filtered, and one node or edge at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphwright.core.biolink import type_name
from graphwright.core.formats import write_graph
from graphwright.errors import InvalidInput, NotFound
from graphwright.graphmode.change import GraphServiceBase, existing_project
from graphwright.graphmode.limits import check_text
from graphwright.graphmode.repository import GraphRepository
from graphwright.graphmode.rows import edge_model, node_id, node_model, seed_link, seed_node
from graphwright.graphmode.schemas import (
    Edge,
    GraphList,
    GraphListing,
    GraphMetadata,
    GraphState,
    GraphSummary,
    Node,
    NodeSelection,
    Removal,
    Written,
)


class GraphReads(GraphServiceBase):
    """Reads of the current graph."""

    def list_graphs(
        self, *, offset: int = 0, limit: int = 50, only: str | None = None
    ) -> GraphList:
        """Every graph, also those of no conversation (a write to an id makes its graph)."""
        with self._db.read() as session:
            rows, total = GraphRepository(session).list_projects(offset, limit, only)
        items = [GraphListing.model_validate(row) for row in rows]
        return GraphList(items=items, total=total, offset=offset, limit=limit)

    def version(self, conversation_id: str) -> int:
        with self._db.read() as session:
            project = GraphRepository(session).project(conversation_id)
            return project.version if project else 0

    def state(
        self,
        conversation_id: str,
        *,
        node_types: Sequence[str] | None = None,
        edge_types: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> GraphState:
        if offset < 0 or (limit is not None and limit < 1):
            raise InvalidInput("offset must be >= 0 and limit >= 1")
        wanted = [node_id(i) for i in ids] if ids is not None else None
        self._check_texts(node_types, "nodeTypes")
        self._check_texts(edge_types, "edgeTypes")
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            page = {
                "node_types": _types(node_types),
                "ids": wanted,
                "offset": offset,
                "limit": limit + 1 if limit is not None else None,
            }
            rows = repo.page_nodes(project.id, **page)
            edge_rows = repo.page_edges(project.id, edge_types=edge_types, **page)
            has_more = limit is not None and (len(rows) > limit or len(edge_rows) > limit)
            rows, edge_rows = rows[:limit], edge_rows[:limit]
            node_count, edge_count = repo.counts(project.id)
        metadata = GraphMetadata(
            node_count=node_count,
            edge_count=edge_count,
            version=project.version,
            last_updated=project.updated_at,
            offset=offset,
            limit=limit,
            has_more=has_more,
        )
        return GraphState(
            nodes=[node_model(r) for r in rows],
            edges=[edge_model(r) for r in edge_rows],
            metadata=metadata,
        )

    def summary(self, conversation_id: str) -> GraphSummary:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            node_count, edge_count = repo.counts(project.id)
            node_types, edge_labels = repo.type_counts(project.id)
        return GraphSummary(
            version=project.version,
            node_count=node_count,
            edge_count=edge_count,
            node_types=node_types,
            edge_labels=edge_labels,
            last_updated=project.updated_at,
        )

    def get_node(self, conversation_id: str, raw_id: str) -> Node:
        wanted = node_id(raw_id)
        with self._db.read() as session:
            repo = GraphRepository(session)
            row = repo.nodes_by_ids(existing_project(repo, conversation_id).id, [wanted]).get(
                wanted
            )
        if row is None:
            raise NotFound(f"No node '{wanted}' in this graph")
        return node_model(row)

    def get_edge(self, conversation_id: str, edge_id: str) -> Edge:
        self.limits.id(edge_id, "id")
        with self._db.read() as session:
            repo = GraphRepository(session)
            row = repo.edges_by_ids(existing_project(repo, conversation_id).id, [edge_id]).get(
                edge_id
            )
        if row is None:
            raise NotFound(f"No edge '{edge_id}' in this graph")
        return edge_model(row)

    def neighbors(
        self, conversation_id: str, raw_id: str, *, depth: int = 1, limit: int = 500
    ) -> GraphState:
        """The node, the nodes within `depth` hops (at most `limit`) and the edges among them."""
        start = node_id(raw_id)
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            if not repo.existing_node_ids(project.id, [start]):
                raise NotFound(f"No node '{start}' in this graph")
            seen, frontier, edge_rows = {start}, {start}, {}
            for _ in range(max(depth, 0)):
                touching = repo.edges_touching(project.id, frontier)
                frontier = set()
                for edge in touching.values():
                    for end in (edge["source"], edge["target"]):
                        if end not in seen and len(seen) < limit:
                            seen.add(end)
                            frontier.add(end)
                    if edge["source"] in seen and edge["target"] in seen:
                        edge_rows[edge["id"]] = edge
                if not frontier:
                    break
            node_rows = repo.nodes_by_ids(project.id, seen)
            node_count, edge_count = repo.counts(project.id)
        metadata = GraphMetadata(
            node_count=node_count,
            edge_count=edge_count,
            version=project.version,
            last_updated=project.updated_at,
            has_more=len(seen) >= limit,
        )
        return GraphState(
            nodes=[node_model(node_rows[i]) for i in sorted(node_rows)],
            edges=[edge_model(edge_rows[i]) for i in sorted(edge_rows)],
            metadata=metadata,
        )

    def search_nodes(
        self,
        conversation_id: str,
        query: str,
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[Node]:
        check_text(query, "q")
        self._check_texts(types, "types")
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            return [
                node_model(r) for r in repo.search_nodes(project.id, query, _types(types), limit)
            ]

    def to_graph(self, conversation_id: str) -> dict[str, Any]:
        """The whole graph as seed graph JSON `{"nodes": [...], "links": [...]}`."""
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            node_rows, edge_rows = repo.all_nodes(project.id), repo.all_edges(project.id)
        return {
            "nodes": [seed_node(r) for r in node_rows],
            "links": [seed_link(r) for r in edge_rows],
        }

    def export(self, conversation_id: str, fmt: str = "json") -> str | bytes:
        return write_graph(self.to_graph(conversation_id), fmt)

    def _preview_node_removal(
        self, conversation_id: str, selection: NodeSelection
    ) -> Written[Removal]:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            ids = select_nodes(repo, project.id, selection)
            touching = repo.edges_touching(project.id, ids)
        removal = Removal(
            preview=True,
            node_ids=ids,
            edge_ids=sorted(touching),
            node_count=len(ids),
            edge_count=len(touching),
        )
        return Written(removal, project.version)

    def _preview_edge_removal(
        self, conversation_id: str, edge_ids: Sequence[str]
    ) -> Written[Removal]:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            found = repo.edges_by_ids(project.id, edge_ids)
        for edge_id in edge_ids:
            if edge_id not in found:
                raise NotFound(f"No edge '{edge_id}' in this graph")
        removal = Removal(preview=True, edge_ids=sorted(found), edge_count=len(found))
        return Written(removal, project.version)


def select_nodes(repo: GraphRepository, project_id: int, selection: NodeSelection) -> list[str]:
    if selection.ids is not None:
        wanted = list(dict.fromkeys(node_id(i) for i in selection.ids))
        present = repo.existing_node_ids(project_id, wanted)
        for missing in wanted:
            if missing not in present:
                raise NotFound(f"No node '{missing}' in this graph")
        return wanted
    if selection.types is not None or selection.exclude_types:
        return repo.node_ids_by_type(
            project_id, _types(selection.types), _types(selection.exclude_types)
        )
    exact = selection.degree
    return repo.node_ids_by_degree(
        project_id,
        min_degree=exact if exact is not None else selection.min_degree,
        max_degree=exact if exact is not None else selection.max_degree,
        node_type=type_name(selection.type) if selection.type else None,
    )


def _types(types: Sequence[str] | None) -> list[str] | None:
    """Type filters in the spelling types are stored in, so `gene` finds `Gene` nodes."""
    return None if types is None else [type_name(t) for t in types]
