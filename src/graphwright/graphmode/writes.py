"""Graph Mode edits: nodes and edges one at a time, in bulk and in batches, and clearing."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graphwright.errors import InvalidInput, NotFound
from graphwright.graphmode.change import Change, GraphServiceBase, stamped
from graphwright.graphmode.ops import Op, row_to_json, update_edges_read
from graphwright.graphmode.reads import select_nodes
from graphwright.graphmode.repository import Row
from graphwright.graphmode.rows import edge_model, node_id, node_model, node_type
from graphwright.graphmode.schemas import (
    AddEdgeOp,
    AddNodeOp,
    BatchOperation,
    Edge,
    EdgeInput,
    EdgePatch,
    EdgeUpdate,
    Node,
    NodeInput,
    NodePatch,
    NodeSelection,
    Removal,
    RemoveEdgeOp,
    RemoveNodeOp,
    UpdateEdgeOp,
    UpdateNodeOp,
    Written,
)


class GraphWrites(GraphServiceBase):
    """Edits, each one transaction and one new version."""

    def add_node(
        self,
        conversation_id: str,
        node: NodeInput,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Node]:
        self.limits.node(node)

        def build(change: Change) -> Node:
            return _add_nodes(change, [node])[0]

        return self._write(conversation_id, "addNode", actor, expected_version, build)

    def update_node(
        self,
        conversation_id: str,
        raw_id: str,
        patch: NodePatch,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Node]:
        self.limits.id(raw_id, "id")
        self.limits.node(patch)

        def build(change: Change) -> Node:
            return self._update_node(change, node_id(raw_id), patch)

        return self._write(conversation_id, "updateNode", actor, expected_version, build)

    def remove_node(
        self,
        conversation_id: str,
        raw_id: str,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Removal]:
        self.limits.id(raw_id, "id")

        def build(change: Change) -> Removal:
            return _remove(change, "remove_node", [node_id(raw_id)])

        return self._write(conversation_id, "removeNode", actor, expected_version, build)

    def add_edge(
        self,
        conversation_id: str,
        edge: EdgeInput,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Edge]:
        self.limits.edge(edge)

        def build(change: Change) -> Edge:
            return _add_edges(change, [edge])[0]

        return self._write(conversation_id, "addEdge", actor, expected_version, build)

    def update_edge(
        self,
        conversation_id: str,
        edge_id: str,
        patch: EdgePatch,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Edge]:
        self.limits.id(edge_id, "id")
        self.limits.edge(patch)

        def build(change: Change) -> Edge:
            return self._update_edge(change, edge_id, patch)

        return self._write(conversation_id, "updateEdge", actor, expected_version, build)

    def remove_edge(
        self,
        conversation_id: str,
        edge_id: str,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Removal]:
        self.limits.id(edge_id, "id")

        def build(change: Change) -> Removal:
            return _remove(change, "remove_edge", [edge_id])

        return self._write(conversation_id, "removeEdge", actor, expected_version, build)

    def add_nodes(
        self,
        conversation_id: str,
        nodes: Sequence[NodeInput],
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[list[Node]]:
        self.limits.nodes(nodes)

        def build(change: Change) -> list[Node]:
            return _add_nodes(change, nodes)

        return self._write(conversation_id, "addNodes", actor, expected_version, build)

    def add_edges(
        self,
        conversation_id: str,
        edges: Sequence[EdgeInput],
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[list[Edge]]:
        self.limits.edges(edges)

        def build(change: Change) -> list[Edge]:
            return _add_edges(change, edges)

        return self._write(conversation_id, "addEdges", actor, expected_version, build)

    def update_edges(
        self,
        conversation_id: str,
        updates: Sequence[EdgeUpdate],
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[list[Edge]]:
        self.limits.edges(updates)

        def build(change: Change) -> list[Row]:
            return _update_edges(change, [(u.id, u) for u in updates])

        # The models are built once the transaction (on SQLite, the write lock) is over.
        rows, version = self._write(conversation_id, "updateEdges", actor, expected_version, build)
        return Written([edge_model(row) for row in rows], version)

    def remove_nodes(
        self,
        conversation_id: str,
        selection: NodeSelection,
        *,
        actor: str,
        preview: bool = False,
        expected_version: int | None = None,
    ) -> Written[Removal]:
        self._check_selection(selection)
        if preview:
            return self._preview_node_removal(conversation_id, selection)

        def build(change: Change) -> Removal:
            ids = select_nodes(change.repo, change.project_id, selection)
            return _remove(change, "remove_node", ids) if ids else Removal()

        return self._write(conversation_id, "removeNodes", actor, expected_version, build)

    def remove_edges(
        self,
        conversation_id: str,
        edge_ids: Sequence[str],
        *,
        actor: str,
        preview: bool = False,
        expected_version: int | None = None,
    ) -> Written[Removal]:
        self.limits.ids(edge_ids)
        if preview:
            return self._preview_edge_removal(conversation_id, edge_ids)

        def build(change: Change) -> Removal:
            return _remove(change, "remove_edge", edge_ids)

        return self._write(conversation_id, "removeEdges", actor, expected_version, build)

    def batch(
        self,
        conversation_id: str,
        operations: Sequence[BatchOperation],
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[list[Any]]:
        """Mixed operations, applied in order, all or nothing, as one version."""
        self.limits.batch(operations)

        def build(change: Change) -> list[Any]:
            return [self._batch_step(change, operation) for operation in operations]

        return self._write(conversation_id, "batch", actor, expected_version, build)

    def clear(
        self, conversation_id: str, *, actor: str, expected_version: int | None = None
    ) -> Written[Removal]:
        """Remove everything. The rows move to the stash, so the changeset stays small."""

        def build(change: Change) -> Removal:
            node_count, edge_count = change.repo.counts(change.project_id)
            change.apply([{"op": "stash", "scope": "all", "version": change.version}])
            change.summary["cleared"] = {"nodes": node_count, "edges": edge_count}
            return Removal(node_count=node_count, edge_count=edge_count)

        return self._write(conversation_id, "clear", actor, expected_version, build)

    def _update_node(self, change: Change, wanted: str, patch: NodePatch) -> Node:
        current = change.repo.nodes_by_ids(change.project_id, [wanted]).get(wanted)
        if current is None:
            raise NotFound(f"No node '{wanted}' in this graph")
        values = _patched(current, patch, ("label", "type"), change.now)
        if "position" in patch.model_fields_set:
            values["position"] = patch.position.model_dump() if patch.position else None
        change.apply([{"op": "update_node", "id": wanted, "set": row_to_json(values)}])
        return node_model({**current, **values})

    def _update_edge(self, change: Change, edge_id: str, patch: EdgePatch) -> Edge:
        return edge_model(_update_edges(change, [(edge_id, patch)])[0])

    def _batch_step(self, change: Change, operation: BatchOperation) -> Any:
        match operation:
            case AddNodeOp(node=node):
                return _add_nodes(change, [node])[0]
            case UpdateNodeOp(id=raw_id, patch=patch):
                return self._update_node(change, node_id(raw_id), patch)
            case RemoveNodeOp(id=raw_id):
                return _remove(change, "remove_node", [node_id(raw_id)])
            case AddEdgeOp(edge=edge):
                return _add_edges(change, [edge])[0]
            case UpdateEdgeOp(id=edge_id, patch=patch):
                return self._update_edge(change, edge_id, patch)
            case RemoveEdgeOp(id=edge_id):
                return _remove(change, "remove_edge", [edge_id])
        raise InvalidInput(f"Unknown batch operation {operation!r}")


def _add_nodes(change: Change, nodes: Sequence[NodeInput]) -> list[Node]:
    rows = [_new_node_row(n, change) for n in nodes]
    change.apply([{"op": "add_node", "node": row_to_json(r)} for r in rows])
    return [node_model(r) for r in rows]


def _add_edges(change: Change, edges: Sequence[EdgeInput]) -> list[Edge]:
    rows = [_new_edge_row(e, change) for e in edges]
    change.apply([{"op": "add_edge", "edge": row_to_json(r)} for r in rows])
    return [edge_model(r) for r in rows]


def _update_edges(change: Change, updates: Sequence[tuple[str, EdgePatch]]) -> list[Row]:
    """The updates as one run of ops, so that their edges are read once, not once each (10,000
    reads of one row held SQLite's write lock for seconds); a later update of the same edge
    patches what the earlier one made. The edges as written."""
    read = change.repo.edges_by_ids(change.project_id, [edge_id for edge_id, _ in updates])
    current = dict(read)
    ops: list[Op] = []
    written: list[Row] = []
    for edge_id, patch in updates:
        row = current.get(edge_id)
        if row is None:
            raise NotFound(f"No edge '{edge_id}' in this graph")
        values = _patched(row, patch, ("label", "type"), change.now)
        for end in ("source", "target"):
            value = getattr(patch, end)
            if value is not None:
                values[end] = node_id(value)
        ops.append({"op": "update_edge", "id": edge_id, "set": row_to_json(values)})
        current[edge_id] = {**row, **values}
        written.append(current[edge_id])
    change.record(ops, update_edges_read(change.repo, change.project_id, ops, read))
    return written


def _remove(change: Change, op: str, ids: Sequence[str]) -> Removal:
    """Apply one `remove_node` or `remove_edge` op per id; what went, edges of nodes too."""
    return _removal(change.apply([{"op": op, "id": i} for i in ids]))


def _removal(inverse: list[Op]) -> Removal:
    node_ids = [op["node"]["id"] for op in inverse if op["op"] == "add_node"]
    edge_ids = [op["edge"]["id"] for op in inverse if op["op"] == "add_edge"]
    return Removal(
        node_ids=node_ids, edge_ids=edge_ids, node_count=len(node_ids), edge_count=len(edge_ids)
    )


def _new_node_row(node: NodeInput, change: Change) -> Row:
    return stamped(
        {
            "id": node_id(node.id) if node.id else f"node_{uuid.uuid4().hex[:12]}",
            "label": node.label,
            "type": node_type(node.type),
            "data": node.data,
            "position": node.position.model_dump() if node.position else None,
        },
        change,
    )


def _new_edge_row(edge: EdgeInput, change: Change) -> Row:
    return stamped(
        {
            "id": edge.id or f"edge_{uuid.uuid4().hex[:12]}",
            "source": node_id(edge.source),
            "target": node_id(edge.target),
            "label": edge.label,
            "type": edge.type,
            "data": edge.data,
        },
        change,
    )


def _patched(
    current: Row, patch: NodePatch | EdgePatch, names: tuple[str, ...], now: datetime
) -> Row:
    values: Row = {}
    for name in names:
        if name in patch.model_fields_set:
            value = getattr(patch, name)
            if value is None and name in ("label", "type") and isinstance(patch, NodePatch):
                raise InvalidInput(f"A node's {name} cannot be empty")
            if name == "type" and value is not None and isinstance(patch, NodePatch):
                value = node_type(value)
            values[name] = value
    if patch.data is not None:
        data = dict(current["data"])
        for key, value in patch.data.items():
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value
        values["data"] = data
    values["updated_at"] = now
    return values
