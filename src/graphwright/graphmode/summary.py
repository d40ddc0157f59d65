"""The state of a graph told within a token budget, so a model never receives a whole large graph.

A summary holds the counts, the node types and edge labels, the best-connected nodes and one page
of nodes and edges, with an opaque cursor for the next page. Its size is estimated at four
characters a token, and the estimate covers the text and the structured copy together, because
clients may put both in the model's context.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from graphwright.errors import InvalidInput
from graphwright.graphmode.analysis import edge_degrees

DEFAULT_TOKEN_BUDGET = 4_000
MIN_TOKEN_BUDGET = 1_000
MAX_TOKEN_BUDGET = 20_000
CHARS_PER_TOKEN = 4
HEADER_SHARE = 0.5  # the overview never takes more than half the budget
TEXT_LIMIT = 80  # longest label or type shown

Node = Mapping[str, Any]
Edge = Mapping[str, Any]


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Cursor:
    node_offset: int
    edge_offset: int
    version: int | None

    def encode(self) -> str:
        raw = json.dumps([self.node_offset, self.edge_offset, self.version]).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            node_offset, edge_offset, version = json.loads(raw)
            if node_offset < 0 or edge_offset < 0:
                raise ValueError
            return cls(int(node_offset), int(edge_offset), version)
        except (ValueError, TypeError, binascii.Error, json.JSONDecodeError):
            raise InvalidInput(
                f"Cursor '{token}' is not one that getGraphState returned; omit it to start over"
            ) from None


@dataclass(frozen=True)
class Summary:
    text: str
    data: dict[str, Any]

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text) + estimate_tokens(_json(self.data))


def summarize(
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    *,
    version: int | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    cursor: str | None = None,
    top: int = 10,
    type_limit: int = 15,
) -> Summary:
    """The overview (first page only) and as many nodes, then edges, as the budget allows."""
    if not MIN_TOKEN_BUDGET <= token_budget <= MAX_TOKEN_BUDGET:
        raise InvalidInput(
            f"tokenBudget must be between {MIN_TOKEN_BUDGET} and {MAX_TOKEN_BUDGET}, "
            f"not {token_budget}"
        )
    position = Cursor.decode(cursor) if cursor else Cursor(0, 0, version)
    overview = (
        _overview(nodes, edges, version, token_budget, top=top, type_limit=type_limit)
        if cursor is None
        else _counts(nodes, edges, version)
    )
    if position.version != version:
        overview["note"] = (
            f"The graph changed since this cursor was issued (version {position.version} -> "
            f"{version}); items may have moved between pages."
        )
    return _fill_page(nodes, edges, overview, position, token_budget)


def _counts(nodes: Sequence[Node], edges: Sequence[Edge], version: int | None) -> dict[str, Any]:
    return {"nodeCount": len(nodes), "edgeCount": len(edges), "version": version}


def _overview(
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    version: int | None,
    budget: int,
    *,
    top: int,
    type_limit: int,
) -> dict[str, Any]:
    """Counts, types, edge labels and top nodes, shortened until they fit HEADER_SHARE."""
    node_types = Counter(_short(node.get("type") or "other") for node in nodes).most_common()
    edge_labels = Counter(_short(edge.get("label") or "(none)") for edge in edges).most_common()
    degree = edge_degrees(nodes, edges)
    by_id = {node["id"]: node for node in nodes}
    best = [by_id[node_id] | {"degree": d} for node_id, d in degree.most_common(top) if d > 0]
    while True:
        overview = _counts(nodes, edges, version) | {
            "nodeTypes": dict(node_types[:type_limit]),
            "edgeLabels": dict(edge_labels[:type_limit]),
            "topNodes": [_node_item(node) | {"degree": node["degree"]} for node in best[:top]],
        }
        cost = estimate_tokens(_json(overview)) + estimate_tokens(
            "\n".join(_overview_lines(overview))
        )
        if cost <= budget * HEADER_SHARE or (top == 0 and type_limit == 0):
            return overview
        top, type_limit = max(0, top - 2), max(0, type_limit - 3)


def _fill_page(
    nodes: Sequence[Node],
    edges: Sequence[Edge],
    overview: dict[str, Any],
    position: Cursor,
    budget: int,
) -> Summary:
    # Reserve room for the section headings, the "more" line with its cursor and JSON keys.
    used = estimate_tokens(_json(overview)) + len(_overview_lines(overview)) + 60
    used += estimate_tokens("\n".join(_overview_lines(overview)))
    edges_left = position.edge_offset < len(edges)
    node_limit = used + (budget - used) // 2 if edges_left else budget
    node_page, node_end, used = _take(nodes, position.node_offset, _NODES, used, node_limit)
    names = {node["id"]: _short(node.get("label") or node["id"]) for node in nodes}
    edge_kind = _Kind(_edge_item, partial(_edge_line, names=names))
    edge_page, edge_end, used = _take(edges, position.edge_offset, edge_kind, used, budget)
    if edge_end >= len(edges) and node_end < len(nodes):  # edges left room: give it to nodes
        more_nodes, node_end, used = _take(nodes, node_end, _NODES, used, budget)
        node_page += more_nodes
    complete = node_end >= len(nodes) and edge_end >= len(edges)
    next_cursor = None if complete else Cursor(node_end, edge_end, overview["version"]).encode()
    data = overview | {
        "nodes": node_page,
        "edges": edge_page,
        "nodeRange": [position.node_offset, node_end],
        "edgeRange": [position.edge_offset, edge_end],
        "nextCursor": next_cursor,
    }
    return Summary(_render(data, edge_kind.line), data)


@dataclass(frozen=True)
class _Kind:
    item: Callable[[Mapping[str, Any]], dict[str, Any]]
    line: Callable[[Mapping[str, Any]], str]


def _take(
    items: Sequence[Mapping[str, Any]], start: int, kind: _Kind, used: int, limit: int
) -> tuple[list[dict[str, Any]], int, int]:
    """Items from `start` while the running token count stays within `limit`."""
    page: list[dict[str, Any]] = []
    index = start
    while index < len(items):
        item = kind.item(items[index])
        cost = estimate_tokens(_json(item)) + estimate_tokens(kind.line(item)) + 1
        if used + cost > limit:
            break
        page.append(item)
        used += cost
        index += 1
    return page, index, used


def _node_item(node: Node) -> dict[str, Any]:
    node_type = node.get("type")
    return {
        "id": node["id"],
        "label": _short(node.get("label") or ""),
        "type": _short(node_type) if node_type else None,
    }


def _edge_item(edge: Edge) -> dict[str, Any]:
    item = {"id": edge["id"], "source": edge["source"], "target": edge["target"]}
    if edge.get("label"):
        item["label"] = _short(edge["label"])
    return item


def _node_line(item: Mapping[str, Any]) -> str:
    return f"- {item['label'] or item['id']} [{item['id']}] ({item['type'] or 'other'})"


def _edge_line(item: Mapping[str, Any], *, names: Mapping[str, str]) -> str:
    label = f" ({item['label']})" if item.get("label") else ""
    source = names.get(item["source"], item["source"])
    target = names.get(item["target"], item["target"])
    return f"- {source} -> {target}{label} [{item['id']}]"


def _overview_lines(overview: Mapping[str, Any]) -> list[str]:
    version = f" (version {overview['version']})" if overview.get("version") is not None else ""
    lines = [
        f"Current graph has {_count(overview['nodeCount'], 'node')} and "
        f"{_count(overview['edgeCount'], 'edge')}{version}."
    ]
    if overview.get("note"):
        lines.append(overview["note"])
    if overview.get("nodeTypes"):
        lines.append("Node types: " + _tally(overview["nodeTypes"]))
    if overview.get("edgeLabels"):
        lines.append("Edge labels: " + _tally(overview["edgeLabels"]))
    if overview.get("topNodes"):
        lines.append(
            "Most connected: "
            + ", ".join(f"{n['label'] or n['id']} ({n['degree']})" for n in overview["topNodes"])
        )
    return lines


def _render(data: Mapping[str, Any], edge_line: Callable[[Mapping[str, Any]], str]) -> str:
    lines = _overview_lines(data)
    if data["nodes"]:
        first, end = data["nodeRange"]
        lines += ["", f"Nodes {first + 1}-{end} of {data['nodeCount']}:"]
        lines += [_node_line(item) for item in data["nodes"]]
    if data["edges"]:
        first, end = data["edgeRange"]
        lines += ["", f"Edges {first + 1}-{end} of {data['edgeCount']}:"]
        lines += [edge_line(item) for item in data["edges"]]
    if data["nextCursor"]:
        lines += ["", f'More: call getGraphState with cursor "{data["nextCursor"]}".']
    return "\n".join(lines)


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _tally(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())


_NODES = _Kind(_node_item, _node_line)


def _short(text: Any) -> str:
    text = str(text)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
