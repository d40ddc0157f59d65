"""Graph Mode imports and merges: a whole graph merged into the stored one by the core rules, and
duplicate nodes folded into one."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

import orjson

from graphwright.core.formats import read_graph
from graphwright.core.merge import GraphAccumulator
from graphwright.errors import InvalidInput
from graphwright.graphmode.change import (
    Change,
    GraphMoved,
    GraphServiceBase,
    Prepared,
    conversation_key,
)
from graphwright.graphmode.import_plan import (
    ImportPlan,
    apply_import,
    plan_import,
)
from graphwright.graphmode.merge_plan import MergePlan, apply_merge, plan_merge
from graphwright.graphmode.repository import GraphRepository
from graphwright.graphmode.rows import (
    node_id,
    utc_now,
)
from graphwright.graphmode.schemas import ImportReport, Node, Written

PLAN_ATTEMPTS = 3  # then the import or merge is planned inside the write transaction
P = TypeVar("P", bound=Prepared)
T = TypeVar("T")


class GraphImports(GraphServiceBase):
    """Imports and node merges."""

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
        nodes by id, links by source, label and target, evidence unioned.

        Parsing, merging and encoding happen before the write transaction, against the graph as
        last read; the transaction only writes, unless the graph moved on meanwhile (then the
        import is planned again, and after PLAN_ATTEMPTS inside the transaction).
        """
        result_id = f"import-{uuid.uuid4().hex[:8]}"
        parsed = _parse_graph(graph, fmt)
        if isinstance(parsed, dict):
            self.limits.seed_graph(parsed)
        incoming = GraphAccumulator()
        incoming.add(parsed, result_id=result_id)
        planned = self._write_planned(
            conversation_id,
            "import",
            actor,
            expected_version,
            lambda: self._plan_import(conversation_id, incoming, result_id),
            apply_import,
        )
        if planned is not None:
            return planned

        def build(change: Change) -> ImportReport:
            graph = _fresh(incoming)
            plan = plan_import(
                change.repo, change.project_id, change.version - 1, graph,
                result_id=result_id, now=change.now,
            )  # fmt: skip
            return apply_import(change, plan)

        return self._write(conversation_id, "import", actor, expected_version, build)

    def _write_planned(
        self,
        conversation_id: str,
        command: str,
        actor: str,
        expected_version: int | None,
        plan: Callable[[], P],
        apply: Callable[..., T],
    ) -> Written[T] | None:
        """Write work planned outside the transaction, planning again while the graph moves
        on meanwhile; None after PLAN_ATTEMPTS, when the caller plans inside the transaction."""
        for _ in range(PLAN_ATTEMPTS):
            planned = plan()
            try:
                return self._write(
                    conversation_id,
                    command,
                    actor,
                    expected_version,
                    partial(apply, plan=planned),
                    prepared=planned,
                )
            except GraphMoved:
                continue
        return None

    def _plan_import(
        self, conversation_id: str, incoming: GraphAccumulator, result_id: str
    ) -> ImportPlan:
        """The import planned against the graph as it stands, in a read transaction."""
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = repo.project(conversation_key(conversation_id))
            return plan_import(
                repo,
                project.id if project else None,
                project.version if project else 0,
                _fresh(incoming),
                result_id=result_id,
                now=utc_now(),
            )

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
        self.limits.id(keep, "keep")
        self.limits.ids(remove, "remove")
        keep_id = node_id(keep)
        remove_ids = list(dict.fromkeys(node_id(r) for r in remove))
        if keep_id in remove_ids:
            raise InvalidInput(f"Node '{keep_id}' cannot be both kept and removed")

        planned = self._write_planned(
            conversation_id,
            "mergeNodes",
            actor,
            expected_version,
            lambda: self._plan_merge(conversation_id, keep_id, remove_ids),
            apply_merge,
        )
        if planned is not None:
            return planned

        def build(change: Change) -> Node:
            plan = plan_merge(
                change.repo, change.project_id, change.version - 1, change.now, keep_id, remove_ids
            )
            return apply_merge(change, plan)

        return self._write(conversation_id, "mergeNodes", actor, expected_version, build)

    def _plan_merge(self, conversation_id: str, keep_id: str, remove_ids: list[str]) -> MergePlan:
        """The merge planned against the graph as it stands, in a read transaction: folding
        thousands of nodes takes seconds, which other conversations' writes must not wait."""
        with self._db.read() as session:
            repo = GraphRepository(session)
            project = repo.project(conversation_key(conversation_id))
            return plan_merge(
                repo,
                project.id if project else None,
                project.version if project else 0,
                utc_now(),
                keep_id,
                remove_ids,
            )


def _fresh(incoming: GraphAccumulator) -> dict[str, Any]:
    # A parse of to_json() is a faster deep copy than to_graph() for big imports.
    graph: dict[str, Any] = orjson.loads(incoming.to_json())
    return graph


def _parse_graph(graph: dict[str, Any] | str | bytes, fmt: str) -> dict[str, Any] | str | bytes:
    """Seed graph JSON as it came (the accumulator validates it), other formats converted."""
    if isinstance(graph, dict) or fmt == "json":
        return graph
    return read_graph(graph, fmt)
