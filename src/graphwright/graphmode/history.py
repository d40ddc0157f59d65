"""Graph Mode history: the change log, the graph at any version, diffs, undo, redo and revert."""

from __future__ import annotations

from graphwright.errors import Conflict, InvalidInput
from graphwright.graphmode.change import Change, GraphServiceBase, existing_project, no_version
from graphwright.graphmode.history_words import describe
from graphwright.graphmode.ops import MemoryGraph, Op, row_to_json
from graphwright.graphmode.ops_plan import OpsPlan, OpsPlanner, apply_plan, ops_planner
from graphwright.graphmode.repository import GraphRepository, ProjectRow, Row
from graphwright.graphmode.rows import (
    EDGE_FIELDS,
    NODE_FIELDS,
    changeset_summary,
    differs,
    edge_model,
    node_model,
)
from graphwright.graphmode.schemas import (
    ChangesetDetail,
    ChangesetSummary,
    EdgeChange,
    GraphDiff,
    GraphMetadata,
    GraphState,
    HistoryPage,
    NodeChange,
    Written,
)


class GraphHistory(GraphServiceBase):
    """Time travel over the change log."""

    def history(self, conversation_id: str, *, offset: int = 0, limit: int = 50) -> HistoryPage:
        if offset < 0 or not 1 <= limit <= 1000:
            raise InvalidInput("offset must be >= 0 and limit between 1 and 1000")
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            items, total = repo.history(project.id, offset, limit)
            summaries = _described(repo, project.id, [changeset_summary(c) for c in items])
        return HistoryPage(
            items=summaries, total=total, offset=offset, limit=limit, version=project.version
        )

    def changeset(self, conversation_id: str, version: int) -> ChangesetDetail:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            found = repo.changeset(project.id, version)
            if found is None:
                raise no_version(version, project.version)
            (summary,) = _described(repo, project.id, [changeset_summary(found)])
            return ChangesetDetail(
                **summary.model_dump(),
                forward=found.forward,
                inverse=found.inverse,
            )

    def state_at(self, conversation_id: str, version: int) -> GraphState:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            (node_rows, edge_rows), *_ = self._replay(repo, project, [version])
        metadata = GraphMetadata(
            node_count=len(node_rows),
            edge_count=len(edge_rows),
            version=version,
            last_updated=None,
        )
        return GraphState(
            nodes=[node_model(node_rows[k]) for k in sorted(node_rows)],
            edges=[edge_model(edge_rows[k]) for k in sorted(edge_rows)],
            metadata=metadata,
        )

    def diff(self, conversation_id: str, from_version: int, to_version: int) -> GraphDiff:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = existing_project(repo, conversation_id)
            before, after = self._replay(repo, project, [from_version, to_version])
        nodes_before, edges_before = before
        nodes_after, edges_after = after
        edges_listed = (edges_after.keys() ^ edges_before.keys()) | {
            k
            for k in edges_before.keys() & edges_after.keys()
            if differs(edges_before[k], edges_after[k], EDGE_FIELDS)
        }
        ends = {
            row[end]
            for key in edges_listed
            for row in (edges_after.get(key) or edges_before[key],)
            for end in ("source", "target")
        }
        names = {
            i: (nodes_after.get(i) or nodes_before[i])["label"]
            for i in ends
            if i in nodes_after or i in nodes_before
        }
        return GraphDiff(
            names=names,
            from_version=from_version,
            to_version=to_version,
            nodes_added=[
                node_model(nodes_after[k]) for k in sorted(nodes_after.keys() - nodes_before)
            ],
            nodes_removed=[
                node_model(nodes_before[k]) for k in sorted(nodes_before.keys() - nodes_after)
            ],
            nodes_changed=[
                NodeChange(before=node_model(nodes_before[k]), after=node_model(nodes_after[k]))
                for k in sorted(nodes_before.keys() & nodes_after.keys())
                if differs(nodes_before[k], nodes_after[k], NODE_FIELDS)
            ],
            edges_added=[
                edge_model(edges_after[k]) for k in sorted(edges_after.keys() - edges_before)
            ],
            edges_removed=[
                edge_model(edges_before[k]) for k in sorted(edges_before.keys() - edges_after)
            ],
            edges_changed=[
                EdgeChange(before=edge_model(edges_before[k]), after=edge_model(edges_after[k]))
                for k in sorted(edges_before.keys() & edges_after.keys())
                if differs(edges_before[k], edges_after[k], EDGE_FIELDS)
            ],
        )

    def undo(
        self, conversation_id: str, *, actor: str, expected_version: int | None = None
    ) -> Written[ChangesetSummary]:
        return self._step(conversation_id, "undo", actor, expected_version)

    def redo(
        self, conversation_id: str, *, actor: str, expected_version: int | None = None
    ) -> Written[ChangesetSummary]:
        return self._step(conversation_id, "redo", actor, expected_version)

    def _step(
        self, conversation_id: str, kind: str, actor: str, expected_version: int | None
    ) -> Written[ChangesetSummary]:
        """Undo the newest applied edit, or redo the oldest undone one: its stored ops applied,
        planned before the write transaction (see `ops_plan`)."""
        undo = kind == "undo"

        def plan(planner: OpsPlanner) -> int:
            repo, project_id = planner.repo, planner.project_id
            target = None
            if project_id is not None:
                find = repo.newest_applied_edit if undo else repo.oldest_undone_edit
                target = find(project_id)
            if target is None:
                raise Conflict(f"Nothing to {kind} in this graph", current_version=planner.version)
            planner.run_all(target.inverse if undo else target.forward)
            return target.version

        def apply(change: Change, plan: OpsPlan[int]) -> None:
            (target,) = change.repo.changesets_at(change.project_id, {apply_plan(change, plan)})
            change.repo.set_undo_state(target.id, "undone" if undo else "applied")
            change.kind, change.target = kind, target

        return self._write_planned(
            conversation_id, kind, actor, expected_version, ops_planner(plan), apply,
            write=self._write_summary,
        )  # fmt: skip

    def revert(
        self,
        conversation_id: str,
        version: int,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[ChangesetSummary]:
        """Make the graph what it was at `version`, as one new (undoable) version: the history
        replayed and the graph diffed with it before the write transaction (see `ops_plan`)."""

        def plan(planner: OpsPlanner) -> None:
            if planner.project_id is None:  # the graph is made by this write, at version 0
                if version != 0:
                    raise no_version(version, 0)
                return
            project = ProjectRow(planner.project_id, conversation_id, planner.version, None)
            # The replay starts from the current rows: one read of them serves both states.
            (nodes_now, edges_now), (nodes_then, edges_then) = self._replay(
                planner.repo, project, [project.version, version]
            )
            planner.run_all(_revert_ops(nodes_now, edges_now, nodes_then, edges_then))

        def apply(change: Change, plan: OpsPlan[None]) -> None:
            apply_plan(change, plan)
            change.summary["revertedTo"] = version

        return self._write_planned(
            conversation_id, "revert", actor, expected_version, ops_planner(plan), apply,
            write=self._write_summary,
        )  # fmt: skip

    def delete_graph(self, conversation_id: str) -> None:
        """Delete the conversation's graph with its history (not undoable); none is fine."""
        with self._db.write() as session:
            GraphRepository(session).delete_project(conversation_id)

    def _replay(
        self, repo: GraphRepository, project: ProjectRow, versions: list[int]
    ) -> list[tuple[dict[str, Row], dict[str, Row]]]:
        """The graph at each of `versions`: the current state with inverses applied, newest
        first (the current state is the checkpoint)."""
        for version in versions:
            if not 0 <= version <= project.version:
                raise no_version(version, project.version)
        graph = MemoryGraph(
            {r["id"]: r for r in repo.all_nodes(project.id)},
            {r["id"]: r for r in repo.all_edges(project.id)},
            lambda v: repo.stashed_rows(project.id, v),
        )
        wanted = sorted(set(versions), reverse=True)
        found: dict[int, tuple[dict[str, Row], dict[str, Row]]] = {}
        if wanted[0] == project.version:
            found[wanted.pop(0)] = (dict(graph.nodes), dict(graph.edges))
        if wanted:
            for changeset in repo.changesets_after(project.id, wanted[-1]):
                graph.apply(changeset.inverse)
                if changeset.version - 1 == wanted[0]:
                    found[wanted.pop(0)] = (dict(graph.nodes), dict(graph.edges))
        return [found[v] for v in versions]


def _described(
    repo: GraphRepository, project_id: int, items: list[ChangesetSummary]
) -> list[ChangesetSummary]:
    """The items with their words; an undo or redo names the change it undid, read here when
    it is not among the items."""
    by_version = {item.version: item for item in items}
    missing = {i.target_version for i in items if i.target_version is not None} - set(by_version)
    if missing:
        for found in repo.changesets_at(project_id, missing):
            by_version[found.version] = changeset_summary(found)
    for item in items:
        target = by_version.get(item.target_version) if item.target_version else None
        item.description = describe(item, target)
    return items


def _revert_ops(
    nodes_now: dict[str, Row],
    edges_now: dict[str, Row],
    nodes_then: dict[str, Row],
    edges_then: dict[str, Row],
) -> list[Op]:
    """Ops that turn the current graph into the earlier one; changed edges are re-added."""
    changed_edges = {
        k
        for k in edges_now.keys() & edges_then.keys()
        if differs(edges_now[k], edges_then[k], EDGE_FIELDS)
    }
    gone_edges = sorted((edges_now.keys() - edges_then.keys()) | changed_edges)
    ops: list[Op] = [{"op": "remove_edge", "id": i} for i in gone_edges]
    ops += [{"op": "remove_node", "id": i} for i in sorted(nodes_now.keys() - nodes_then.keys())]
    ops += [
        {"op": "add_node", "node": row_to_json(nodes_then[i])}
        for i in sorted(nodes_then.keys() - nodes_now.keys())
    ]
    for key in sorted(nodes_now.keys() & nodes_then.keys()):
        if differs(nodes_now[key], nodes_then[key], (*NODE_FIELDS, "created_version")):
            values = {k: nodes_then[key][k] for k in (*NODE_FIELDS, "created_version")}
            ops.append({"op": "update_node", "id": key, "set": row_to_json(values)})
    ops += [
        {"op": "add_edge", "edge": row_to_json(edges_then[i])}
        for i in sorted((edges_then.keys() - edges_now.keys()) | changed_edges)
    ]
    return ops
