"""The Analysis tab of the Graph Mode editor: centrality, communities and shortest paths from
graphmode.analysis, listed and highlighted on the graph, and the server's layouts, saved as node
positions through GraphService."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nicegui import ui

from graphwright.graphmode import analysis
from graphwright.graphmode.history_words import with_id
from graphwright.graphmode.schemas import NodePatch, Position, UpdateNodeOp
from graphwright.web.common import choice, guarded, io
from graphwright.web.graph_edit_panel import node_select

if TYPE_CHECKING:
    from graphwright.web.graph_editor import GraphEditor

TOP = 10
COMMUNITIES_LISTED = 20


class AnalysisPanel:
    def __init__(self, editor: GraphEditor) -> None:
        self.editor = editor
        with ui.row().classes("w-full items-end gap-2"):
            # wide enough for the whole label, which Quasar would otherwise cut to "Centr…"
            self.measure = choice(
                ["degree", "betweenness", "pagerank"], "Centrality", "measure", value="degree"
            ).classes("min-w-[9rem]")
            ui.button("Most central", on_click=self.centrality).mark("run-centrality").props(
                'data-testid="run-centrality"'
            )
            ui.button("Communities", on_click=self.communities).mark("run-communities").props(
                'data-testid="run-communities"'
            )
        with ui.row().classes("w-full items-end gap-2"):
            self.path_from = node_select("Path from", "path-from")
            self.path_to = node_select("to", "path-to")
            ui.button("Shortest path", on_click=self.path).mark("run-path").props(
                'data-testid="run-path"'
            )
        with ui.row().classes("w-full items-end gap-2"):
            self.layout_kind = choice(
                ["force", "hierarchical", "circular"], "Layout", "layout-kind", value="force"
            ).classes("min-w-[9rem]")
            ui.button("Apply and save positions", on_click=self.apply_layout).mark(
                "apply-layout"
            ).props('data-testid="apply-layout"')
            ui.button("Clear highlights", on_click=editor.clear_highlight).props("flat").mark(
                "clear-highlight"
            ).props('data-testid="clear-highlight"')
        self.results = (
            ui.column()
            .classes("w-full")
            .mark("analysis-results")
            .props('data-testid="analysis-results"')
        )

    def set_nodes(self, names: dict[str, str]) -> None:
        self.path_from.set_options(names, value=None)
        self.path_to.set_options(names, value=None)

    def _show(self, title: str, lines: list[str], highlight: set[str]) -> None:
        self.editor.set_highlight(highlight)
        self.results.clear()
        with self.results:
            ui.label(title).classes("font-bold")
            for line in lines:
                ui.label(line).classes("text-sm")

    @guarded
    async def centrality(self) -> None:
        editor = self.editor
        found = await io(
            analysis.centrality, editor.nodes, editor.edges, measure=self.measure.value, top=TOP
        )
        approx = " (approximate)" if found["approximate"] else ""
        top = found["top"]
        self._show(f"Most central by {found['measure']}{approx}; click one to show it", [], set())
        self.editor.set_highlight({n["id"] for n in top})
        with self.results:
            for rank, node in enumerate(top, 1):
                name = with_id(node["label"], node["id"])
                ui.button(
                    f"{rank}. {name} {node['score']:.3g}",
                    on_click=lambda i=node["id"]: self.editor.set_highlight({i}),
                ).props('flat dense no-caps align="left" data-testid="central-node"').classes(
                    "w-full text-sm"
                )

    @guarded
    async def communities(self) -> None:
        found = await io(analysis.communities, self.editor.nodes, self.editor.edges)
        lines = [
            f"Community {c['index'] + 1}: {c['size']} nodes, e.g. "
            + ", ".join(m["label"] or m["id"] for m in c["members"][:5])
            for c in found["communities"][:COMMUNITIES_LISTED]
        ]
        largest = found["communities"][0]["members"] if found["communities"] else []
        self._show(
            f"{found['count']} communities (modularity {found['modularity']}); the largest is "
            "highlighted",
            lines,
            {m["id"] for m in largest},
        )

    @guarded
    async def path(self) -> None:
        if not self.path_from.value or not self.path_to.value:
            ui.notify("Choose both ends of the path")
            return
        editor = self.editor
        found = await io(
            analysis.shortest_path,
            editor.nodes,
            editor.edges,
            self.path_from.value,
            self.path_to.value,
        )
        self._show(
            f"Shortest path: {found['length']} steps",
            [" → ".join(n["label"] or n["id"] for n in found["nodes"])],
            {n["id"] for n in found["nodes"]},
        )

    @guarded
    async def apply_layout(self) -> None:
        editor = self.editor
        if not editor.nodes:
            ui.notify("The graph has no nodes to lay out")
            return
        kind = self.layout_kind.value
        positions = await io(analysis.layout, editor.nodes, editor.edges, kind=kind)
        operations = [
            UpdateNodeOp(op="updateNode", id=node_id, patch=NodePatch(position=Position(**xy)))
            for node_id, xy in positions.items()
        ]
        await editor.change(editor.context.graphs.batch, operations)
        ui.notify(f"Applied the {kind} layout and saved the positions")
        await editor.reload()
