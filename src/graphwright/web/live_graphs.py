"""The Graph Mode graphs on screen, one snapshot per conversation shared by every tab.

A snapshot is read once (GraphService.to_graph), then kept current by applying each new
version's changeset (GraphService.changeset) instead of reading the whole graph again, so a live
change costs the server O(change). Changesets that move rows through the stash (imports,
clearing, their undo) make it read the graph again. The drawing of each version is built once
and shared by every tab that shows it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from graphwright.drawing.graph import Drawing, drawing
from graphwright.drawing.layout import Placement, place
from graphwright.errors import NotFound
from graphwright.graphmode.service import GraphService

Row = dict[str, Any]
KEPT = 8  # conversations kept in memory
MAX_STEPS = 200  # further behind than this, reading the graph again is cheaper
_NODE_KEYS = ("id", "name", "category", "position")
_EDGE_KEYS = ("id", "source", "target", "label", "type")


@dataclass
class Snapshot:
    version: int
    nodes: dict[str, Row]
    edges: dict[str, Row]
    positions: dict[str, tuple[float, float]] = field(default_factory=dict)
    _placement: Placement | None = None
    _drawing: Drawing | None = None

    def placement(self) -> Placement:
        """Where this version's nodes are drawn; settles their positions for the next version."""
        if self._placement is None:
            nodes, edges = list(self.nodes.values()), list(self.edges.values())
            self._placement = place(nodes, edges, self.positions)
            self.positions = self._placement.positions
        return self._placement

    def drawing(self, highlight: Collection[str] = ()) -> Drawing:
        """This version drawn with every type shown; the drawing without highlights is built
        once and shared."""
        if highlight:
            return self._draw(highlight)
        if self._drawing is None:
            self._drawing = self._draw(())
        return self._drawing

    def _draw(self, highlight: Collection[str]) -> Drawing:
        nodes, edges = list(self.nodes.values()), list(self.edges.values())
        return drawing(nodes, edges, self.placement(), version=self.version, highlight=highlight)


class LiveGraphs:
    def __init__(self, graphs: GraphService, kept: int = KEPT) -> None:
        self._graphs = graphs
        self._kept = kept
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def current(self, conversation_id: str) -> Snapshot:
        """The graph at its newest version (blocking: call it from a thread)."""
        with self._lock(conversation_id):
            version = self._graphs.version(conversation_id)
            snapshot = self._snapshots.get(conversation_id)
            if snapshot is None or not self._advance(conversation_id, snapshot, version):
                snapshot = self._read(conversation_id, snapshot)
            with self._guard:
                self._snapshots[conversation_id] = snapshot
                self._snapshots.move_to_end(conversation_id)
                while len(self._snapshots) > self._kept:
                    self._snapshots.popitem(last=False)
            return snapshot

    def _lock(self, conversation_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(conversation_id, threading.Lock())

    def _read(self, conversation_id: str, previous: Snapshot | None) -> Snapshot:
        while True:
            version = self._graphs.version(conversation_id)
            try:
                graph = self._graphs.to_graph(conversation_id)
            except NotFound:  # no graph yet
                graph = {"nodes": [], "links": []}
            if self._graphs.version(conversation_id) == version:
                break
        nodes = {seed["id"]: _node(seed) for seed in graph["nodes"]}
        edges = {seed["id"]: _edge(seed) for seed in graph["links"]}
        kept = previous.positions if previous else {}
        return Snapshot(version, nodes, edges, {k: v for k, v in kept.items() if k in nodes})

    def _advance(self, conversation_id: str, snapshot: Snapshot, version: int) -> bool:
        """Bring `snapshot` to `version` change by change; False when it must be read again."""
        if version < snapshot.version or version - snapshot.version > MAX_STEPS:
            return False
        nodes, edges = dict(snapshot.nodes), dict(snapshot.edges)
        for step in range(snapshot.version + 1, version + 1):
            try:
                forward = self._graphs.changeset(conversation_id, step).forward
            except NotFound:
                return False
            if not apply_ops(nodes, edges, forward):
                return False
        if version != snapshot.version:
            snapshot.version, snapshot.nodes, snapshot.edges = version, nodes, edges
            snapshot._placement = snapshot._drawing = None
        return True


def apply_ops(nodes: dict[str, Row], edges: dict[str, Row], ops: list[dict[str, Any]]) -> bool:
    """Apply change-log ops (graphmode.ops) to the view's rows; False at a stash op."""
    for op in ops:
        kind = op["op"]
        if kind == "add_node":
            nodes[op["node"]["id"]] = _node_row(op["node"])
        elif kind == "update_node" and op["id"] in nodes:
            nodes[op["id"]] = {**nodes[op["id"]], **_node_row(op["set"], partial=True)}
        elif kind == "remove_node":
            nodes.pop(op["id"], None)
            for edge_id in [k for k, e in edges.items() if op["id"] in (e["source"], e["target"])]:
                del edges[edge_id]
        elif kind == "add_edge":
            edges[op["edge"]["id"]] = _edge_row(op["edge"])
        elif kind == "update_edge" and op["id"] in edges:
            edges[op["id"]] = {**edges[op["id"]], **_edge_row(op["set"], partial=True)}
        elif kind == "remove_edge":
            edges.pop(op["id"], None)
        elif kind in ("stash", "unstash"):
            return False
    return True


def _node_row(row: Row, *, partial: bool = False) -> Row:
    keys = ("id", "label", "type", "data", "position")
    return {k: row.get(k) for k in keys if not partial or k in row}


def _edge_row(row: Row, *, partial: bool = False) -> Row:
    keys = ("id", "source", "target", "label", "type", "data")
    return {k: row.get(k) for k in keys if not partial or k in row}


def _node(seed: Row) -> Row:
    return {
        "id": seed["id"],
        "label": seed.get("name") or seed["id"],
        "type": seed.get("category") or "other",
        "position": seed.get("position"),
        "data": {k: v for k, v in seed.items() if k not in _NODE_KEYS},
    }


def _edge(seed: Row) -> Row:
    return {
        **{k: seed.get(k) for k in _EDGE_KEYS},
        "data": {k: v for k, v in seed.items() if k not in _EDGE_KEYS},
    }
