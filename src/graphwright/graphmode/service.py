"""Graph Mode rules: one transaction and one new version per operation, undo/redo, time travel.

See docs/graph-mode.md for the change-log design. The REST API and the graph MCP server call these
methods; they never touch the repository themselves.
"""

from __future__ import annotations

import secrets
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson

from graphwright.core.formats import read_graph, write_graph
from graphwright.core.ids import normalize_curie
from graphwright.core.merge import GraphAccumulator
from graphwright.db import Database
from graphwright.errors import Conflict, InvalidInput, NotFound
from graphwright.graphmode.events import GraphEvents
from graphwright.graphmode.models import GraphChangeset
from graphwright.graphmode.ops import MemoryGraph, Op, apply_ops, flatten_inverse, row_to_json
from graphwright.graphmode.repository import GraphRepository, ProjectRow, Row
from graphwright.graphmode.schemas import (
    AddEdgeOp,
    AddNodeOp,
    BatchOperation,
    ChangesetDetail,
    ChangesetSummary,
    Edge,
    EdgeChange,
    EdgeInput,
    EdgePatch,
    EdgeUpdate,
    GraphDiff,
    GraphMetadata,
    GraphState,
    GraphSummary,
    HistoryPage,
    ImportReport,
    Node,
    NodeChange,
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

T = TypeVar("T")

# Seed-graph node keys that map onto columns rather than into `data`.
NODE_TYPE_KEYS = ("category", "entityType", "type")
NODE_COLUMN_KEYS = frozenset({"id", "name", "label", "position", *NODE_TYPE_KEYS})
LINK_COLUMN_KEYS = frozenset({"id", "source", "target", "label", "type"})
EXISTING = "__existing__"  # provenance tag of rows already stored, removed after a merge
NODE_FIELDS = ("label", "type", "data", "position")
EDGE_FIELDS = ("source", "target", "label", "type", "data")


def _now() -> datetime:
    return datetime.now(UTC)


def node_id(raw: str) -> str:
    normalized = normalize_curie(raw)
    if not normalized:
        raise InvalidInput("A node id must not be blank")
    return normalized


class VersionConflict(Conflict):
    """The write named a version the graph is no longer at."""

    code = "version_conflict"


@dataclass
class _Change:
    """The write in progress: the ops applied so far and their inverse."""

    repo: GraphRepository
    project_id: int
    version: int
    now: datetime
    forward: list[Op] = field(default_factory=list)
    inverse_runs: list[list[Op]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    kind: str = "edit"
    target: GraphChangeset | None = None

    def apply(self, ops: list[Op]) -> list[Op]:
        inverse = apply_ops(self.repo, self.project_id, ops)
        self.record(ops, inverse)
        return inverse

    def record(self, forward: list[Op], inverse: list[Op]) -> None:
        self.forward.extend(forward)
        self.inverse_runs.append(inverse)

    @property
    def inverse(self) -> list[Op]:
        return flatten_inverse(self.inverse_runs)


class GraphService:
    def __init__(self, db: Database, events: GraphEvents) -> None:
        self._db = db
        self._events = events

    # -- reads ---------------------------------------------------------------------------------

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
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
            page = {
                "node_types": node_types,
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
            nodes=[_node(r) for r in rows], edges=[_edge(r) for r in edge_rows], metadata=metadata
        )

    def summary(self, conversation_id: str) -> GraphSummary:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
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
            row = repo.nodes_by_ids(_existing(repo, conversation_id).id, [wanted]).get(wanted)
        if row is None:
            raise NotFound(f"No node '{wanted}' in this graph")
        return _node(row)

    def get_edge(self, conversation_id: str, edge_id: str) -> Edge:
        with self._db.read() as session:
            repo = GraphRepository(session)
            row = repo.edges_by_ids(_existing(repo, conversation_id).id, [edge_id]).get(edge_id)
        if row is None:
            raise NotFound(f"No edge '{edge_id}' in this graph")
        return _edge(row)

    def neighbors(
        self, conversation_id: str, raw_id: str, *, depth: int = 1, limit: int = 500
    ) -> GraphState:
        """The node, the nodes within `depth` hops (at most `limit`) and the edges among them."""
        start = node_id(raw_id)
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
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
            nodes=[_node(node_rows[i]) for i in sorted(node_rows)],
            edges=[_edge(edge_rows[i]) for i in sorted(edge_rows)],
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
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
            return [_node(r) for r in repo.search_nodes(project.id, query, types, limit)]

    def to_graph(self, conversation_id: str) -> dict[str, Any]:
        """The whole graph as seed graph JSON `{"nodes": [...], "links": [...]}`."""
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
            node_rows, edge_rows = repo.all_nodes(project.id), repo.all_edges(project.id)
        return {
            "nodes": [_seed_node(r) for r in node_rows],
            "links": [_seed_link(r) for r in edge_rows],
        }

    def export(self, conversation_id: str, fmt: str = "json") -> str | bytes:
        return write_graph(self.to_graph(conversation_id), fmt)

    def history(self, conversation_id: str, *, offset: int = 0, limit: int = 50) -> HistoryPage:
        if offset < 0 or not 1 <= limit <= 1000:
            raise InvalidInput("offset must be >= 0 and limit between 1 and 1000")
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
            items, total = repo.history(project.id, offset, limit)
            summaries = [_summary(c) for c in items]
        return HistoryPage(
            items=summaries, total=total, offset=offset, limit=limit, version=project.version
        )

    def changeset(self, conversation_id: str, version: int) -> ChangesetDetail:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
            found = repo.changeset(project.id, version)
            if found is None:
                raise _no_version(version, project.version)
            return ChangesetDetail(
                **_summary(found).model_dump(), forward=found.forward, inverse=found.inverse
            )

    def state_at(self, conversation_id: str, version: int) -> GraphState:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
            (node_rows, edge_rows), *_ = self._replay(repo, project, [version])
        metadata = GraphMetadata(
            node_count=len(node_rows),
            edge_count=len(edge_rows),
            version=version,
            last_updated=None,
        )
        return GraphState(
            nodes=[_node(node_rows[k]) for k in sorted(node_rows)],
            edges=[_edge(edge_rows[k]) for k in sorted(edge_rows)],
            metadata=metadata,
        )

    def diff(self, conversation_id: str, from_version: int, to_version: int) -> GraphDiff:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
            before, after = self._replay(repo, project, [from_version, to_version])
        nodes_before, edges_before = before
        nodes_after, edges_after = after
        return GraphDiff(
            from_version=from_version,
            to_version=to_version,
            nodes_added=[_node(nodes_after[k]) for k in sorted(nodes_after.keys() - nodes_before)],
            nodes_removed=[
                _node(nodes_before[k]) for k in sorted(nodes_before.keys() - nodes_after)
            ],
            nodes_changed=[
                NodeChange(before=_node(nodes_before[k]), after=_node(nodes_after[k]))
                for k in sorted(nodes_before.keys() & nodes_after.keys())
                if _differs(nodes_before[k], nodes_after[k], NODE_FIELDS)
            ],
            edges_added=[_edge(edges_after[k]) for k in sorted(edges_after.keys() - edges_before)],
            edges_removed=[
                _edge(edges_before[k]) for k in sorted(edges_before.keys() - edges_after)
            ],
            edges_changed=[
                EdgeChange(before=_edge(edges_before[k]), after=_edge(edges_after[k]))
                for k in sorted(edges_before.keys() & edges_after.keys())
                if _differs(edges_before[k], edges_after[k], EDGE_FIELDS)
            ],
        )

    def _preview_node_removal(
        self, conversation_id: str, selection: NodeSelection
    ) -> Written[Removal]:
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = _existing(repo, conversation_id)
            ids = _select_nodes(repo, project.id, selection)
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
            project = _existing(repo, conversation_id)
            found = repo.edges_by_ids(project.id, edge_ids)
        for edge_id in edge_ids:
            if edge_id not in found:
                raise NotFound(f"No edge '{edge_id}' in this graph")
        removal = Removal(preview=True, edge_ids=sorted(found), edge_count=len(found))
        return Written(removal, project.version)

    # -- single writes -------------------------------------------------------------------------

    def add_node(
        self,
        conversation_id: str,
        node: NodeInput,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Node]:
        def build(change: _Change) -> Node:
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
        def build(change: _Change) -> Node:
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
        def build(change: _Change) -> Removal:
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
        def build(change: _Change) -> Edge:
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
        def build(change: _Change) -> Edge:
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
        def build(change: _Change) -> Removal:
            return _remove(change, "remove_edge", [edge_id])

        return self._write(conversation_id, "removeEdge", actor, expected_version, build)

    # -- bulk writes ---------------------------------------------------------------------------

    def add_nodes(
        self,
        conversation_id: str,
        nodes: Sequence[NodeInput],
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[list[Node]]:
        def build(change: _Change) -> list[Node]:
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
        def build(change: _Change) -> list[Edge]:
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
        def build(change: _Change) -> list[Edge]:
            return [self._update_edge(change, u.id, u) for u in updates]

        return self._write(conversation_id, "updateEdges", actor, expected_version, build)

    def remove_nodes(
        self,
        conversation_id: str,
        selection: NodeSelection,
        *,
        actor: str,
        preview: bool = False,
        expected_version: int | None = None,
    ) -> Written[Removal]:
        if preview:
            return self._preview_node_removal(conversation_id, selection)

        def build(change: _Change) -> Removal:
            ids = _select_nodes(change.repo, change.project_id, selection)
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
        if preview:
            return self._preview_edge_removal(conversation_id, edge_ids)

        def build(change: _Change) -> Removal:
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

        def build(change: _Change) -> list[Any]:
            return [self._batch_step(change, operation) for operation in operations]

        return self._write(conversation_id, "batch", actor, expected_version, build)

    def clear(
        self, conversation_id: str, *, actor: str, expected_version: int | None = None
    ) -> Written[Removal]:
        """Remove everything. The rows move to the stash, so the changeset stays small."""

        def build(change: _Change) -> Removal:
            node_count, edge_count = change.repo.counts(change.project_id)
            change.apply([{"op": "stash", "scope": "all", "version": change.version}])
            return Removal(node_count=node_count, edge_count=edge_count)

        return self._write(conversation_id, "clear", actor, expected_version, build)

    def import_graph(
        self,
        conversation_id: str,
        graph: dict[str, Any] | str | bytes,
        *,
        fmt: str = "json",
        actor: str,
        expected_version: int | None = None,
    ) -> Written[ImportReport]:
        """Merge a graph (seed JSON or any core format) into the stored one, by the core rules:
        nodes by id, links by source, label and target, evidence unioned."""
        # Parsing and merging the import itself happen before the write lock is taken.
        result_id = f"import-{uuid.uuid4().hex[:8]}"
        incoming = GraphAccumulator()
        incoming.add(_parse_graph(graph, fmt), result_id=result_id)

        def build(change: _Change) -> ImportReport:
            change.summary["resultId"] = result_id
            # A parse of to_json() is a faster deep copy than to_graph() for big imports.
            return self._import(change, orjson.loads(incoming.to_json()), result_id)

        return self._write(conversation_id, "import", actor, expected_version, build)

    def merge_nodes(
        self,
        conversation_id: str,
        keep: str,
        remove: Sequence[str],
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[Node]:
        """Fold `remove` into `keep`: re-point their edges, union evidence and properties."""
        keep_id = node_id(keep)
        remove_ids = list(dict.fromkeys(node_id(r) for r in remove))
        if keep_id in remove_ids:
            raise InvalidInput(f"Node '{keep_id}' cannot be both kept and removed")

        def build(change: _Change) -> Node:
            return self._merge_nodes(change, keep_id, remove_ids)

        return self._write(conversation_id, "mergeNodes", actor, expected_version, build)

    # -- undo, redo, revert --------------------------------------------------------------------

    def undo(
        self, conversation_id: str, *, actor: str, expected_version: int | None = None
    ) -> Written[ChangesetSummary]:
        def build(change: _Change) -> None:
            target = change.repo.newest_applied_edit(change.project_id)
            if target is None:
                raise Conflict("Nothing to undo in this graph", current_version=change.version - 1)
            change.apply(target.inverse)
            change.repo.set_undo_state(target.id, "undone")
            change.kind, change.target = "undo", target

        return self._write_summary(conversation_id, "undo", actor, expected_version, build)

    def redo(
        self, conversation_id: str, *, actor: str, expected_version: int | None = None
    ) -> Written[ChangesetSummary]:
        def build(change: _Change) -> None:
            target = change.repo.oldest_undone_edit(change.project_id)
            if target is None:
                raise Conflict("Nothing to redo in this graph", current_version=change.version - 1)
            change.apply(target.forward)
            change.repo.set_undo_state(target.id, "applied")
            change.kind, change.target = "redo", target

        return self._write_summary(conversation_id, "redo", actor, expected_version, build)

    def revert(
        self,
        conversation_id: str,
        version: int,
        *,
        actor: str,
        expected_version: int | None = None,
    ) -> Written[ChangesetSummary]:
        """Make the graph what it was at `version`, as one new (undoable) version."""

        def build(change: _Change) -> None:
            project = ProjectRow(change.project_id, conversation_id, change.version - 1, None)
            # The replay starts from the current rows: one read of them serves both states.
            (nodes_now, edges_now), (nodes_then, edges_then) = self._replay(
                change.repo, project, [project.version, version]
            )
            change.apply(_revert_ops(nodes_now, edges_now, nodes_then, edges_then, change.now))
            change.summary["revertedTo"] = version

        return self._write_summary(conversation_id, "revert", actor, expected_version, build)

    def delete_graph(self, conversation_id: str) -> None:
        """Delete the conversation's graph with its history (not undoable); none is fine."""
        with self._db.write() as session:
            GraphRepository(session).delete_project(conversation_id)

    # -- machinery -----------------------------------------------------------------------------

    def _write(
        self,
        conversation_id: str,
        command: str,
        actor: str,
        expected_version: int | None,
        build: Callable[[_Change], T],
    ) -> Written[T]:
        if not conversation_id or len(conversation_id) > 200:
            raise InvalidInput("A conversation id must have 1 to 200 characters")
        now = _now()
        with self._db.write() as session:
            repo = GraphRepository(session)
            project = repo.lock_project(conversation_id, now)
            if expected_version is not None and expected_version != project.version:
                raise VersionConflict(
                    f"This graph is at version {project.version}, not {expected_version}; "
                    "reload it and try again",
                    current_version=project.version,
                )
            change = _Change(repo, project.id, project.version + 1, now)
            result = build(change)
            self._record(change, command, actor)
            self._events.publish(
                session,
                {
                    "conversationId": conversation_id,
                    "version": change.version,
                    "command": command,
                    "actor": actor,
                    "summary": change.summary,
                },
            )
        return Written(result, change.version)

    def _record(self, change: _Change, command: str, actor: str) -> None:
        repo = change.repo
        dropped = repo.drop_undone(change.project_id) if change.kind == "edit" else []
        change.summary.update(Counter(op["op"] for op in change.forward))
        repo.add_changeset(
            {
                "project_id": change.project_id,
                "version": change.version,
                "kind": change.kind,
                "command": command,
                "actor": actor,
                "created_at": change.now,
                "forward": change.forward,
                "inverse": change.inverse,
                "summary": change.summary,
                "undo_state": "applied" if change.kind == "edit" else None,
                "target_version": change.target.version if change.target else None,
                "dropped_versions": dropped or None,
            }
        )
        repo.set_version(change.project_id, change.version, change.now)

    def _write_summary(
        self,
        conversation_id: str,
        command: str,
        actor: str,
        expected_version: int | None,
        build: Callable[[_Change], None],
    ) -> Written[ChangesetSummary]:
        captured: list[_Change] = []

        def run(change: _Change) -> None:
            build(change)
            captured.append(change)

        written = self._write(conversation_id, command, actor, expected_version, run)
        change = captured[0]
        return Written(
            ChangesetSummary(
                version=change.version,
                kind=change.kind,  # type: ignore[arg-type]
                command=command,
                actor=actor,
                created_at=change.now,
                summary=change.summary,
                target_version=change.target.version if change.target else None,
                undo_state="applied" if change.kind == "edit" else None,
            ),
            written.version,
        )

    def _replay(
        self, repo: GraphRepository, project: ProjectRow, versions: list[int]
    ) -> list[tuple[dict[str, Row], dict[str, Row]]]:
        """The graph at each of `versions`: the current state with inverses applied, newest
        first (the current state is the checkpoint)."""
        for version in versions:
            if not 0 <= version <= project.version:
                raise _no_version(version, project.version)
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

    def _update_node(self, change: _Change, wanted: str, patch: NodePatch) -> Node:
        current = change.repo.nodes_by_ids(change.project_id, [wanted]).get(wanted)
        if current is None:
            raise NotFound(f"No node '{wanted}' in this graph")
        values = _patched(current, patch, ("label", "type"), change.now)
        if "position" in patch.model_fields_set:
            values["position"] = patch.position.model_dump() if patch.position else None
        change.apply([{"op": "update_node", "id": wanted, "set": row_to_json(values)}])
        return _node({**current, **values})

    def _update_edge(self, change: _Change, edge_id: str, patch: EdgePatch) -> Edge:
        current = change.repo.edges_by_ids(change.project_id, [edge_id]).get(edge_id)
        if current is None:
            raise NotFound(f"No edge '{edge_id}' in this graph")
        values = _patched(current, patch, ("label", "type"), change.now)
        for end in ("source", "target"):
            value = getattr(patch, end)
            if value is not None:
                values[end] = node_id(value)
        change.apply([{"op": "update_edge", "id": edge_id, "set": row_to_json(values)}])
        return _edge({**current, **values})

    def _batch_step(self, change: _Change, operation: BatchOperation) -> Any:
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

    def _import(self, change: _Change, graph: dict[str, Any], result_id: str) -> ImportReport:
        repo, project_id, version, now = change.repo, change.project_id, change.version, change.now
        node_count, edge_count = repo.counts(project_id)
        stored_nodes: dict[str, Row] = {}
        stored_edges: dict[tuple[str, str, str], Row] = {}
        if node_count:
            stored_nodes = repo.nodes_by_ids(project_id, [n["id"] for n in graph["nodes"]])
        if edge_count and stored_nodes:
            for row in repo.edges_from_sources(project_id, stored_nodes):
                stored_edges[(row["source"], row["label"] or "", row["target"])] = row
        if stored_nodes:
            graph = _merge_with_stored(graph, result_id, stored_nodes, stored_edges)
        new_nodes, updates = [], []
        for seed in graph["nodes"]:
            fields = _node_fields(seed)
            stored = stored_nodes.get(fields["id"])
            if stored is None:
                new_nodes.append(_stamped(fields, change))
            elif _differs(stored, fields, NODE_FIELDS):
                fields.pop("id")
                fields["updated_at"] = now
                updates.append(
                    {"op": "update_node", "id": stored["id"], "set": row_to_json(fields)}
                )
        token = secrets.token_hex(4)
        new_edges, merged_edges = [], 0
        for index, seed in enumerate(graph["links"]):
            # to_graph() hands over fresh dicts: what is left after popping the columns is `data`.
            source, target = seed.pop("source"), seed.pop("target")
            label, kind = seed.pop("label", None), seed.pop("type", None)
            seed.pop("id", None)
            stored = stored_edges.get((source, label or "", target)) if stored_edges else None
            if stored is None:
                new_edges.append(
                    {"id": f"e{version}-{token}-{index}", "source": source, "target": target,
                     "label": label, "type": kind, "data": seed, "created_version": version,
                     "created_at": now, "updated_at": now}
                )  # fmt: skip
                continue
            merged_edges += 1
            fields = {"source": source, "target": target, "label": label, "type": kind}
            fields["data"] = seed
            if _differs(stored, fields, EDGE_FIELDS):
                fields["updated_at"] = now
                updates.append(
                    {"op": "update_edge", "id": stored["id"], "set": row_to_json(fields)}
                )
        repo.bulk_insert(project_id, "graph_nodes", new_nodes)
        repo.bulk_insert(project_id, "graph_edges", new_edges)
        change.record(
            [{"op": "unstash", "scope": "created", "version": change.version}],
            [{"op": "stash", "scope": "created", "version": change.version}],
        )
        if updates:
            change.apply(updates)
        report = ImportReport(
            nodes_added=len(new_nodes),
            nodes_merged=len(graph["nodes"]) - len(new_nodes),
            edges_added=len(new_edges),
            edges_merged=merged_edges,
        )
        change.summary.update(report.model_dump())
        return report

    def _merge_nodes(self, change: _Change, keep_id: str, remove_ids: list[str]) -> Node:
        repo, project_id = change.repo, change.project_id
        rows = repo.nodes_by_ids(project_id, [keep_id, *remove_ids])
        for wanted in [keep_id, *remove_ids]:
            if wanted not in rows:
                raise NotFound(f"No node '{wanted}' in this graph")
        removed = set(remove_ids)
        touching = repo.edges_touching(project_id, [keep_id, *remove_ids])
        by_key: dict[tuple[str, str, str], Row] = {}
        moved: dict[str, Row] = {}
        dropped: list[str] = []
        for edge in sorted(touching.values(), key=lambda e: (e["source"] in removed, e["id"])):
            source = keep_id if edge["source"] in removed else edge["source"]
            target = keep_id if edge["target"] in removed else edge["target"]
            key = (source, edge["label"] or "", target)
            kept = by_key.get(key)
            if kept is None:
                by_key[key] = {**edge, "source": source, "target": target}
                if (source, target) != (edge["source"], edge["target"]):
                    moved[edge["id"]] = by_key[key]
                continue
            kept["data"] = _merge_link_data(kept, edge)
            moved[kept["id"]] = kept
            dropped.append(edge["id"])
        ops: list[Op] = [{"op": "remove_edge", "id": i} for i in dropped]
        for edge_id, edge in moved.items():
            values = {k: edge[k] for k in ("source", "target", "data")} | {"updated_at": change.now}
            ops.append({"op": "update_edge", "id": edge_id, "set": row_to_json(values)})
        merged = _merge_node_rows(rows[keep_id], [rows[i] for i in remove_ids])
        merged["updated_at"] = change.now
        ops.append({"op": "update_node", "id": keep_id, "set": row_to_json(merged)})
        ops.extend({"op": "remove_node", "id": i} for i in remove_ids)
        change.apply(ops)
        change.summary["merged"] = {"keep": keep_id, "removed": remove_ids}
        return _node({**rows[keep_id], **merged})


# -- helpers -----------------------------------------------------------------------------------


def _existing(repo: GraphRepository, conversation_id: str) -> ProjectRow:
    project = repo.project(conversation_id)
    if project is None:
        raise NotFound(f"Conversation '{conversation_id}' has no graph yet")
    return project


def _no_version(version: int, current: int) -> NotFound:
    return NotFound(f"Version {version} does not exist; this graph has versions 0 to {current}")


def _node(row: Row) -> Node:
    return Node.model_validate(row)


def _edge(row: Row) -> Edge:
    return Edge.model_validate(row)


def _summary(changeset: GraphChangeset) -> ChangesetSummary:
    return ChangesetSummary(
        version=changeset.version,
        kind=changeset.kind,  # type: ignore[arg-type]
        command=changeset.command,
        actor=changeset.actor,
        created_at=changeset.created_at,
        summary=changeset.summary,
        undo_state=changeset.undo_state,
        target_version=changeset.target_version,
        dropped_versions=changeset.dropped_versions,
    )


def _add_nodes(change: _Change, nodes: Sequence[NodeInput]) -> list[Node]:
    rows = [_new_node_row(n, change) for n in nodes]
    change.apply([{"op": "add_node", "node": row_to_json(r)} for r in rows])
    return [_node(r) for r in rows]


def _add_edges(change: _Change, edges: Sequence[EdgeInput]) -> list[Edge]:
    rows = [_new_edge_row(e, change) for e in edges]
    change.apply([{"op": "add_edge", "edge": row_to_json(r)} for r in rows])
    return [_edge(r) for r in rows]


def _remove(change: _Change, op: str, ids: Sequence[str]) -> Removal:
    """Apply one `remove_node` or `remove_edge` op per id; what went, edges of nodes too."""
    return _removal(change.apply([{"op": op, "id": i} for i in ids]))


def _removal(inverse: list[Op]) -> Removal:
    node_ids = [op["node"]["id"] for op in inverse if op["op"] == "add_node"]
    edge_ids = [op["edge"]["id"] for op in inverse if op["op"] == "add_edge"]
    return Removal(
        node_ids=node_ids, edge_ids=edge_ids, node_count=len(node_ids), edge_count=len(edge_ids)
    )


def _select_nodes(repo: GraphRepository, project_id: int, selection: NodeSelection) -> list[str]:
    if selection.ids is not None:
        wanted = list(dict.fromkeys(node_id(i) for i in selection.ids))
        present = repo.existing_node_ids(project_id, wanted)
        for missing in wanted:
            if missing not in present:
                raise NotFound(f"No node '{missing}' in this graph")
        return wanted
    if selection.types is not None or selection.exclude_types:
        return repo.node_ids_by_type(project_id, selection.types, selection.exclude_types)
    exact = selection.degree
    return repo.node_ids_by_degree(
        project_id,
        min_degree=exact if exact is not None else selection.min_degree,
        max_degree=exact if exact is not None else selection.max_degree,
        node_type=selection.type,
    )


def _new_node_row(node: NodeInput, change: _Change) -> Row:
    return _stamped(
        {
            "id": node_id(node.id) if node.id else f"node_{uuid.uuid4().hex[:12]}",
            "label": node.label,
            "type": node.type,
            "data": node.data,
            "position": node.position.model_dump() if node.position else None,
        },
        change,
    )


def _new_edge_row(edge: EdgeInput, change: _Change) -> Row:
    return _stamped(
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


def _stamped(fields: Row, change: _Change) -> Row:
    return {
        **fields,
        "created_version": change.version,
        "created_at": change.now,
        "updated_at": change.now,
    }


def _patched(
    current: Row, patch: NodePatch | EdgePatch, names: tuple[str, ...], now: datetime
) -> Row:
    values: Row = {}
    for name in names:
        if name in patch.model_fields_set:
            value = getattr(patch, name)
            if value is None and name in ("label", "type") and isinstance(patch, NodePatch):
                raise InvalidInput(f"A node's {name} cannot be empty")
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


def _differs(old: Row, new: Row, names: tuple[str, ...]) -> bool:
    return any(old.get(name) != new.get(name) for name in names)


def _revert_ops(
    nodes_now: dict[str, Row],
    edges_now: dict[str, Row],
    nodes_then: dict[str, Row],
    edges_then: dict[str, Row],
    now: datetime,
) -> list[Op]:
    """Ops that turn the current graph into the earlier one; changed edges are re-added."""
    changed_edges = {
        k
        for k in edges_now.keys() & edges_then.keys()
        if _differs(edges_now[k], edges_then[k], EDGE_FIELDS)
    }
    gone_edges = sorted((edges_now.keys() - edges_then.keys()) | changed_edges)
    ops: list[Op] = [{"op": "remove_edge", "id": i} for i in gone_edges]
    ops += [{"op": "remove_node", "id": i} for i in sorted(nodes_now.keys() - nodes_then.keys())]
    ops += [
        {"op": "add_node", "node": row_to_json(nodes_then[i])}
        for i in sorted(nodes_then.keys() - nodes_now.keys())
    ]
    for key in sorted(nodes_now.keys() & nodes_then.keys()):
        if _differs(nodes_now[key], nodes_then[key], (*NODE_FIELDS, "created_version")):
            values = {k: nodes_then[key][k] for k in (*NODE_FIELDS, "created_version")}
            ops.append({"op": "update_node", "id": key, "set": row_to_json(values)})
    ops += [
        {"op": "add_edge", "edge": row_to_json(edges_then[i])}
        for i in sorted((edges_then.keys() - edges_now.keys()) | changed_edges)
    ]
    return ops


def _parse_graph(graph: dict[str, Any] | str | bytes, fmt: str) -> dict[str, Any] | str | bytes:
    """Seed graph JSON as it came (the accumulator validates it), other formats converted."""
    if isinstance(graph, dict) or fmt == "json":
        return graph
    return read_graph(graph, fmt)


def _node_fields(seed: dict[str, Any]) -> Row:
    """Columns of a node from its seed-graph form."""
    kind: Any = next((seed[k] for k in NODE_TYPE_KEYS if seed.get(k)), "other")
    if isinstance(kind, list):
        kind = kind[0] if kind else "other"
    position = seed.get("position")
    return {
        "id": seed["id"],
        "label": str(seed.get("name") or seed.get("label") or seed["id"]),
        "type": str(kind),
        "data": {k: v for k, v in seed.items() if k not in NODE_COLUMN_KEYS},
        "position": position if isinstance(position, dict) else None,
    }


def _link_fields(seed: dict[str, Any]) -> Row:
    return {
        "id": seed.get("id"),
        "source": seed["source"],
        "target": seed["target"],
        "label": seed.get("label"),
        "type": seed.get("type"),
        "data": {k: v for k, v in seed.items() if k not in LINK_COLUMN_KEYS},
    }


def _seed_node(row: Row) -> dict[str, Any]:
    seed = {"id": row["id"], "name": row["label"], "category": row["type"], **row["data"]}
    if row.get("position"):
        seed["position"] = row["position"]
    return seed


def _seed_link(row: Row, *, with_id: bool = True) -> dict[str, Any]:
    seed: dict[str, Any] = {"source": row["source"], "target": row["target"]}
    if with_id:
        seed["id"] = row["id"]
    if row["label"] is not None:
        seed["label"] = row["label"]
    if row["type"] is not None:
        seed["type"] = row["type"]
    seed.update(row["data"])
    seed.setdefault("evidence", [])
    return seed


def _without_existing_tag(seed: dict[str, Any]) -> dict[str, Any]:
    provenance = seed.get("provenance")
    if isinstance(provenance, list) and EXISTING in provenance:
        seed["provenance"] = [p for p in provenance if p != EXISTING]
        if not seed["provenance"]:
            del seed["provenance"]
    return seed


def _merge_with_stored(
    graph: dict[str, Any],
    result_id: str,
    stored_nodes: dict[str, Row],
    stored_edges: dict[tuple[str, str, str], Row],
) -> dict[str, Any]:
    """The import merged with the stored rows it touches, by the core merge rules."""
    merger = GraphAccumulator()
    merger.add(
        {
            "nodes": [_seed_node(r) for r in stored_nodes.values()],
            "links": [_seed_link(r, with_id=False) for r in stored_edges.values()],
        },
        result_id=EXISTING,
    )
    merger.add(graph, result_id=result_id)
    merged = merger.to_graph()
    return {
        "nodes": [_without_existing_tag(n) for n in merged["nodes"]],
        "links": [_without_existing_tag(link) for link in merged["links"]],
    }


def _merge_node_rows(keep: Row, others: list[Row]) -> Row:
    merger = GraphAccumulator()
    seeds = [_seed_node(keep)] + [{**_seed_node(o), "id": keep["id"]} for o in others]
    merger.add({"nodes": seeds}, result_id=EXISTING)
    merged = _node_fields(_without_existing_tag(merger.to_graph()["nodes"][0]))
    equivalents = list(merged["data"].get("equivalent_ids") or [])
    for other in others:
        for known in [other["id"], *(other["data"].get("equivalent_ids") or [])]:
            if known not in equivalents and known != keep["id"]:
                equivalents.append(known)
    merged["data"]["equivalent_ids"] = equivalents
    merged.pop("id")
    return merged


def _merge_link_data(kept: Row, other: Row) -> dict[str, Any]:
    merger = GraphAccumulator()
    ends = [{"id": kept["source"]}, {"id": kept["target"]}]
    links = [_seed_link(kept, with_id=False), {**_seed_link(other, with_id=False)}]
    links[1]["source"], links[1]["target"] = kept["source"], kept["target"]
    merger.add({"nodes": ends, "links": links}, result_id=EXISTING)
    return _link_fields(_without_existing_tag(merger.to_graph()["links"][0]))["data"]
