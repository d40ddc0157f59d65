"""The graph view: one knowledge graph drawn with ECharts' `graph` series (bundled with NiceGUI).

It is the one reusable component for graphs: artifacts, the Graph Mode editor, and (later) the
MCP Apps view use it. It draws what it is given, with positions from `graph_layout`; zoom, pan,
drag, colours by type with a legend (click a type to hide it), labels on hover, and a callback
when a node or an edge is clicked. The root element carries `data-version` (the graph version
shown) and, once ECharts has finished drawing it, `data-drawn-version`, for tests and benchmarks.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from nicegui import events, ui

from graphwright.web.graph_layout import Placement
from graphwright.web.graph_options import chart_options, node_type

Item = Mapping[str, Any]
Pick = Callable[[str], Any]


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
        self.nodes: list[Item] = []
        self.edges: list[Item] = []
        self.placement: Placement | None = None
        self.version: int | None = None
        with ui.column().classes("w-full gap-1") as self.root:
            self.note = ui.label().classes("text-sm bg-sky-100 text-sky-950 px-2 py-1 rounded")
            self.note.mark("graph-note").props('data-testid="graph-note"')
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

    def show(
        self,
        nodes: Sequence[Item],
        edges: Sequence[Item],
        placement: Placement,
        *,
        version: int | None = None,
        highlight: Collection[str] = (),
    ) -> None:
        self.nodes, self.edges, self.placement, self.version = (
            list(nodes),
            list(edges),
            placement,
            version,
        )
        self.refresh(highlight=highlight)

    def refresh(
        self, *, highlight: Collection[str] = (), hidden_types: Collection[str] = ()
    ) -> None:
        """Draw again, e.g. with other nodes highlighted or some types left out."""
        if self.placement is None:
            return
        hidden = set(hidden_types)
        nodes = [n for n in self.nodes if node_type(n) not in hidden] if hidden else self.nodes
        options = chart_options(
            nodes,
            self.edges,
            self.placement.positions,
            highlight=highlight,
            large=self.placement.precomputed,
        )
        self.note.text = self.placement.note or ""
        self.note.set_visibility(bool(self.placement.note))
        self.chart.options.clear()
        self.chart.options.update(options)
        self.chart.props(f'data-version="{self.version if self.version is not None else ""}"')
        self.chart.update()

    async def _clicked(self, event: events.EChartPointClickEventArguments) -> None:
        data = event.data if isinstance(event.data, dict) else {}
        item_id = data.get("id")
        callback = self.on_edge if event.data_type == "edge" else self.on_node
        if not item_id or callback is None:
            return
        result = callback(str(item_id))
        if inspect.isawaitable(result):
            await result
