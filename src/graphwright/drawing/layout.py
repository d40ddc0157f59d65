"""Where each node is drawn. The browser only renders: positions come from the server's layout
functions (graphmode.analysis), or from the positions saved on the nodes.

Up to the force-layout cap, nodes without saved positions get a force layout, computed once and
kept. Above the cap the view shows the precomputed layout: the saved positions, else a circular
layout, and says so. A node that appears later goes to free space near its neighbours (in the
middle of the graph when it has none) where its label overlaps no other (`free_space`), and the
nodes already drawn stay where they are, so a live change does not reshuffle the picture.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphwright.drawing.free_space import Box, FreeSpace, node_box
from graphwright.drawing.options import LABELS_UP_TO, node_name, symbol_size
from graphwright.graphmode.analysis import FORCE_LAYOUT_MAX_NODES, layout

Positions = dict[str, tuple[float, float]]
SCALE = 1000.0


@dataclass(frozen=True, slots=True)
class Placement:
    positions: Positions
    precomputed: bool  # above the force-layout cap
    note: str | None


def place(
    nodes: Sequence[Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    known: Mapping[str, tuple[float, float]] | None = None,
) -> Placement:
    """Positions for every node: saved ones first, then `known` (computed earlier), then new."""
    count = len(nodes)
    large = count > FORCE_LAYOUT_MAX_NODES
    positions: Positions = {}
    for node in nodes:
        saved = node.get("position")
        if isinstance(saved, Mapping) and "x" in saved and "y" in saved:
            positions[node["id"]] = (float(saved["x"]), float(saved["y"]))
        elif known and node["id"] in known:
            positions[node["id"]] = known[node["id"]]
    missing = [node for node in nodes if node["id"] not in positions]
    if missing and len(missing) * 2 > count:
        kind = "circular" if large else "force"
        computed = layout(nodes, edges, kind=kind, scale=SCALE)
        for node in missing:
            xy = computed[node["id"]]
            positions[node["id"]] = (xy["x"], xy["y"])
    elif missing:
        _in_free_space(nodes, missing, edges, positions)
    note = None
    if large:
        note = (
            f"This graph has {count:,} nodes, above the force-layout cap of "
            f"{FORCE_LAYOUT_MAX_NODES:,}: it is drawn with its precomputed layout."
        )
    return Placement(positions, large, note)


def _in_free_space(
    nodes: Sequence[Mapping[str, Any]],
    missing: Sequence[Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    positions: Positions,
) -> None:
    """Each missing node in the free spot nearest its placed neighbours (the middle of the graph
    when it has none), clear of every other node's symbol and label (see `free_space`)."""
    large = len(nodes) > FORCE_LAYOUT_MAX_NODES
    labelled = not large and len(nodes) <= LABELS_UP_TO
    wanted = {node["id"] for node in missing}
    neighbours: dict[str, list[str]] = {node_id: [] for node_id in wanted}
    degree: Counter[str] = Counter()  # symbol sizes; a large graph draws every symbol alike
    for edge in edges:
        source, target = edge["source"], edge["target"]
        if not large:
            degree[source] += 1
            degree[target] += 1
        if source in wanted:
            neighbours[source].append(target)
        if target in wanted:
            neighbours[target].append(source)

    def box(node: Mapping[str, Any]) -> Box:
        size = symbol_size(degree[node["id"]], large=large)
        return node_box(node_name(node) if labelled else "", size, labelled=labelled)

    space = FreeSpace(positions, {n["id"]: box(n) for n in nodes if n["id"] in positions})
    for node in missing:
        placed = [positions[n] for n in neighbours[node["id"]] if n in positions]
        near = space.middle
        if placed:
            near = (sum(x for x, _ in placed) / len(placed),
                    sum(y for _, y in placed) / len(placed))  # fmt: skip
        positions[node["id"]] = space.add(node["id"], box(node), near)
