"""The ops of Graph Mode edits, planned on an `OpsPlanner`: new rows, patches, removals, and each
batch operation as a run of its own (as it was applied one by one)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graphwright.errors import InvalidInput, NotFound
from graphwright.graphmode.ops import Op, row_to_json
from graphwright.graphmode.ops_plan import OpsPlanner
from graphwright.graphmode.repository import Row
from graphwright.graphmode.rows import edge_model, node_id, node_model, node_type
from graphwright.graphmode.schemas import (
    AddEdgeOp,
    AddNodeOp,
    BatchOperation,
    Edge,
    EdgeInput,
    EdgePatch,
    Node,
    NodeInput,
    NodePatch,
    Removal,
    RemoveEdgeOp,
    RemoveNodeOp,
    UpdateEdgeOp,
    UpdateNodeOp,
)


def add_nodes(planner: OpsPlanner, nodes: Sequence[NodeInput]) -> list[Node]:
    rows = [_new_node_row(n, planner) for n in nodes]
    planner.run([{"op": "add_node", "node": row_to_json(r)} for r in rows])
    return [node_model(r) for r in rows]


def add_edges(planner: OpsPlanner, edges: Sequence[EdgeInput]) -> list[Edge]:
    rows = [_new_edge_row(e, planner) for e in edges]
    planner.run([{"op": "add_edge", "edge": row_to_json(r)} for r in rows])
    return [edge_model(r) for r in rows]


def update_node(planner: OpsPlanner, wanted: str, patch: NodePatch) -> Node:
    current = planner.node(wanted)
    if current is None:
        raise NotFound(f"No node '{wanted}' in this graph")
    values = _patched(current, patch, ("label", "type"), planner.now)
    if "position" in patch.model_fields_set:
        values["position"] = patch.position.model_dump() if patch.position else None
    planner.run([{"op": "update_node", "id": wanted, "set": row_to_json(values)}])
    return node_model({**current, **values})


def update_edges(planner: OpsPlanner, updates: Sequence[tuple[str, EdgePatch]]) -> list[Row]:
    """The updates as one run of ops, so that their edges are read once, not once each; a later
    update of the same edge patches what the earlier one made. The edges as written."""
    planner.read(edges=[edge_id for edge_id, _ in updates])
    current: dict[str, Row | None] = {}
    ops: list[Op] = []
    written: list[Row] = []
    for edge_id, patch in updates:
        row = current[edge_id] if edge_id in current else planner.edge(edge_id)
        if row is None:
            raise NotFound(f"No edge '{edge_id}' in this graph")
        values = _patched(row, patch, ("label", "type"), planner.now)
        for end in ("source", "target"):
            value = getattr(patch, end)
            if value is not None:
                values[end] = node_id(value)
        ops.append({"op": "update_edge", "id": edge_id, "set": row_to_json(values)})
        current[edge_id] = {**row, **values}
        written.append(current[edge_id])
    planner.run(ops)
    return written


def remove(planner: OpsPlanner, op: str, ids: Sequence[str]) -> Removal:
    """One `remove_node` or `remove_edge` op per id; what went, edges of nodes too."""
    inverse = planner.run([{"op": op, "id": i} for i in ids])
    node_ids = [op["node"]["id"] for op in inverse if op["op"] == "add_node"]
    edge_ids = [op["edge"]["id"] for op in inverse if op["op"] == "add_edge"]
    return Removal(
        node_ids=node_ids, edge_ids=edge_ids, node_count=len(node_ids), edge_count=len(edge_ids)
    )


def batch(planner: OpsPlanner, operations: Sequence[BatchOperation]) -> list[Any]:
    """Each operation a run of its own, in order; the rows they name are read at once first."""
    nodes: list[str | None] = []
    edges: list[str | None] = []
    removed: list[str | None] = []
    for operation in operations:
        match operation:
            case AddNodeOp(node=node):
                nodes.append(node.id)
            case UpdateNodeOp(id=raw_id):
                nodes.append(raw_id)
            case RemoveNodeOp(id=raw_id):
                removed.append(raw_id)
            case AddEdgeOp(edge=edge):
                edges.append(edge.id)
                nodes.extend((edge.source, edge.target))
            case UpdateEdgeOp(id=edge_id, patch=patch):
                edges.append(edge_id)
                nodes.extend((patch.source, patch.target))
            case RemoveEdgeOp(id=edge_id):
                edges.append(edge_id)
    removed_ids = _node_ids(removed)
    planner.read(_node_ids(nodes) + removed_ids, [i for i in edges if i], removed_ids)
    return [_batch_step(planner, operation) for operation in operations]


def _node_ids(raw: list[str | None]) -> list[str]:
    """The node ids among `raw`; an id that is not one fails at its own step, in order."""
    ids: list[str] = []
    for value in raw:
        if value:
            try:
                ids.append(node_id(value))
            except InvalidInput:
                continue
    return ids


def _batch_step(planner: OpsPlanner, operation: BatchOperation) -> Any:
    match operation:
        case AddNodeOp(node=node):
            return add_nodes(planner, [node])[0]
        case UpdateNodeOp(id=raw_id, patch=patch):
            return update_node(planner, node_id(raw_id), patch)
        case RemoveNodeOp(id=raw_id):
            return remove(planner, "remove_node", [node_id(raw_id)])
        case AddEdgeOp(edge=edge):
            return add_edges(planner, [edge])[0]
        case UpdateEdgeOp(id=edge_id, patch=patch):
            return edge_model(update_edges(planner, [(edge_id, patch)])[0])
        case RemoveEdgeOp(id=edge_id):
            return remove(planner, "remove_edge", [edge_id])
    raise InvalidInput(f"Unknown batch operation {operation!r}")


def _stamped(fields: Row, planner: OpsPlanner) -> Row:
    return {
        **fields,
        "created_version": planner.made,
        "created_at": planner.now,
        "updated_at": planner.now,
    }


def _new_node_row(node: NodeInput, planner: OpsPlanner) -> Row:
    return _stamped(
        {
            "id": node_id(node.id) if node.id else f"node_{uuid.uuid4().hex[:12]}",
            "label": node.label,
            "type": node_type(node.type),
            "data": node.data,
            "position": node.position.model_dump() if node.position else None,
        },
        planner,
    )


def _new_edge_row(edge: EdgeInput, planner: OpsPlanner) -> Row:
    return _stamped(
        {
            "id": edge.id or f"edge_{uuid.uuid4().hex[:12]}",
            "source": node_id(edge.source),
            "target": node_id(edge.target),
            "label": edge.label,
            "type": edge.type,
            "data": edge.data,
        },
        planner,
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
