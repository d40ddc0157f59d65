"""A graph drawn: its nodes, edges, positions and the ECharts option built from them.

Built on the server, once per graph version and view settings, and rendered as it is by the web
UI's graph view (`web.graph_view`) and by the MCP Apps graph views (`mcp_apps.payloads`).
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson

from graphwright.core.biolink import type_name
from graphwright.drawing.layout import Placement
from graphwright.drawing.options import (
    DENSE_EDGES_FROM,
    chart_options,
    dense_options,
    drawn_edges,
    node_type,
)
from graphwright.drawing.patch import option_patch

Item = Mapping[str, Any]


@dataclass(frozen=True)
class Drawing:
    nodes: list[Item]
    edges: list[Item]  # every edge of the graph
    placement: Placement
    options: dict[str, Any]
    link_ids: list[str]  # the edge id of each link in `options`, in order
    version: int | None = None
    # Dense drawings: the node ids of each series (after the edges' series), in data order.
    series_node_ids: list[list[str]] | None = None

    @cached_property
    def option_json(self) -> str:
        """The option as JSON, made once however many tabs show this drawing."""
        return orjson.dumps(self.options).decode()

    def patch_from(self, old: Drawing) -> str | None:
        """The patch (JSON) that turns `old` into this drawing, or None when only a whole
        drawing will do. Every tab on a live graph moves between the same shared drawings, so
        the patch from the last `old` is kept: the first tab works it out, the rest reuse it."""
        kept = self.__dict__.get("_patch")
        if kept is not None and kept[0]() is old:
            return kept[1]
        patch = option_patch(old.options, self.options)
        made = None if patch is None else orjson.dumps(patch).decode()
        self.__dict__["_patch"] = (weakref.ref(old), made)  # no chain of past drawings kept
        return made


def drawing(
    nodes: Sequence[Item],
    edges: Sequence[Item],
    placement: Placement,
    *,
    version: int | None = None,
    highlight: Collection[str] = (),
    hidden_types: Collection[str] = (),
) -> Drawing:
    """What the view sends to the browser, built once per graph version and view settings."""
    hidden = {type_name(kind) for kind in hidden_types}
    shown = [n for n in nodes if node_type(n) not in hidden] if hidden else list(nodes)
    links = drawn_edges(shown, edges)
    if len(links) >= DENSE_EDGES_FROM:
        options, series_ids = dense_options(shown, links, placement.positions, highlight=highlight)
        return Drawing(list(nodes), list(edges), placement, options, [], version, series_ids)
    options = chart_options(
        shown, links, placement.positions, highlight=highlight, large=placement.precomputed
    )
    return Drawing(
        list(nodes),
        list(edges),
        placement,
        options,
        [str(edge.get("id", "")) for edge in links],
        version,
    )
