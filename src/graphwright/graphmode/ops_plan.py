"""Change-log ops planned before the write transaction: checked against the rows they name and
turned into the statements that apply them, with their inverse (issue 29, M7).

Applying 10,000 ops inside the write transaction (on SQLite, under the database's one write lock)
read and checked every row they name there, one statement at a time for a batch: seconds.
`OpsPlanner` applies runs of ops to an overlay of those rows, read in bulk before the transaction,
and records the statements, encoded for the driver; `apply_plan` hands them over in the
transaction, once it found the graph still at the version the plan read (else GraphMoved, and the
caller plans again). This is the one place the rules of each op (its checks, its errors, its
inverse) are applied to the database: every write of ops, undo, redo, revert and clear included.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from typing import Any, Generic, TypeVar

from graphwright.errors import Conflict, GraphwrightError, NotFound
from graphwright.graphmode.change import Change, GraphMoved, Planner
from graphwright.graphmode.ops import (
    ENDS,
    Op,
    flatten_inverse,
    missing_edge,
    missing_node,
    row_from_json,
    row_to_json,
    updated,
)
from graphwright.graphmode.repository import EDGE_COLUMNS, NODE_COLUMNS, GraphRepository, Row

T = TypeVar("T")
NODES, EDGES = "graph_nodes", "graph_edges"


@dataclass
class Step:
    """Statements of one kind on one table, in order: encoded rows to insert, encoded updates of
    `columns`, ids to delete, or (version, only the rows it created) to stash or unstash."""

    kind: str
    table: str
    columns: tuple[str, ...] = ()
    rows: list[Any] = field(default_factory=list)


@dataclass
class OpsPlan(Generic[T]):
    """What a write of ops does to the graph at `version`, and what it returns; or the error it
    raises, which the transaction raises once it found the graph still at `version`."""

    version: int
    now: datetime
    result: T | None = None
    forward: list[Op] = field(default_factory=list)
    inverse: list[Op] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    error: GraphwrightError | None = None
    # The overlay as the plan leaves it: the rows it read or wrote (None: absent).
    nodes: dict[str, Row | None] = field(default_factory=dict)
    edges: dict[str, Row | None] = field(default_factory=dict)


class OpsPlanner:
    """Runs of ops applied to the rows they name, read once into an overlay that follows them.

    The overlay holds a row, or None for one known to be absent, for every id read or written;
    `_adjacent` holds the present edges of the overlay by their ends, complete for the nodes in
    `_touching_read` (a removed node's edges go with it)."""

    def __init__(
        self, repo: GraphRepository, project_id: int | None, version: int, now: datetime
    ) -> None:
        self.repo, self.project_id, self.version, self.now = repo, project_id, version, now
        self.made = version + 1  # the version the write makes
        self.forward: list[Op] = []
        self._inverse_runs: list[list[Op]] = []
        self._steps: list[Step] = []
        self._nodes: dict[str, Row | None] = {}
        self._edges: dict[str, Row | None] = {}
        self._adjacent: defaultdict[str, dict[str, None]] = defaultdict(dict)
        self._touching_read: set[str] = set()
        self._stashed: list[tuple[int, bool]] = []  # (version, every row) stashed by the plan

    # the overlay

    def read(
        self, nodes: Iterable[str] = (), edges: Iterable[str] = (), touching: Iterable[str] = ()
    ) -> None:
        """Read into the overlay, in bulk, the rows these ids name that it lacks, and every edge
        touching the nodes `touching`."""
        wanted_nodes = [i for i in dict.fromkeys(nodes) if i not in self._nodes]
        found = self._stored(self.repo.nodes_by_ids, wanted_nodes)
        for node_id in wanted_nodes:
            row = found.get(node_id)
            self._nodes[node_id] = row if row is not None and self._kept(row) else None
        wanted_edges = [i for i in dict.fromkeys(edges) if i not in self._edges]
        self._take_edges(self._stored(self.repo.edges_by_ids, wanted_edges))
        for edge_id in wanted_edges:
            self._edges.setdefault(edge_id, None)
        wanted_ends = [i for i in dict.fromkeys(touching) if i not in self._touching_read]
        self._take_edges(self._stored(self.repo.edges_touching, wanted_ends))
        self._touching_read.update(wanted_ends)

    def node(self, node_id: str) -> Row | None:
        self.read(nodes=[node_id])
        return self._nodes[node_id]

    def edge(self, edge_id: str) -> Row | None:
        self.read(edges=[edge_id])
        return self._edges[edge_id]

    def _stored(self, read: Callable[[int, list[str]], dict[str, Row]], ids: list[str]) -> dict:
        return read(self.project_id, ids) if ids and self.project_id is not None else {}

    def _take_edges(self, stored: dict[str, Row]) -> None:
        """Stored edges into the overlay, where it does not know them yet."""
        fresh = [row for edge_id, row in stored.items() if edge_id not in self._edges]
        if self._stashed:  # an edge goes with a node the plan stashed
            self.read(nodes=[row[end] for row in fresh for end in ENDS])
        for row in fresh:
            ends_kept = all(self._nodes.get(row[end]) is not None for end in ENDS)
            if self._kept(row) and (ends_kept or not self._stashed):
                self._put_edge(row)
            else:
                self._edges[row["id"]] = None

    def _kept(self, row: Row) -> bool:
        """Whether a stored row is still live after the stashes planned so far."""
        return not any(every or row["created_version"] == v for v, every in self._stashed)

    def _put_edge(self, row: Row) -> None:
        self._drop_edge(row["id"])
        self._edges[row["id"]] = row
        for end in ENDS:
            self._adjacent[row[end]][row["id"]] = None

    def _drop_edge(self, edge_id: str) -> None:
        old = self._edges.get(edge_id)
        if old is not None:
            for end in ENDS:
                self._adjacent[old[end]].pop(edge_id, None)
        self._edges[edge_id] = None

    # runs of ops

    def run(self, ops: list[Op]) -> list[Op]:
        """Plan one run of ops of one kind; its inverse."""
        inverse = _RUNS[ops[0]["op"]](self, ops)
        self.forward.extend(ops)
        self._inverse_runs.append(inverse)
        return inverse

    def run_all(self, ops: list[Op]) -> None:
        """Plan ops in order, a run of equal ops at a time (as the change log replays them)."""
        for _, run in groupby(ops, key=itemgetter("op")):
            self.run(list(run))

    def plan(self, result: T) -> OpsPlan[T]:
        inverse = flatten_inverse(self._inverse_runs)
        return OpsPlan(
            self.version,
            self.now,
            result,
            self.forward,
            inverse,
            self._steps,
            nodes=self._nodes,
            edges=self._edges,
        )

    def _write(self, kind: str, table: str, rows: list[Any], columns: tuple[str, ...] = ()) -> None:
        """Queue statements; those of the same kind, table and columns as the last join it."""
        last = self._steps[-1] if self._steps else None
        if last is not None and (last.kind, last.table, last.columns) == (kind, table, columns):
            last.rows.extend(rows)
        else:
            self._steps.append(Step(kind, table, columns, rows))

    def _write_updates(self, table: str, writes: list[tuple[Row, Row]]) -> None:
        for columns, run in groupby(writes, key=lambda write: tuple(write[1])):
            rows = [{**values, "id": current["id"]} for current, values in run]
            self._write("update", table, self.repo.encode_updates(columns, rows), columns)

    def _add_nodes(self, ops: list[Op]) -> list[Op]:
        rows = [row_from_json(op["node"]) for op in ops]
        ids = [row["id"] for row in rows]
        seen: set[str] = set()
        for node_id in ids:
            if node_id in seen:
                raise Conflict(f"Node id '{node_id}' appears twice in this request")
            seen.add(node_id)
        self.read(nodes=ids)
        taken = [node_id for node_id in ids if self._nodes[node_id] is not None]
        if taken:
            raise Conflict(f"A node with id '{min(taken)}' already exists in this graph")
        self._nodes.update(zip(ids, rows, strict=True))
        self._write("insert", NODES, self.repo.encode(NODE_COLUMNS, rows))
        return [{"op": "remove_node", "id": node_id} for node_id in reversed(ids)]

    def _remove_nodes(self, ops: list[Op]) -> list[Op]:
        ids = list(dict.fromkeys(op["id"] for op in ops))
        self.read(nodes=ids, touching=ids)
        found = {i: row for i in ids if (row := self._nodes[i]) is not None}
        _require(found, ids, missing_node)
        touching = {
            edge_id: row
            for i in ids
            for edge_id in self._adjacent[i]
            if (row := self._edges[edge_id]) is not None
        }
        restore = [{"op": "add_node", "node": row_to_json(found[i])} for i in ids]
        restore += [{"op": "add_edge", "edge": row_to_json(row)} for row in touching.values()]
        for edge_id in touching:  # the database drops them with their nodes (ON DELETE CASCADE)
            self._drop_edge(edge_id)
        self._nodes.update(dict.fromkeys(ids))
        self._write("delete", NODES, ids)
        return restore

    def _update_nodes(self, ops: list[Op]) -> list[Op]:
        ids = [op["id"] for op in ops]
        self.read(nodes=ids)
        found = {i: row for i in ids if (row := self._nodes[i]) is not None}
        inverse, writes = updated(ops, found, missing_node)
        self._nodes.update(found)
        self._write_updates(NODES, writes)
        return inverse

    def _check_endpoints(self, rows: list[Row]) -> None:
        self.read(nodes=[row[end] for row in rows for end in ("source", "target")])
        for row in rows:
            for end in ("source", "target"):
                if self._nodes[row[end]] is None:
                    raise NotFound(
                        f"Cannot connect '{row['source']}' -> '{row['target']}': "
                        f"no node '{row[end]}' in this graph"
                    )

    def _add_edges(self, ops: list[Op]) -> list[Op]:
        rows = [row_from_json(op["edge"]) for op in ops]
        ids = [row["id"] for row in rows]
        if len(set(ids)) != len(ids):
            raise Conflict("An edge id appears twice in this request")
        self.read(edges=ids)
        taken = [edge_id for edge_id in ids if self._edges[edge_id] is not None]
        if taken:
            raise Conflict(f"An edge with id '{min(taken)}' already exists in this graph")
        self._check_endpoints(rows)
        for row in rows:
            self._put_edge(row)
        self._write("insert", EDGES, self.repo.encode(EDGE_COLUMNS, rows))
        return [{"op": "remove_edge", "id": edge_id} for edge_id in reversed(ids)]

    def _remove_edges(self, ops: list[Op]) -> list[Op]:
        ids = list(dict.fromkeys(op["id"] for op in ops))
        self.read(edges=ids)
        found = {i: row for i in ids if (row := self._edges[i]) is not None}
        _require(found, ids, missing_edge)
        for edge_id in ids:
            self._drop_edge(edge_id)
        self._write("delete", EDGES, ids)
        return [{"op": "add_edge", "edge": row_to_json(found[i])} for i in ids]

    def _update_edges(self, ops: list[Op]) -> list[Op]:
        ids = [op["id"] for op in ops]
        self.read(edges=ids)
        found = {i: row for i in ids if (row := self._edges[i]) is not None}
        inverse, writes = updated(ops, found, missing_edge)
        # The nodes stay as they are through a run of edge updates: their ends are checked at once.
        moved = [{**current, **values} for current, values in writes if values.keys() & ENDS]
        if moved:
            self._check_endpoints(moved)
        for row in found.values():
            self._put_edge(row)
        self._write_updates(EDGES, writes)
        return inverse

    def _stash(self, ops: list[Op]) -> list[Op]:
        for op in ops:
            every = op["scope"] == "all"
            self._stashed.append((op["version"], every))
            gone = {i for i, row in self._nodes.items() if row is not None and not self._kept(row)}
            self._nodes.update(dict.fromkeys(gone))
            for edge_id, row in list(self._edges.items()):
                if row is not None and (not self._kept(row) or not gone.isdisjoint(
                    (row["source"], row["target"])
                )):  # fmt: skip
                    self._drop_edge(edge_id)
            self._write("stash", "", [(op["version"], not every)])
        return [{**op, "op": "unstash"} for op in reversed(ops)]

    def _unstash(self, ops: list[Op]) -> list[Op]:
        for op in ops:
            if self.project_id is not None:
                stashed = self.repo.stashed_rows(self.project_id, op["version"])
                self._nodes.update((row["id"], row) for row in stashed[0])
                for row in stashed[1]:
                    self._put_edge(row)
            self._write("unstash", "", [op["version"]])
        return [{**op, "op": "stash"} for op in reversed(ops)]


_RUNS: dict[str, Callable[[OpsPlanner, list[Op]], list[Op]]] = {
    "add_node": OpsPlanner._add_nodes,
    "remove_node": OpsPlanner._remove_nodes,
    "update_node": OpsPlanner._update_nodes,
    "add_edge": OpsPlanner._add_edges,
    "remove_edge": OpsPlanner._remove_edges,
    "update_edge": OpsPlanner._update_edges,
    "stash": OpsPlanner._stash,
    "unstash": OpsPlanner._unstash,
}


def _require(found: dict[str, Row], ids: list[str], missing: Callable[[str], NotFound]) -> None:
    for wanted in ids:
        if wanted not in found:
            raise missing(wanted)


def ops_planner(plan: Callable[[OpsPlanner], T]) -> Planner[OpsPlan[T]]:
    """A planner (for `GraphServiceBase._write_planned`) of the ops `plan` runs: the write they
    make, or the error `plan` raised, which the write raises in its turn."""

    def planned(
        repo: GraphRepository, project_id: int | None, version: int, now: datetime
    ) -> OpsPlan[T]:
        planner = OpsPlanner(repo, project_id, version, now)
        try:
            result = plan(planner)
        except GraphwrightError as error:
            return OpsPlan(version, now, error=error)
        return planner.plan(result)

    return planned


def apply_plan(change: Change, plan: OpsPlan[T]) -> T:
    """Write a plan made from the graph at `change.version - 1`, in the write transaction.

    The plan read the rows at the version the transaction found, so each update and delete
    touches exactly the rows it names; a count that differs means the rows changed without a new
    version, and the write is planned again (GraphMoved) rather than written over them."""
    if plan.error is not None:
        raise plan.error
    repo, project_id = change.repo, change.project_id
    for step in plan.steps:
        done: int | None = None
        if step.kind == "insert":
            repo.bulk_insert(project_id, step.table, step.rows)
        elif step.kind == "update":
            done = repo.bulk_update(project_id, step.table, step.columns, step.rows)
        elif step.kind == "delete":
            delete = repo.delete_nodes if step.table == NODES else repo.delete_edges
            done = delete(project_id, step.rows)
        elif step.kind == "stash":
            for version, only_created in step.rows:
                repo.stash(project_id, version, only_created=only_created)
        else:
            for version in step.rows:
                repo.unstash(project_id, version)
        if done is not None and done != len(step.rows):
            raise GraphMoved(f"a {step.kind} of {len(step.rows)} rows changed {done}")
    change.record(plan.forward, plan.inverse)
    change.nodes_after, change.edges_after = plan.nodes, plan.edges  # a change applies one plan
    return plan.result  # type: ignore[return-value]
