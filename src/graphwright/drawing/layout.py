"""Where each node is drawn. The browser only renders: positions come from the server's layout
functions (graphmode.analysis), or from the positions saved on the nodes.

Up to the force-layout cap, nodes without saved positions get a force layout, computed once and
kept. Above the cap the view shows the precomputed layout: the saved positions, else a circular
layout, and says so. A node that appears later is placed beside its neighbours, so a live change
does not reshuffle the picture.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphwright.graphmode.analysis import FORCE_LAYOUT_MAX_NODES, layout

Positions = dict[str, tuple[float, float]]
SCALE = 1000.0
NEAR = 40.0


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
        _beside_neighbours(missing, edges, positions)
    note = None
    if large:
        note = (
            f"This graph has {count:,} nodes, above the force-layout cap of "
            f"{FORCE_LAYOUT_MAX_NODES:,}: it is drawn with its precomputed layout."
        )
    return Placement(positions, large, note)


def _beside_neighbours(
    missing: Sequence[Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    positions: Positions,
) -> None:
    wanted = {node["id"] for node in missing}
    neighbours: dict[str, list[str]] = {node_id: [] for node_id in wanted}
    for edge in edges:
        source, target = edge["source"], edge["target"]
        if source in wanted:
            neighbours[source].append(target)
        if target in wanted:
            neighbours[target].append(source)
    xs = [x for x, _ in positions.values()] or [0.0]
    ys = [y for _, y in positions.values()] or [0.0]
    right, middle = max(xs), (min(ys) + max(ys)) / 2
    for index, node in enumerate(missing):
        placed = [positions[n] for n in neighbours[node["id"]] if n in positions]
        angle = index * 2.399963  # golden angle: new nodes around one spot do not overlap
        if placed:
            cx = sum(x for x, _ in placed) / len(placed)
            cy = sum(y for _, y in placed) / len(placed)
        else:
            cx, cy = right + NEAR * 2, middle
        positions[node["id"]] = (
            round(cx + NEAR * math.cos(angle), 2),
            round(cy + NEAR * math.sin(angle), 2),
        )
