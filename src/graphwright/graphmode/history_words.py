"""Graph Mode history in words for a person: "added node MYC (Gene)", "linked TP53 to MYC
(regulates)", "undid: deleted node CDKN1A (Gene)". Every door (web page, REST, MCP) uses these
words, so none of them shows the change log's internal terms (op names, stash versions, result
ids).

A write records what it touched, by name, in its summary's "about" (see `about`); `describe`
renders a changeset from its summary alone, so the history page needs no ops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from graphwright.core.words import counted
from graphwright.graphmode.schemas import ChangesetSummary, Edge, GraphDiff, Node

NAMED = 3  # items named per kind of change; beyond this, a count
ABOUT = "about"
NODE_OPS = ("add_node", "remove_node", "update_node")
EDGE_OPS = ("add_edge", "remove_edge", "update_edge")
UNSEEN = frozenset({"updated_at", "created_at", "created_version"})

Row = dict[str, Any]


def about(
    forward: list[Row],
    inverse: list[Row],
    nodes_of: Callable[[set[str]], Mapping[str, Row]],
    edges_of: Callable[[set[str]], Mapping[str, Row]],
) -> dict[str, Any]:
    """What a write touched, by name: up to NAMED items of each kind of op, and the links that
    went with deleted nodes. `nodes_of` and `edges_of` read current rows (after the write) by
    id; rows this write removed are read from `inverse`."""
    named = list(_first_of_each(forward))
    gone_nodes = {op["node"]["id"]: op["node"] for op in inverse if op["op"] == "add_node"}
    gone_edges = {op["edge"]["id"]: op["edge"] for op in inverse if op["op"] == "add_edge"}
    wanted_edges = {op["id"] for op in named if op["op"] == "update_edge"}
    known_edges = {**gone_edges, **(edges_of(wanted_edges) if wanted_edges else {})}
    edge_rows = [
        op["edge"] if op["op"] == "add_edge" else known_edges[op["id"]]
        for op in named
        if op["op"] == "add_edge" or (op["op"] in EDGE_OPS and op["id"] in known_edges)
    ]
    known_nodes = dict(gone_nodes)
    for op in forward:
        if op["op"] == "add_node":
            known_nodes.setdefault(op["node"]["id"], op["node"])
    wanted_nodes = {r[end] for r in edge_rows for end in ("source", "target")}
    wanted_nodes |= {op["id"] for op in named if op["op"] == "update_node"}
    wanted_nodes -= known_nodes.keys() - {op["id"] for op in named if op["op"] == "update_node"}
    if wanted_nodes:
        known_nodes.update(nodes_of(wanted_nodes))

    def node(node_id: str) -> Row:
        row = known_nodes.get(node_id, {})
        return {"id": node_id, "label": row.get("label") or node_id, "type": row.get("type")}

    def edge(row: Row) -> Row:
        return {
            "id": row["id"],
            "label": row.get("label"),
            "source": _end(node(row["source"])),
            "target": _end(node(row["target"])),
        }

    found: dict[str, Any] = {}
    for op in named:
        kind = op["op"]
        if kind == "add_node":
            item = node(op["node"]["id"])
        elif kind in ("remove_node", "update_node"):
            item = node(op["id"])
        elif kind == "add_edge":
            item = edge(op["edge"])
        elif kind in ("remove_edge", "update_edge") and op["id"] in known_edges:
            item = edge(known_edges[op["id"]])
        else:
            continue
        if kind.startswith("update_"):
            item["fields"] = sorted(set(op["set"]) - UNSEEN)
        found.setdefault(kind, []).append(item)
    removed_links = sum(1 for op in forward if op["op"] == "remove_edge")
    if gone_nodes and len(gone_edges) > removed_links:
        found["linksWithNodes"] = len(gone_edges) - removed_links
    return found


def describe(entry: ChangesetSummary, target: ChangesetSummary | None = None) -> str:
    """One changeset in words; an undo or redo names the change it undid (`target`)."""
    if entry.kind in ("undo", "redo"):
        verb = "undid" if entry.kind == "undo" else "redid"
        what = describe(target) if target else f"the change of version {entry.target_version}"
        return f"{verb}: {what}"
    return _edit_words(entry.command, entry.summary)


def with_id(label: str | None, node_id: str) -> str:
    """A node by name with its id: "MYC (NCBIGene:4609)"; the id alone when it is the name."""
    return node_id if not label or label == node_id else f"{label} ({node_id})"


def diff_sections(diff: GraphDiff) -> list[tuple[str, list[str]]]:
    """A diff as titled lists of lines, each node by name with its id."""

    def link(e: Edge) -> str:
        label = f" ({e.label})" if e.label else ""
        source = with_id(diff.names.get(e.source), e.source)
        target = with_id(diff.names.get(e.target), e.target)
        return f"{source} → {target}{label}"

    def node(n: Node) -> str:
        return f"{with_id(n.label, n.id)}, {n.type}"

    return [
        ("Nodes added", [node(n) for n in diff.nodes_added]),
        ("Nodes removed", [node(n) for n in diff.nodes_removed]),
        ("Nodes changed", [node(c.after) for c in diff.nodes_changed]),
        ("Links added", [link(e) for e in diff.edges_added]),
        ("Links removed", [link(e) for e in diff.edges_removed]),
        ("Links changed", [link(c.after) for c in diff.edges_changed]),
    ]


def _first_of_each(ops: Iterable[Row]) -> Iterable[Row]:
    seen: dict[str, int] = {}
    for op in ops:
        count = seen.get(op["op"], 0)
        if count < NAMED:
            seen[op["op"]] = count + 1
            yield op


def _end(node: Row) -> Row:
    return {"id": node["id"], "label": node["label"]}


def _edit_words(command: str, summary: Mapping[str, Any]) -> str:
    named: Mapping[str, Any] = summary.get(ABOUT) or {}
    if command == "import":
        return _import_words(summary)
    if command == "clear":
        cleared = summary.get("cleared")
        if not cleared:
            return "cleared the graph"
        counts = f"{counted(cleared['nodes'], 'node')} and {counted(cleared['edges'], 'link')}"
        return f"cleared the graph ({counts})"
    if command == "revert" and "revertedTo" in summary:
        return f"went back to version {summary['revertedTo']}"
    if command == "mergeNodes" and "merged" in summary:
        return _merge_words(summary["merged"], named)
    parts = [_node_part(kind, summary.get(kind, 0), named) for kind in NODE_OPS]
    parts += [_edge_part(kind, summary.get(kind, 0), named) for kind in EDGE_OPS]
    if named.get("linksWithNodes") and parts[1]:
        parts[1] += f" and {counted(named['linksWithNodes'], 'link')} with them"
    said = [p for p in parts if p]
    return ", ".join(said) if said else "no change"


def _import_words(summary: Mapping[str, Any]) -> str:
    nodes, links = summary.get("nodesAdded", 0), summary.get("edgesAdded", 0)
    words = f"imported {counted(nodes, 'node')} and {counted(links, 'link')}"
    merged = [
        counted(summary[key], noun)
        for key, noun in (("nodesMerged", "node"), ("edgesMerged", "link"))
        if summary.get(key)
    ]
    if merged:
        words += f", merged {' and '.join(merged)} into ones already there"
    return words


def _merge_words(merged: Mapping[str, Any], named: Mapping[str, Any]) -> str:
    names = {n["id"]: n for kind in NODE_OPS for n in named.get(kind, [])}

    def name(node_id: str) -> str:
        return _node_name(names.get(node_id, {"id": node_id, "label": node_id}))

    removed = ", ".join(name(i) for i in merged["removed"])
    return f"merged {removed} into {name(merged['keep'])}"


def _node_name(node: Mapping[str, Any]) -> str:
    kind = f" ({node['type']})" if node.get("type") else ""
    return f"{node['label']}{kind}"


def _node_part(kind: str, count: int, named: Mapping[str, Any]) -> str:
    if not count:
        return ""
    items = named.get(kind, [])
    if kind == "update_node" and items and all(i.get("fields") == ["position"] for i in items):
        verb = "moved"
    else:
        verb = {"add_node": "added", "remove_node": "deleted", "update_node": "changed"}[kind]
    if len(items) == count:
        noun = "node" if count == 1 else "nodes"
        return f"{verb} {noun} {', '.join(_node_name(i) for i in items)}"
    return f"{verb} {counted(count, 'node')}"


def _edge_part(kind: str, count: int, named: Mapping[str, Any]) -> str:
    if not count:
        return ""
    items = named.get(kind, [])
    if len(items) != count:
        verb = {"add_edge": "added", "remove_edge": "removed", "update_edge": "changed"}[kind]
        return f"{verb} {counted(count, 'link')}"
    phrases = []
    for item in items:
        label = f" ({item['label']})" if item.get("label") else ""
        ends = f"{item['source']['label']} to {item['target']['label']}{label}"
        phrases.append(
            f"linked {ends}"
            if kind == "add_edge"
            else f"{'removed' if kind == 'remove_edge' else 'changed'} the link {ends}"
        )
    return ", ".join(phrases)
