"""The ECharts option of a knowledge graph: a `graph` series with fixed (server-side) positions,
one category per node type with its colour and legend entry, labels that never overlap (the
rest on hover), arrows on edges, and each edge's predicate on hover (and on the canvas while the
graph is small).

Types are named by their Biolink class (`biolink:Gene` and `gene` are both `Gene`) and coloured by
`core.palette.type_colour`, so a type has the same colour in every view, page and export."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from graphwright.core.biolink import type_name
from graphwright.core.palette import type_colour

LABELS_UP_TO = 300  # nodes; a bigger graph shows labels on hover only
EDGE_LABELS_UP_TO = 40  # edges; a bigger graph shows an edge's predicate on hover only
LABEL_LINE = 14  # px: the line of an 11 px label, the box ECharts keeps labels apart by
LABEL_PADDING = 2  # px left and right of a label's text: two labels never touch
LABELLED_EDGES_UP_TO = 3000
OTHER = "Other"


def node_type(node: Mapping[str, Any]) -> str:
    value = node.get("type") or node.get("category") or node.get("entityType")
    if isinstance(value, list):
        value = value[0] if value else None
    return (type_name(str(value)) or OTHER) if value else OTHER


def node_name(node: Mapping[str, Any]) -> str:
    return str(node.get("label") or node.get("name") or node["id"])


def symbol_size(degree: int, *, large: bool = False) -> float:
    return 4 if large else min(40.0, 10 + 3 * math.sqrt(degree))


def categories(nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Node types, most common first (the legend's order)."""
    counts = Counter(node_type(node) for node in nodes)
    return sorted(counts, key=lambda name: (-counts[name], name))


def drawn_edges(
    nodes: Sequence[Mapping[str, Any]], edges: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The edges a drawing shows, in the order of its links: those whose ends are both shown."""
    shown = {node["id"] for node in nodes}
    return [edge for edge in edges if edge["source"] in shown and edge["target"] in shown]


def chart_options(
    nodes: Sequence[Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    positions: Mapping[str, tuple[float, float]],
    *,
    highlight: Collection[str] = (),
    large: bool = False,
) -> dict[str, Any]:
    kinds = categories(nodes)
    category_of = {name: index for index, name in enumerate(kinds)}
    index_of = {node["id"]: index for index, node in enumerate(nodes)}
    degree: Counter[str] = Counter()
    for edge in edges:
        degree[edge["source"]] += 1
        degree[edge["target"]] += 1
    wanted = set(highlight)
    data = []
    for node in nodes:
        x, y = positions[node["id"]]
        size = symbol_size(degree[node["id"]], large=large)
        item: dict[str, Any] = {
            "id": node["id"],
            "name": node_name(node),
            "x": x,
            "y": y,
            "category": category_of[node_type(node)],
            "symbolSize": round(size, 1),
        }
        if not large:
            # The hover card: name, type and id ("TP53 · Gene · NCBIGene:7157").
            item["tooltip"] = {"formatter": f"{item['name']} · {node_type(node)} · {node['id']}"}
        if node["id"] in wanted:
            item["symbolSize"] = round(size * 1.8 + 4, 1)
            item["itemStyle"] = {"borderColor": "#111", "borderWidth": 3}
            item["label"] = {"show": True, "fontWeight": "bold"}
        data.append(item)
    # Links stay small (a large graph sends tens of thousands): ends by index, and the label
    # (shown on hover) only while the graph is small enough to label.
    labelled = len(edges) <= LABELLED_EDGES_UP_TO
    links = []
    for edge in edges:
        if edge["source"] in index_of and edge["target"] in index_of:
            link: dict[str, Any] = {
                "source": index_of[edge["source"]],
                "target": index_of[edge["target"]],
            }
            if labelled:
                link["value"] = str(edge.get("label") or edge.get("type") or "")
            links.append(link)
    return {
        "animation": False,  # positions come from the server: nothing to animate
        "tooltip": {"show": not large, "confine": True},
        "legend": [
            {
                "type": "scroll",
                "data": kinds,
                "top": 0,
                "textStyle": {"color": "#1f2937"},
            }
        ],
        "series": [
            {
                "type": "graph",
                "layout": "none",
                "roam": True,
                "draggable": not large,
                "categories": [
                    {"name": name, "itemStyle": {"color": type_colour(name)}} for name in kinds
                ],
                "data": data,
                "links": links,
                "top": 40,
                "label": {
                    "show": len(nodes) <= LABELS_UP_TO,
                    "position": "right",
                    "color": "#111827",
                    "fontSize": 11,
                    # Set, so ECharts measures a label's box the same with any font installed
                    # (without it, a font lacking CJK glyphs makes the box 4 px tall).
                    "lineHeight": LABEL_LINE,
                    "padding": [0, LABEL_PADDING],
                    # A label is not a target: a pointer on a node's symbol picks that node,
                    # even where a neighbour's label reaches over it.
                    "silent": True,
                },
                # Labels that would overlap others are hidden (shown on hover), those of the
                # biggest nodes kept, so labels never run together ("MYCEGFRKRAS"); new nodes
                # are placed where theirs fit (drawing.free_space). A graph small enough to
                # draw its predicates keeps them all: ECharts would hide them first (and with
                # any labelLayout at all it draws edge labels askew).
                **(
                    {"labelLayout": {"hideOverlap": True}} if len(edges) > EDGE_LABELS_UP_TO else {}
                ),
                "edgeLabel": {
                    "show": len(edges) <= EDGE_LABELS_UP_TO,
                    "formatter": "{c}",
                    "fontSize": 10,
                    "color": "#374151",
                    "silent": True,  # as node labels: the pointer picks what lies under it
                },
                "emphasis": {
                    "focus": "adjacency" if labelled else "self",
                    "label": {"show": True},
                    "edgeLabel": {"show": labelled},
                },
                # Arrows, curves and colours per edge cost the browser most: a dense graph
                # gets straight, plain, thin lines.
                "edgeSymbol": ["none", "arrow"] if labelled else ["none", "none"],
                "edgeSymbolSize": 5,
                "lineStyle": {
                    "color": "source" if labelled else "#94a3b8",
                    "opacity": 0.6 if labelled else 0.35,
                    "width": 1.2 if labelled else 0.6,
                    "curveness": 0.08 if labelled else 0,
                },
                "scaleLimit": {"min": 0.05, "max": 20},
            }
        ],
    }


DENSE_EDGES_FROM = 5000  # edges; from here on the view draws with ECharts' "large" series


def dense_options(
    nodes: Sequence[Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    positions: Mapping[str, tuple[float, float]],
    *,
    highlight: Collection[str] = (),
) -> tuple[dict[str, Any], list[list[str]]]:
    """A dense graph as one scatter series per node type and one lines series for the edges,
    all in ECharts' "large" mode (each drawn as one path, so tens of thousands stay quick to
    draw), on hidden axes with wheel zoom and drag to pan. Also returns the node ids of each
    scatter series, in data order, to tell which node was clicked."""
    kinds = categories(nodes)
    by_kind: dict[str, list[Mapping[str, Any]]] = {kind: [] for kind in kinds}
    for node in nodes:
        by_kind[node_type(node)].append(node)
    wanted = set(highlight)
    series: list[dict[str, Any]] = [
        {
            "type": "lines",
            "coordinateSystem": "cartesian2d",
            "large": True,
            "silent": True,
            "lineStyle": {"color": "#94a3b8", "opacity": 0.3, "width": 0.5},
            "data": [
                {"coords": [positions[e["source"]], positions[e["target"]]]}
                for e in edges
                if e["source"] in positions and e["target"] in positions
            ],
            "z": 1,
        }
    ]
    ids: list[list[str]] = []
    for kind in kinds:
        members = by_kind[kind]
        ids.append([str(node["id"]) for node in members])
        series.append(
            {
                "type": "scatter",
                "name": kind,
                "large": True,
                "symbolSize": 4,
                "itemStyle": {"color": type_colour(kind)},
                "data": [list(positions[node["id"]]) for node in members],
                "z": 2,
            }
        )
    marked = [n for n in nodes if n["id"] in wanted]
    if marked:
        series.append(
            {
                "type": "scatter",
                "name": "highlighted",
                "symbolSize": 12,
                "itemStyle": {"color": "#111", "borderColor": "#fde047", "borderWidth": 2},
                "label": {"show": True, "position": "right", "formatter": "{b}"},
                "data": [
                    {"name": str(n.get("label") or n["id"]), "value": list(positions[n["id"]])}
                    for n in marked
                ],
                "z": 3,
            }
        )
        ids.append([str(n["id"]) for n in marked])
    axis = {"show": False, "scale": True}
    return (
        {
            "animation": False,
            "legend": [{"type": "scroll", "data": kinds, "top": 0}],
            "grid": {"left": 8, "right": 8, "top": 36, "bottom": 8},
            "xAxis": axis,
            "yAxis": {**axis, "inverse": True},  # screen y grows downwards, as in graph series
            "dataZoom": [
                {"type": "inside", "xAxisIndex": 0, "filterMode": "none"},
                {"type": "inside", "yAxisIndex": 0, "filterMode": "none"},
            ],
            "series": series,
        },
        ids,
    )
