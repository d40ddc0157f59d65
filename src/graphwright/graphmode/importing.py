"""Graph Mode imports and merges: a whole graph merged into the stored one by the core rules, and
duplicate nodes folded into one."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any

import orjson

from graphwright.core.formats import read_graph
from graphwright.core.merge import GraphAccumulator
from graphwright.errors import InvalidInput
from graphwright.graphmode.change import GraphServiceBase
from graphwright.graphmode.import_plan import ImportPlan, apply_import, plan_import
from graphwright.graphmode.merge_plan import apply_merge, plan_merge
from graphwright.graphmode.repository import GraphRepository
from graphwright.graphmode.rows import node_id
from graphwright.graphmode.schemas import ImportReport, Node, Written


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

        def plan(
            repo: GraphRepository, project_id: int | None, version: int, now: datetime
        ) -> ImportPlan:
            graph = _fresh(incoming)
            return plan_import(repo, project_id, version, graph, result_id=result_id, now=now)

        return self._write_planned(
            conversation_id, "import", actor, expected_version, plan, apply_import
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

        plan = partial(plan_merge, keep_id=keep_id, remove_ids=remove_ids)
        return self._write_planned(
            conversation_id, "mergeNodes", actor, expected_version, plan, apply_merge
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
