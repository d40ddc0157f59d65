"""Graph Mode edits: nodes and edges one at a time, in bulk and in batches, and clearing.

Every edit is planned before its write transaction (`ops_plan`, `edit_ops`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from graphwright.graphmode import edit_ops
from graphwright.graphmode.change import Change, GraphServiceBase
from graphwright.graphmode.ops_plan import OpsPlan, OpsPlanner, apply_plan, ops_planner
from graphwright.graphmode.reads import select_nodes
from graphwright.graphmode.repository import Row
from graphwright.graphmode.rows import edge_model, node_id
from graphwright.graphmode.schemas import (
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
    Written,
)

T = TypeVar("T")


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

        def plan(planner: OpsPlanner) -> Node:
            return edit_ops.add_nodes(planner, [node])[0]

        return self._write_edit(conversation_id, "addNode", actor, expected_version, plan)

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

        def plan(planner: OpsPlanner) -> Node:
            return edit_ops.update_node(planner, node_id(raw_id), patch)

        return self._write_edit(conversation_id, "updateNode", actor, expected_version, plan)

    def remove_node(
        self,
        conversation_id: str,
        raw_id: str,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Removal]:
        self.limits.id(raw_id, "id")

        def plan(planner: OpsPlanner) -> Removal:
            return edit_ops.remove(planner, "remove_node", [node_id(raw_id)])

        return self._write_edit(conversation_id, "removeNode", actor, expected_version, plan)

    def add_edge(
        self,
        conversation_id: str,
        edge: EdgeInput,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Edge]:
        self.limits.edge(edge)

        def plan(planner: OpsPlanner) -> Edge:
            return edit_ops.add_edges(planner, [edge])[0]

        return self._write_edit(conversation_id, "addEdge", actor, expected_version, plan)

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

        def plan(planner: OpsPlanner) -> Edge:
            return edge_model(edit_ops.update_edges(planner, [(edge_id, patch)])[0])

        return self._write_edit(conversation_id, "updateEdge", actor, expected_version, plan)

    def remove_edge(
        self,
        conversation_id: str,
        edge_id: str,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Removal]:
        self.limits.id(edge_id, "id")

        def plan(planner: OpsPlanner) -> Removal:
            return edit_ops.remove(planner, "remove_edge", [edge_id])

        return self._write_edit(conversation_id, "removeEdge", actor, expected_version, plan)

    def add_nodes(
        self,
        conversation_id: str,
        nodes: Sequence[NodeInput],
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[list[Node]]:
        self.limits.nodes(nodes)

        def plan(planner: OpsPlanner) -> list[Node]:
            return edit_ops.add_nodes(planner, nodes)

        return self._write_ops(conversation_id, "addNodes", actor, expected_version, plan)

    def add_edges(
        self,
        conversation_id: str,
        edges: Sequence[EdgeInput],
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[list[Edge]]:
        self.limits.edges(edges)

        def plan(planner: OpsPlanner) -> list[Edge]:
            return edit_ops.add_edges(planner, edges)

        return self._write_ops(conversation_id, "addEdges", actor, expected_version, plan)

    def update_edges(
        self,
        conversation_id: str,
        updates: Sequence[EdgeUpdate],
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[list[Edge]]:
        self.limits.edges(updates)

        def plan(planner: OpsPlanner) -> list[Row]:
            return edit_ops.update_edges(planner, [(u.id, u) for u in updates])

        # The models are built once the transaction (on SQLite, the write lock) is over.
        rows, version = self._write_ops(
            conversation_id, "updateEdges", actor, expected_version, plan
        )
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

        def plan(planner: OpsPlanner) -> Removal:
            if planner.project_id is None:
                return Removal()
            ids = select_nodes(planner.repo, planner.project_id, selection)
            return edit_ops.remove(planner, "remove_node", ids) if ids else Removal()

        return self._write_ops(conversation_id, "removeNodes", actor, expected_version, plan)

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

        def plan(planner: OpsPlanner) -> Removal:
            return edit_ops.remove(planner, "remove_edge", edge_ids)

        return self._write_ops(conversation_id, "removeEdges", actor, expected_version, plan)

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

        def plan(planner: OpsPlanner) -> list[Any]:
            return edit_ops.batch(planner, operations)

        return self._write_ops(conversation_id, "batch", actor, expected_version, plan)

    def clear(
        self, conversation_id: str, *, actor: str, expected_version: int | None = None
    ) -> Written[Removal]:
        """Remove everything. The rows move to the stash, so the changeset stays small."""

        def plan(planner: OpsPlanner) -> Removal:
            node_count, edge_count = (
                planner.repo.counts(planner.project_id)
                if planner.project_id is not None
                else (0, 0)
            )
            planner.run([{"op": "stash", "scope": "all", "version": planner.made}])
            return Removal(node_count=node_count, edge_count=edge_count)

        def apply(change: Change, plan: OpsPlan[Removal]) -> Removal:
            removal = apply_plan(change, plan)
            change.summary["cleared"] = {"nodes": removal.node_count, "edges": removal.edge_count}
            return removal

        return self._write_planned(
            conversation_id, "clear", actor, expected_version, ops_planner(plan), apply
        )

    def _write_ops(
        self,
        conversation_id: str,
        command: str,
        actor: str,
        expected_version: int | None,
        plan: Callable[[OpsPlanner], T],
    ) -> Written[T]:
        """A write of the ops `plan` runs, planned before its transaction (see `ops_plan`)."""
        return self._write_planned(
            conversation_id, command, actor, expected_version, ops_planner(plan), apply_plan
        )

    def _write_edit(
        self,
        conversation_id: str,
        command: str,
        actor: str,
        expected_version: int | None,
        plan: Callable[[OpsPlanner], T],
    ) -> Written[T]:
        """A single edit, which names a row or two: planned in its transaction, where that costs
        less than the read transaction planning it first would, and pipelined."""
        return self._write_planned(
            conversation_id,
            command,
            actor,
            expected_version,
            ops_planner(plan),
            apply_plan,
            attempts=0,
            pipelined=True,
        )
