"""The graph view: one knowledge graph drawn with ECharts' `graph` series (bundled with NiceGUI).

It is the one reusable component for graphs: artifacts, the Graph Mode editor, and (later) the
MCP Apps view use it. It draws a `Drawing` (nodes, edges, server-side positions and the ECharts
option built from them): zoom, pan, drag, colours by type with a legend (click a type to hide
it), labels on hover, and a callback when a node or an edge is clicked. Its root element carries
`data-version` (the graph version shown) and, once ECharts has finished drawing it,
`data-drawn-version`, for tests and benchmarks.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson
from nicegui import events, ui

from graphwright.web.graph_layout import Placement
from graphwright.web.graph_options import (
    DENSE_EDGES_FROM,
    chart_options,
    dense_options,
    drawn_edges,
    node_type,
)

Item = Mapping[str, Any]
Pick = Callable[[str], Any]


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
    hidden = set(hidden_types)
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


class GraphView:
    def __init__(
        self,
        *,
        on_node: Pick | None = None,
        on_edge: Pick | None = None,
        height: str = "65vh",
    ) -> None:
        self.on_node = on_node
        self.on_edge = on_edge
        self.shown: Drawing | None = None
        with ui.column().classes("w-full gap-1") as self.root:
            self.note = (
                ui.label()
                .classes("text-sm bg-sky-100 text-sky-950 px-2 py-1 rounded")
                .mark("graph-note")
                .props('data-testid="graph-note"')
            )
            self.note.set_visibility(False)
            self.chart = (
                ui.echart({"series": []}, on_point_click=self._clicked)
                .classes("w-full border rounded")
                .style(f"height: {height}; min-height: 320px")
                .props('role="img" aria-label="Knowledge graph; click a node for its details"')
                .mark("graph-chart")
                .props('data-testid="graph-chart"')
            )
        self.chart.on(
            "chart:finished",
            js_handler=(
                f"() => {{ const el = getHtmlElement({self.chart.id}); "
                "if (el) el.dataset.drawnVersion = el.dataset.version || ''; }"
            ),
        )

    def draw(self, shown: Drawing) -> None:
        """Send the drawing to the browser and draw it there in one go.

        The option goes to ECharts as a plain object, not through the element's reactive
        `options` property: Vue would wrap tens of thousands of nodes and links in proxies,
        which costs the browser more than drawing them.
        """
        self.shown = shown
        note = shown.placement.note
        self.note.text = note or ""
        self.note.set_visibility(bool(note))
        version = orjson.dumps("" if shown.version is None else str(shown.version)).decode()
        self.chart.client.run_javascript(
            "(() => {"
            f"const option = {shown.option_json};"
            f"const draw = () => {{ const c = getElement({self.chart.id});"
            "if (!c || !c.chart) { setTimeout(draw, 20); return; }"
            f"getHtmlElement({self.chart.id}).dataset.version = {version};"
            "c.chart.setOption(option, {notMerge: true}); };"
            "draw(); })()"
        )

    def show(
        self,
        nodes: Sequence[Item],
        edges: Sequence[Item],
        placement: Placement,
        *,
        version: int | None = None,
        highlight: Collection[str] = (),
        hidden_types: Collection[str] = (),
    ) -> None:
        self.draw(
            drawing(
                nodes,
                edges,
                placement,
                version=version,
                highlight=highlight,
                hidden_types=hidden_types,
            )
        )

    async def _clicked(self, event: events.EChartPointClickEventArguments) -> None:
        if self.shown is None:
            return
        if self.shown.series_node_ids is not None:
            members = self.shown.series_node_ids
            index = event.series_index - 1  # series 0 holds the edges
            found = members[index] if 0 <= index < len(members) else []
            item_id = found[event.data_index] if 0 <= event.data_index < len(found) else None
            callback = self.on_node
        elif event.data_type == "edge":
            index, callback = event.data_index, self.on_edge
            ids = self.shown.link_ids
            item_id = ids[index] if 0 <= index < len(ids) else None
        else:
            data = event.data if isinstance(event.data, dict) else {}
            item_id, callback = data.get("id"), self.on_node
        if not item_id or callback is None:
            return
        result = callback(str(item_id))
        if inspect.isawaitable(result):
            await result
