"""The state of a graph told within a token budget, so a model never receives a whole large graph.

A summary holds the counts, the node types and edge labels, the best-connected nodes (when known)
and one page of nodes and edges, with an opaque cursor for the next page. Its size is estimated at
four characters a token, and the estimate covers the text and the structured copy together,
because clients may put both in the model's context.

Pages walk the nodes in id order, each node followed by the edges it is the source of (the order
of `GraphService.state`), so a page needs only a window of nodes and their edges, never the whole
graph, and every node and edge appears on exactly one page. A cursor is a position in that walk:
the index of a node and how much of it (the node line, then its edges) was already shown.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphwright.core.words import counted
from graphwright.errors import InvalidInput
from graphwright.graphmode.analysis import edge_degrees

DEFAULT_TOKEN_BUDGET = 4_000
MIN_TOKEN_BUDGET = 1_000
MAX_TOKEN_BUDGET = 20_000
CHARS_PER_TOKEN = 4
HEADER_SHARE = 0.5  # the overview never takes more than half the budget
TEXT_LIMIT = 80  # longest label or type shown
MIN_NODE_TOKENS = 12  # the cheapest node line plus its JSON; bounds the nodes a page can show
RESERVED_TOKENS = 80  # section headings, the "more" line with its cursor, JSON keys

UNRANKED = (
    "The most connected nodes are not listed for a graph this large; findCentrality with "
    "measure=degree ranks them."
)

Node = Mapping[str, Any]
Edge = Mapping[str, Any]


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Cursor:
    """Node `node_index` is next; `shown` of it is done: 0 nothing, 1 its line, 1 + k its line
    and its first k edges."""

    node_index: int
    shown: int
    version: int | None

    def encode(self) -> str:
        raw = json.dumps([self.node_index, self.shown, self.version]).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            node_index, shown, version = json.loads(raw)
            if int(node_index) < 0 or int(shown) < 0:
                raise ValueError
            return cls(int(node_index), int(shown), version)
        except (ValueError, TypeError, binascii.Error, json.JSONDecodeError):
            raise InvalidInput(
                f"Cursor '{token}' is not one that getGraphState returned; omit it to start over"
            ) from None


def start(cursor: str | None) -> Cursor:
    """Where a page begins: the decoded cursor, or the first node."""
    return Cursor.decode(cursor) if cursor else Cursor(0, 0, None)


def window_size(token_budget: int) -> int:
    """How many nodes (from the cursor's node on) to fetch: more than a page can ever show."""
    return token_budget // MIN_NODE_TOKENS + 1


@dataclass(frozen=True)
class Overview:
    node_count: int
    edge_count: int
    version: int | None
    node_types: Mapping[str, int] = field(default_factory=dict)
    edge_labels: Mapping[str, int] = field(default_factory=dict)
    top_nodes: Sequence[Mapping[str, Any]] | None = None  # {id, label, type, degree}, best first


@dataclass(frozen=True)
class Summary:
    text: str
    data: dict[str, Any]

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text) + estimate_tokens(_json(self.data))


def top_by_degree(nodes: Sequence[Node], edges: Sequence[Edge], count: int) -> list[dict]:
    """The `count` nodes with the most edges, for graphs small enough to read whole."""
    by_id = {node["id"]: node for node in nodes}
    degree = edge_degrees(nodes, edges)
    return [
        _node_item(by_id[node_id]) | {"degree": d}
        for node_id, d in degree.most_common(count)
        if d > 0
    ]


def summarize(
    overview: Overview,
    window: Sequence[Node],
    window_edges: Sequence[Edge],
    *,
    cursor: str | None = None,
    more_after_window: bool = False,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    top: int = 10,
    type_limit: int = 15,
) -> Summary:
    """One page: the overview (on the first page only) and the walk from the cursor on.

    `window` holds the nodes from the cursor's node on, in id order (at least
    `window_size(token_budget)` of them unless the graph ends sooner, in which case
    `more_after_window` is False); `window_edges` are the edges whose source is in the window.
    """
    if not MIN_TOKEN_BUDGET <= token_budget <= MAX_TOKEN_BUDGET:
        raise InvalidInput(
            f"tokenBudget must be between {MIN_TOKEN_BUDGET} and {MAX_TOKEN_BUDGET}, "
            f"not {token_budget}"
        )
    position = start(cursor)
    header = _counts(overview)
    if cursor is None:
        header = _overview(overview, token_budget, top=top, type_limit=type_limit)
    elif position.version != overview.version:
        header["note"] = (
            f"The graph changed since this cursor was issued (version {position.version} -> "
            f"{overview.version}); items may have moved between pages."
        )
    return _page(header, window, window_edges, position, more_after_window, token_budget)


def _counts(overview: Overview) -> dict[str, Any]:
    return {
        "nodeCount": overview.node_count,
        "edgeCount": overview.edge_count,
        "version": overview.version,
    }


def _overview(overview: Overview, budget: int, *, top: int, type_limit: int) -> dict[str, Any]:
    """Counts, types, edge labels and top nodes, shortened until they fit HEADER_SHARE."""
    node_types = sorted(overview.node_types.items(), key=lambda item: (-item[1], item[0]))
    edge_labels = sorted(overview.edge_labels.items(), key=lambda item: (-item[1], item[0]))
    while True:
        header = _counts(overview) | {
            "nodeTypes": {_short(k or "other"): n for k, n in node_types[:type_limit]},
            "edgeLabels": {_short(k or "(none)"): n for k, n in edge_labels[:type_limit]},
        }
        if overview.top_nodes is not None:
            header["topNodes"] = [
                _node_item(node) | {"degree": node["degree"]} for node in overview.top_nodes[:top]
            ]
        elif overview.node_count:
            header["note"] = UNRANKED
        if _header_cost(header) <= budget * HEADER_SHARE or (top == 0 and type_limit == 0):
            return header
        top, type_limit = max(0, top - 2), max(0, type_limit - 3)


def _header_cost(header: Mapping[str, Any]) -> int:
    return estimate_tokens(_json(header)) + estimate_tokens("\n".join(_header_lines(header)))


def _page(
    header: dict[str, Any],
    window: Sequence[Node],
    window_edges: Sequence[Edge],
    position: Cursor,
    more_after_window: bool,
    budget: int,
) -> Summary:
    names = {node["id"]: _short(node.get("label") or node["id"]) for node in window}
    outgoing: dict[str, list[Edge]] = {}
    for edge in window_edges:
        outgoing.setdefault(edge["source"], []).append(edge)

    used = _header_cost(header) + RESERVED_TOKENS
    node_items: list[dict[str, Any]] = []
    edge_items: list[dict[str, Any]] = []
    index, shown = 0, position.shown
    stopped = False
    while index < len(window) and not stopped:
        node = window[index]
        if shown == 0:
            item = _node_item(node)
            cost = estimate_tokens(_json(item)) + estimate_tokens(_node_line(item)) + 1
            if used + cost > budget:
                break
            node_items.append(item)
            used, shown = used + cost, 1
        for edge in outgoing.get(node["id"], [])[shown - 1 :]:
            item = _edge_item(edge)
            cost = estimate_tokens(_json(item)) + estimate_tokens(_edge_line(item, names)) + 1
            if used + cost > budget:
                stopped = True
                break
            edge_items.append(item)
            used, shown = used + cost, shown + 1
        if not stopped:
            index, shown = index + 1, 0

    complete = index >= len(window) and not more_after_window
    next_cursor = (
        None if complete else Cursor(position.node_index + index, shown, header["version"]).encode()
    )
    data = header | {"nodes": node_items, "edges": edge_items, "nextCursor": next_cursor}
    return Summary(_render(data, names), data)


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


def _edge_line(item: Mapping[str, Any], names: Mapping[str, str]) -> str:
    label = f" ({item['label']})" if item.get("label") else ""
    source = names.get(item["source"], item["source"])
    target = names.get(item["target"], item["target"])
    return f"- {source} -> {target}{label} [{item['id']}]"


def _header_lines(header: Mapping[str, Any]) -> list[str]:
    version = f" (version {header['version']})" if header.get("version") is not None else ""
    lines = [
        f"Current graph has {counted(header['nodeCount'], 'node')} and "
        f"{counted(header['edgeCount'], 'edge')}{version}."
    ]
    if header.get("note"):
        lines.append(header["note"])
    if header.get("nodeTypes"):
        lines.append("Node types: " + _tally(header["nodeTypes"]))
    if header.get("edgeLabels"):
        lines.append("Edge labels: " + _tally(header["edgeLabels"]))
    if header.get("topNodes"):
        lines.append(
            "Most connected: "
            + ", ".join(f"{n['label'] or n['id']} ({n['degree']})" for n in header["topNodes"])
        )
    return lines


def _render(data: Mapping[str, Any], names: Mapping[str, str]) -> str:
    lines = _header_lines(data)
    if data["nodes"]:
        lines += ["", "Nodes:", *(_node_line(item) for item in data["nodes"])]
    if data["edges"]:
        lines += ["", "Edges:", *(_edge_line(item, names) for item in data["edges"])]
    if data["nextCursor"]:
        lines += ["", f'More: call getGraphState with cursor "{data["nextCursor"]}".']
    return "\n".join(lines)


def _tally(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())


def _short(text: Any) -> str:
    text = str(text)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
