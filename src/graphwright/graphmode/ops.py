"""The change-log op vocabulary: ops and their rows as JSON, the inverse of updates, and ops
applied to an in-memory graph (for time travel). `ops_plan` applies them to the database.

Ops are JSON objects:
  {"op": "add_node", "node": row}          {"op": "remove_node", "id": ...}
  {"op": "update_node", "id": ..., "set": {column: value}}
  {"op": "add_edge", "edge": row}          {"op": "remove_edge", "id": ...}
  {"op": "update_edge", "id": ..., "set": {column: value}}
  {"op": "stash", "scope": "created" | "all", "version": V}: move the rows created by changeset V
      (or all rows) to the stash tables under V;  {"op": "unstash", "scope": ..., "version": V}
Rows hold every column; timestamps are ISO 8601 strings in ops and datetimes in rows.
The inverse of a list of ops is the inverses of its runs of equal ops, last run first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from typing import Any

from graphwright.errors import NotFound
from graphwright.graphmode.repository import Row

Op = dict[str, Any]
TIMESTAMPS = ("created_at", "updated_at")
ENDS = frozenset({"source", "target"})


def row_to_json(row: Row) -> Row:
    out = dict(row)
    for key in TIMESTAMPS:
        value = out.get(key)
        if isinstance(value, datetime):
            out[key] = value.isoformat()
    return out


def row_from_json(row: Row) -> Row:
    out = dict(row)
    for key in TIMESTAMPS:
        value = out.get(key)
        if isinstance(value, str):
            out[key] = datetime.fromisoformat(value)
    return out


def flatten_inverse(runs: list[list[Op]]) -> list[Op]:
    return [op for run in reversed(runs) for op in run]


def missing_node(node_id: str) -> NotFound:
    return NotFound(f"No node '{node_id}' in this graph")


def missing_edge(edge_id: str) -> NotFound:
    return NotFound(f"No edge '{edge_id}' in this graph")


def updated(
    ops: list[Op], found: dict[str, Row], missing: Callable[[str], NotFound]
) -> tuple[list[Op], list[tuple[Row, Row]]]:
    """Each op's `set` over the row in `found` (read once for the whole run): the inverse, which
    sets the old values back, and the writes, (row before, values), in order. `found` follows
    the writes, for a row updated twice in a run."""
    inverse: list[Op] = []
    writes: list[tuple[Row, Row]] = []
    for op in ops:
        current = found.get(op["id"])
        if current is None:
            raise missing(op["id"])
        values = row_from_json(op["set"])
        writes.append((current, values))
        found[op["id"]] = {**current, **values}
        old = row_to_json({key: current[key] for key in values})
        inverse.append({"op": op["op"], "id": op["id"], "set": old})
    return list(reversed(inverse)), writes


class MemoryGraph:
    """A whole graph in dicts, for replaying the change log without touching the database.

    `load_stash(version)` reads the rows of an undone import when the replay needs them back.
    """

    def __init__(
        self,
        nodes: dict[str, Row],
        edges: dict[str, Row],
        load_stash: Callable[[int], tuple[list[Row], list[Row]]],
    ) -> None:
        self.nodes = nodes
        self.edges = edges
        self.load_stash = load_stash
        self.stash: dict[int, tuple[list[Row], list[Row]]] = {}
        self.adjacent: dict[str, set[str]] = defaultdict(set)
        for edge in edges.values():
            self._link(edge)

    def apply(self, ops: list[Op]) -> None:
        for op in ops:
            getattr(self, "_" + op["op"])(op)

    def _link(self, edge: Row) -> None:
        self.adjacent[edge["source"]].add(edge["id"])
        self.adjacent[edge["target"]].add(edge["id"])

    def _unlink(self, edge: Row) -> None:
        self.adjacent[edge["source"]].discard(edge["id"])
        self.adjacent[edge["target"]].discard(edge["id"])

    def _put_edge(self, edge: Row) -> None:
        old = self.edges.get(edge["id"])
        if old is not None:
            self._unlink(old)
        self.edges[edge["id"]] = edge
        self._link(edge)

    def _drop_edge(self, edge_id: str) -> None:
        old = self.edges.pop(edge_id, None)
        if old is not None:
            self._unlink(old)

    def _add_node(self, op: Op) -> None:
        row = row_from_json(op["node"])
        self.nodes[row["id"]] = row

    def _remove_node(self, op: Op) -> None:
        self.nodes.pop(op["id"], None)
        for edge_id in list(self.adjacent.pop(op["id"], ())):
            self._drop_edge(edge_id)

    def _update_node(self, op: Op) -> None:
        self.nodes[op["id"]] = {**self.nodes[op["id"]], **row_from_json(op["set"])}

    def _add_edge(self, op: Op) -> None:
        self._put_edge(row_from_json(op["edge"]))

    def _remove_edge(self, op: Op) -> None:
        self._drop_edge(op["id"])

    def _update_edge(self, op: Op) -> None:
        self._put_edge({**self.edges[op["id"]], **row_from_json(op["set"])})

    def _stash(self, op: Op) -> None:
        version, everything = op["version"], op["scope"] == "all"
        taken_edges = [
            e for e in self.edges.values() if everything or e["created_version"] == version
        ]
        taken_nodes = [
            n for n in self.nodes.values() if everything or n["created_version"] == version
        ]
        for edge in taken_edges:
            self._drop_edge(edge["id"])
        for node in taken_nodes:
            del self.nodes[node["id"]]
        self.stash[version] = (taken_nodes, taken_edges)

    def _unstash(self, op: Op) -> None:
        version = op["version"]
        stashed = self.stash.pop(version, None) or self.load_stash(version)
        for node in stashed[0]:
            self.nodes[node["id"]] = node
        for edge in stashed[1]:
            self._put_edge(edge)
