"""An import, prepared: the incoming graph merged with the stored rows it touches, by the core
merge rules, and turned into rows and updates encoded for the driver.

All of this is Python work that grows with the import, so it runs before the write transaction
(on SQLite, before the database's one write lock is taken). The transaction then only checks that
the graph is still at the version the plan read, and hands the rows over (`apply_import`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_rules import EQUIVALENT_IDS, equivalence_fields
from graphwright.core.merge_values import CONFLICTS, merge_conflicts, merge_properties
from graphwright.graphmode.change import Change
from graphwright.graphmode.ops import Op, row_to_json
from graphwright.graphmode.repository import EDGE_COLUMNS, NODE_COLUMNS, GraphRepository, Row
from graphwright.graphmode.rows import (
    EDGE_FIELDS,
    NODE_FIELDS,
    differs,
    node_fields,
    seed_link,
    seed_node,
)
from graphwright.graphmode.schemas import ImportReport

EXISTING = "__existing__"  # provenance tag of rows already stored, removed after a merge
EQUIVALENCE_FIELDS = equivalence_fields(xref_equivalence=False)  # as GraphAccumulator()
_NOT_MERGED = frozenset({EQUIVALENT_IDS, CONFLICTS})
NODE_UPDATE_COLUMNS = ("label", "type", "data", "position", "updated_at")
# An import merges edges by (source, label, target), so their ends never change; leaving them
# out of the update spares SQLite rewriting the indexes on them.
EDGE_UPDATE_COLUMNS = ("label", "type", "data", "updated_at")

Encoded = list[tuple[Any, ...]]


@dataclass
class ImportPlan:
    """What an import writes, prepared from the graph at `version`; it makes `version + 1`."""

    version: int
    now: datetime
    result_id: str
    report: ImportReport
    nodes: Encoded = field(default_factory=list)
    edges: Encoded = field(default_factory=list)
    node_updates: Encoded = field(default_factory=list)
    edge_updates: Encoded = field(default_factory=list)
    forward: list[Op] = field(default_factory=list)  # the updates, for the change log
    inverse: list[Op] = field(default_factory=list)


def plan_import(
    repo: GraphRepository,
    project_id: int | None,
    version: int,
    graph: dict[str, Any],
    *,
    result_id: str,
    now: datetime,
) -> ImportPlan:
    """Plan the import of `graph` (fresh dicts, consumed) into the project at `version`
    (`project_id` None: there is no graph yet)."""
    stored_nodes, stored_edges = _stored_rows(repo, project_id, graph)
    if stored_nodes:
        graph = _merge_with_stored(graph, result_id, stored_nodes, stored_edges)
    made = version + 1
    new_nodes: list[Row] = []
    node_changes: list[tuple[Row, Row]] = []
    for seed in graph["nodes"]:
        fields = node_fields(seed)
        stored = stored_nodes.get(fields["id"])
        if stored is None:
            new_nodes.append(
                {**fields, "created_version": made, "created_at": now, "updated_at": now}
            )
        elif differs(stored, fields, NODE_FIELDS):
            node_changes.append((stored, {**fields, "updated_at": now}))
    token = secrets.token_hex(4)
    new_edges: list[Row] = []
    edge_changes: list[tuple[Row, Row]] = []
    for index, seed in enumerate(graph["links"]):
        # Fresh dicts: what is left after popping the columns is `data`.
        source, target = seed.pop("source"), seed.pop("target")
        label, kind = seed.pop("label", None), seed.pop("type", None)
        seed.pop("id", None)
        stored = stored_edges.get((source, label or "", target)) if stored_edges else None
        if stored is not None and "evidence" not in stored["data"] and not seed.get("evidence"):
            seed.pop("evidence", None)  # `seed_link` gave it the empty list the merge needs
        fields = {"source": source, "target": target, "label": label, "type": kind, "data": seed}
        if stored is None:
            new_edges.append(
                {"id": f"e{made}-{token}-{index}", **fields, "created_version": made,
                 "created_at": now, "updated_at": now}
            )  # fmt: skip
        elif differs(stored, fields, EDGE_FIELDS):
            edge_changes.append((stored, {**fields, "id": stored["id"], "updated_at": now}))
    plan = ImportPlan(
        version=version,
        now=now,
        result_id=result_id,
        report=ImportReport(
            nodes_added=len(new_nodes),
            nodes_merged=len(graph["nodes"]) - len(new_nodes),
            edges_added=len(new_edges),
            edges_merged=len(graph["links"]) - len(new_edges),
        ),
        nodes=repo.encode(NODE_COLUMNS, new_nodes),
        edges=repo.encode(EDGE_COLUMNS, new_edges),
        node_updates=repo.encode_updates(NODE_UPDATE_COLUMNS, (n for _, n in node_changes)),
        edge_updates=repo.encode_updates(EDGE_UPDATE_COLUMNS, (e for _, e in edge_changes)),
    )
    _log_updates(plan, "update_node", NODE_UPDATE_COLUMNS, node_changes)
    _log_updates(plan, "update_edge", EDGE_UPDATE_COLUMNS, edge_changes)
    return plan


def apply_import(change: Change, plan: ImportPlan) -> ImportReport:
    """Write a plan made from the graph at `change.version - 1`, in the write transaction."""
    repo, project_id = change.repo, change.project_id
    repo.bulk_insert(project_id, "graph_nodes", plan.nodes)
    repo.bulk_insert(project_id, "graph_edges", plan.edges)
    change.record(
        [{"op": "unstash", "scope": "created", "version": change.version}],
        [{"op": "stash", "scope": "created", "version": change.version}],
    )
    repo.bulk_update(project_id, "graph_nodes", NODE_UPDATE_COLUMNS, plan.node_updates)
    repo.bulk_update(project_id, "graph_edges", EDGE_UPDATE_COLUMNS, plan.edge_updates)
    if plan.forward:
        change.record(plan.forward, plan.inverse)
    change.summary["resultId"] = plan.result_id
    change.summary.update(plan.report.model_dump())
    return plan.report


def _stored_rows(
    repo: GraphRepository, project_id: int | None, graph: dict[str, Any]
) -> tuple[dict[str, Row], dict[tuple[str, str, str], Row]]:
    """The stored nodes the import names, and the stored edges between them, by merge key: an
    incoming link names two incoming nodes, so no other stored edge can be the same edge."""
    if project_id is None:
        return {}, {}
    node_count, edge_count = repo.counts(project_id)
    stored_nodes: dict[str, Row] = {}
    stored_edges: dict[tuple[str, str, str], Row] = {}
    if node_count:
        stored_nodes = repo.nodes_by_ids(project_id, [n["id"] for n in graph["nodes"]])
    if edge_count and stored_nodes:
        for row in repo.edges_between(project_id, stored_nodes.keys()):
            stored_edges[(row["source"], row["label"] or "", row["target"])] = row
    return stored_nodes, stored_edges


def _log_updates(
    plan: ImportPlan, op: str, columns: tuple[str, ...], changes: list[tuple[Row, Row]]
) -> None:
    """The change-log ops of a run of updates, and their inverse (last update undone first),
    as `OpsPlanner.run` would have recorded them."""
    forward = [
        {"op": op, "id": old["id"], "set": row_to_json({c: new[c] for c in columns})}
        for old, new in changes
    ]
    inverse = [
        {"op": op, "id": old["id"], "set": row_to_json({c: old[c] for c in columns})}
        for old, _ in reversed(changes)
    ]
    plan.forward.extend(forward)
    plan.inverse[:0] = inverse  # a later run is undone first


def without_existing_tag(seed: dict[str, Any]) -> dict[str, Any]:
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
    """The import merged with the stored rows it touches, by the core merge rules.

    A stored node keeps its id and stays one node: what it declares equivalent is set aside while
    merging, and given back after. Merged in, it could elect another of its ids to lead it (the
    import would then insert a second node) or join it with another stored node.
    """
    declared: dict[str, Row] = {}
    seeds = []
    for row in stored_nodes.values():
        seed = seed_node(row)
        held = {name: seed.pop(name) for name in EQUIVALENCE_FIELDS if name in seed}
        if held:
            declared[row["id"]] = held
        seeds.append(seed)
    merger = GraphAccumulator()
    merger.add(
        {"nodes": seeds, "links": [seed_link(r, with_id=False) for r in stored_edges.values()]},
        result_id=EXISTING,
    )
    merger.add(graph, result_id=result_id)
    merged = merger.to_graph()
    nodes = [without_existing_tag(n) for n in merged["nodes"]]
    for node in nodes:
        held = declared.get(node["id"])
        if held:
            _give_back(node, held)
    return {"nodes": nodes, "links": [without_existing_tag(link) for link in merged["links"]]}


def _give_back(node: dict[str, Any], held: Row) -> None:
    """Merge what a stored node declared back into it, the stored values first (so a node the
    import adds nothing to is not rewritten)."""
    restored = dict(held)
    incoming_ids = node.pop(EQUIVALENT_IDS, [])
    if incoming_ids or EQUIVALENT_IDS in restored:
        known = restored[EQUIVALENT_IDS] = list(restored.get(EQUIVALENT_IDS, []))
        known.extend(i for i in incoming_ids if i not in known)
    merge_properties(restored, {k: node[k] for k in held if k in node}, _NOT_MERGED)
    merge_conflicts(node, restored)
    restored.pop(CONFLICTS, None)
    node.update(restored)
