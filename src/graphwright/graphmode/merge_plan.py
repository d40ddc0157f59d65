"""A node merge, prepared: the nodes folded into one, their links re-pointed and the links that
become one merged, by the core merge rules, with the change log's ops and their inverse.

Folding thousands of nodes takes seconds, and even reading them back and encoding them takes
most of a second, so all of it runs before the write transaction (on SQLite, before the database's
one write lock is taken). The transaction checks that the graph is still at the version the plan
read, hands the prepared statements over (`apply_merge`), and checks that they touched the rows
the plan read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphwright.core.merge import GraphAccumulator
from graphwright.errors import NotFound
from graphwright.graphmode.change import Change, GraphMoved
from graphwright.graphmode.import_plan import (
    EXISTING,
    NODE_UPDATE_COLUMNS,
    Encoded,
    without_existing_tag,
)
from graphwright.graphmode.ops import Op, row_to_json
from graphwright.graphmode.repository import GraphRepository, Row
from graphwright.graphmode.rows import link_fields, node_fields, node_model, seed_link, seed_node
from graphwright.graphmode.schemas import Node

# A merge re-points a link's ends and may merge its data; its label and type stay.
EDGE_MOVE_COLUMNS = ("source", "target", "data", "updated_at")


@dataclass
class MergePlan:
    """What a node merge writes, prepared from the graph at `version`; it makes `version + 1`."""

    version: int
    now: datetime
    node: Node
    summary: dict[str, Any]
    dropped_edges: list[str] = field(default_factory=list)
    moved_edges: Encoded = field(default_factory=list)
    kept_node: Encoded = field(default_factory=list)
    removed_nodes: list[str] = field(default_factory=list)
    forward: list[Op] = field(default_factory=list)  # for the change log, as `ops` records them
    inverse: list[Op] = field(default_factory=list)


def plan_merge(
    repo: GraphRepository,
    project_id: int | None,
    version: int,
    now: datetime,
    keep_id: str,
    remove_ids: list[str],
) -> MergePlan:
    """Plan folding `remove_ids` into `keep_id` in the project at `version`."""
    rows = repo.nodes_by_ids(project_id, [keep_id, *remove_ids]) if project_id else {}
    for wanted in [keep_id, *remove_ids]:
        if wanted not in rows:
            raise NotFound(f"No node '{wanted}' in this graph")
    touching = repo.edges_touching(project_id, [keep_id, *remove_ids]) if project_id else {}
    keep_row = rows[keep_id]
    removed = set(remove_ids)
    # The links that become one (same ends and label) are merged in one step per group: one
    # at a time, a group of n cost n merges of a growing evidence list.
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for edge in sorted(touching.values(), key=lambda e: (e["source"] in removed, e["id"])):
        source = keep_id if edge["source"] in removed else edge["source"]
        target = keep_id if edge["target"] in removed else edge["target"]
        groups.setdefault((source, edge["label"] or "", target), []).append(edge)
    moved: list[Row] = []
    dropped: list[str] = []
    for (source, _, target), (first, *others) in groups.items():
        kept = {**first, "source": source, "target": target, "updated_at": now}
        if others:
            kept["data"] = _merge_link_data(kept, others)
            dropped.extend(other["id"] for other in others)
        if others or (source, target) != (first["source"], first["target"]):
            moved.append(kept)
    merged = _merge_node_rows(keep_row, [rows[i] for i in remove_ids])
    merged["updated_at"] = now
    plan = MergePlan(
        version=version,
        now=now,
        node=node_model({**keep_row, **merged}),
        summary={"keep": keep_id, "removed": remove_ids},
        dropped_edges=dropped,
        moved_edges=repo.encode_updates(EDGE_MOVE_COLUMNS, moved),
        kept_node=repo.encode_updates(NODE_UPDATE_COLUMNS, [{**merged, "id": keep_id}]),
        removed_nodes=remove_ids,
    )
    # The ops and their inverse as `OpsPlanner.run_all` records them: a run per kind of op, the last
    # run undone first. The removed nodes take no links with them: every one was re-pointed.
    plan.forward = [
        *({"op": "remove_edge", "id": i} for i in dropped),
        *(
            {"op": "update_edge", "id": new["id"],
             "set": row_to_json({c: new[c] for c in EDGE_MOVE_COLUMNS})}
            for new in moved
        ),
        {"op": "update_node", "id": keep_id, "set": row_to_json(merged)},
        *({"op": "remove_node", "id": i} for i in remove_ids),
    ]  # fmt: skip
    # The inverse holds the rows as read: the merge above reads them and makes new values.
    plan.inverse = [
        *({"op": "add_node", "node": row_to_json(rows[i])} for i in remove_ids),
        {"op": "update_node", "id": keep_id,
         "set": row_to_json({c: keep_row[c] for c in merged})},
        *(
            {"op": "update_edge", "id": new["id"],
             "set": row_to_json({c: touching[new["id"]][c] for c in EDGE_MOVE_COLUMNS})}
            for new in reversed(moved)
        ),
        *({"op": "add_edge", "edge": row_to_json(touching[i])} for i in dropped),
    ]  # fmt: skip
    return plan


def apply_merge(change: Change, plan: MergePlan) -> Node:
    """Write a plan made from the graph at `change.version - 1`, in the write transaction.

    The plan read the rows at the version the transaction found, so each statement touches
    exactly the rows it names; a count that differs means the rows changed without a new
    version, and the merge is planned again (GraphMoved) rather than written over them."""
    repo, project_id = change.repo, change.project_id
    expected = (len(plan.dropped_edges), len(plan.moved_edges), 1, len(plan.removed_nodes))
    done = (
        repo.delete_edges(project_id, plan.dropped_edges),
        repo.bulk_update(project_id, "graph_edges", EDGE_MOVE_COLUMNS, plan.moved_edges),
        repo.bulk_update(project_id, "graph_nodes", NODE_UPDATE_COLUMNS, plan.kept_node),
        repo.delete_nodes(project_id, plan.removed_nodes),
    )
    if done != expected:
        raise GraphMoved(f"the merge expected to change {expected} rows, not {done}")
    change.record(plan.forward, plan.inverse)
    change.summary["merged"] = plan.summary
    return plan.node


def _merge_node_rows(keep: Row, others: list[Row]) -> Row:
    merger = GraphAccumulator()
    seeds = [seed_node(keep)] + [{**seed_node(o), "id": keep["id"]} for o in others]
    merger.add({"nodes": seeds}, result_id=EXISTING)
    merged = node_fields(without_existing_tag(merger.to_graph()["nodes"][0]))
    equivalents = list(merged["data"].get("equivalent_ids") or [])
    for other in others:
        for known in [other["id"], *(other["data"].get("equivalent_ids") or [])]:
            if known not in equivalents and known != keep["id"]:
                equivalents.append(known)
    merged["data"]["equivalent_ids"] = equivalents
    merged.pop("id")
    return merged


def _merge_link_data(kept: Row, others: list[Row]) -> dict[str, Any]:
    merger = GraphAccumulator()
    ends = [{"id": kept["source"]}, {"id": kept["target"]}]
    links = [seed_link(kept, with_id=False)]
    for other in others:
        link = seed_link(other, with_id=False)
        link["source"], link["target"] = kept["source"], kept["target"]
        links.append(link)
    merger.add({"nodes": ends, "links": links}, result_id=EXISTING)
    return link_fields(without_existing_tag(merger.to_graph()["links"][0]))["data"]
