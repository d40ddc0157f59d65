"""Graph Mode imports and merges: a whole graph merged into the stored one by the core rules, and
duplicate nodes folded into one."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Sequence
from typing import Any

import orjson

from graphwright.core.formats import read_graph
from graphwright.core.merge import GraphAccumulator
from graphwright.errors import InvalidInput, NotFound
from graphwright.graphmode.change import Change, GraphServiceBase, stamped
from graphwright.graphmode.ops import Op, row_to_json
from graphwright.graphmode.repository import Row
from graphwright.graphmode.rows import (
    EDGE_FIELDS,
    NODE_FIELDS,
    differs,
    link_fields,
    node_fields,
    node_id,
    node_model,
    seed_link,
    seed_node,
)
from graphwright.graphmode.schemas import (
    ImportReport,
    Node,
    Written,
)

EXISTING = "__existing__"  # provenance tag of rows already stored, removed after a merge


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
        nodes by id, links by source, label and target, evidence unioned."""
        # Parsing and merging the import itself happen before the write lock is taken.
        result_id = f"import-{uuid.uuid4().hex[:8]}"
        parsed = _parse_graph(graph, fmt)
        if isinstance(parsed, dict):
            self.limits.seed_graph(parsed)
        incoming = GraphAccumulator()
        incoming.add(parsed, result_id=result_id)

        def build(change: Change) -> ImportReport:
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
        self.limits.id(keep, "keep")
        self.limits.ids(remove, "remove")
        keep_id = node_id(keep)
        remove_ids = list(dict.fromkeys(node_id(r) for r in remove))
        if keep_id in remove_ids:
            raise InvalidInput(f"Node '{keep_id}' cannot be both kept and removed")

        def build(change: Change) -> Node:
            return self._merge_nodes(change, keep_id, remove_ids)

        return self._write(conversation_id, "mergeNodes", actor, expected_version, build)

    def _import(self, change: Change, graph: dict[str, Any], result_id: str) -> ImportReport:
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
            fields = node_fields(seed)
            stored = stored_nodes.get(fields["id"])
            if stored is None:
                new_nodes.append(stamped(fields, change))
            elif differs(stored, fields, NODE_FIELDS):
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
            if differs(stored, fields, EDGE_FIELDS):
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

    def _merge_nodes(self, change: Change, keep_id: str, remove_ids: list[str]) -> Node:
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
        return node_model({**rows[keep_id], **merged})


def _parse_graph(graph: dict[str, Any] | str | bytes, fmt: str) -> dict[str, Any] | str | bytes:
    """Seed graph JSON as it came (the accumulator validates it), other formats converted."""
    if isinstance(graph, dict) or fmt == "json":
        return graph
    return read_graph(graph, fmt)


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
            "nodes": [seed_node(r) for r in stored_nodes.values()],
            "links": [seed_link(r, with_id=False) for r in stored_edges.values()],
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
    seeds = [seed_node(keep)] + [{**seed_node(o), "id": keep["id"]} for o in others]
    merger.add({"nodes": seeds}, result_id=EXISTING)
    merged = node_fields(_without_existing_tag(merger.to_graph()["nodes"][0]))
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
    links = [seed_link(kept, with_id=False), {**seed_link(other, with_id=False)}]
    links[1]["source"], links[1]["target"] = kept["source"], kept["target"]
    merger.add({"nodes": ends, "links": links}, result_id=EXISTING)
    return link_fields(_without_existing_tag(merger.to_graph()["links"][0]))["data"]
