"""The Graph Mode editor: the conversation's graph, live, with editing, undo and redo, history,
analysis and layouts. Every action calls GraphService (or graphmode.analysis), as the REST API does.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from nicegui import background_tasks, ui

from graphwright.auth.models import Principal
from graphwright.errors import NotFound
from graphwright.graphmode import analysis
from graphwright.graphmode.schemas import (
    EdgeInput,
    NodeInput,
    NodePatch,
    NodeSelection,
    Position,
    UpdateNodeOp,
)
from graphwright.web.artifact_views import pmid_links
from graphwright.web.common import guarded, io
from graphwright.web.context import WebContext
from graphwright.web.graph_history import HistoryPanel
from graphwright.web.graph_layout import place
from graphwright.web.graph_options import categories
from graphwright.web.graph_view import Drawing, GraphView, drawing
from graphwright.web.live_graphs import Snapshot

LIVE_QUIET_SECONDS = 15.0
CHOICES = 500


def node_dict(node: Any) -> dict[str, Any]:
    position = node.position
    return {
        "id": node.id,
        "label": node.label,
        "type": node.type,
        "data": node.data,
        "position": {"x": position.x, "y": position.y} if position else None,
    }


def edge_dict(edge: Any) -> dict[str, Any]:
    return {
        "id": edge.id,
        "source": edge.source,
        "target": edge.target,
        "label": edge.label,
        "type": edge.type,
        "data": edge.data,
    }


class GraphEditor:
    def __init__(
        self,
        context: WebContext,
        principal: Principal,
        conversation_id: str,
        *,
        compact: bool = False,
    ) -> None:
        self.context = context
        self.principal = principal
        self.conversation_id = conversation_id
        self.nodes: list[dict[str, Any]] = []
        self.edges: list[dict[str, Any]] = []
        self.version = 0
        self.viewing: int | None = None  # a past version on screen; live updates wait
        self.highlight: set[str] = set()
        self.selected: str | None = None
        self.positions: dict[str, tuple[float, float]] = {}
        self._choices: tuple[dict[str, str], list[str]] = ({}, [])
        with (
            ui.column()
            .classes("w-full gap-2")
            .mark("graph-editor")
            .props('data-testid="graph-editor"')
        ):
            with ui.row().classes("w-full items-center gap-2"):
                self.title = (
                    ui.label("Graph")
                    .classes("text-lg font-bold")
                    .mark("graph-title")
                    .props('data-testid="graph-title"')
                )
                ui.button(icon="undo", on_click=self.undo).props(
                    'outline dense aria-label="Undo (Ctrl+Z)"'
                ).tooltip("Undo (Ctrl+Z)").mark("undo").props('data-testid="undo"')
                ui.button(icon="redo", on_click=self.redo).props(
                    'outline dense aria-label="Redo (Ctrl+Shift+Z)"'
                ).tooltip("Redo (Ctrl+Shift+Z)").mark("redo").props('data-testid="redo"')
                self.past = ui.row().classes("items-center gap-2")
            self.view = GraphView(
                on_node=self.select_node,
                on_edge=self.select_edge,
                height="45vh" if compact else "62vh",
            )
            with ui.context_menu():
                ui.menu_item("Delete the selected node", on_click=self.delete_selected)
                ui.menu_item("Start an edge from the selected node", on_click=self.edge_from)
                ui.menu_item("Clear highlights", on_click=self.clear_highlight)
            with ui.tabs().classes("w-full") as tabs:
                edit_tab = ui.tab("Edit")
                details_tab = ui.tab("Details")
                history_tab = ui.tab("History")
                analysis_tab = ui.tab("Analysis")
            self.tabs = tabs
            self.details_tab = details_tab
            self.history_tab = history_tab
            tabs.on_value_change(self._tab_changed)
            with ui.tab_panels(tabs, value=edit_tab).classes("w-full"):
                with ui.tab_panel(edit_tab):
                    self._edit_forms()
                with ui.tab_panel(details_tab):
                    self.details = (
                        ui.column()
                        .classes("w-full")
                        .mark("graph-details")
                        .props('data-testid="graph-details"')
                    )
                    ui.label("Click a node or an edge to see it here.").classes("text-sm")
                with ui.tab_panel(history_tab):
                    self.history = HistoryPanel(self)
                with ui.tab_panel(analysis_tab):
                    self._analysis_forms()
        ui.keyboard(on_key=self._key)
        ui.timer(0, self.start, once=True)

    # --- loading and live updates ---------------------------------------------------------------

    @guarded
    async def start(self) -> None:
        subscription = self.context.graph_events.subscribe(self.conversation_id)
        client = ui.context.client
        await self.reload()
        task = background_tasks.create(self._follow(subscription), name="graph-live")

        def stop() -> None:
            task.cancel()
            subscription.close()

        client.on_delete(stop)

    async def _follow(self, subscription: Any) -> None:
        while True:
            event = await subscription.next_within(LIVE_QUIET_SECONDS)
            if event is None:
                continue
            while not subscription.queue.empty():  # a burst of changes: one redraw
                subscription.queue.get_nowait()
            if self.viewing is None:
                with contextlib.suppress(Exception):
                    await self.reload()

    async def reload(self) -> None:
        snapshot, shown = await asyncio.to_thread(self._current)
        self.nodes = list(snapshot.nodes.values())
        self.edges = list(snapshot.edges.values())
        self.version = snapshot.version
        self.positions = snapshot.positions
        self.view.draw(shown)
        self.title.text = (
            f"Graph · version {self.version} · {len(self.nodes)} nodes, {len(self.edges)} edges"
        )
        self._refresh_choices()
        # The timeline is rebuilt only while it is on screen (or once it is opened).
        self.history.stale = True
        if self._history_shown():
            await self.history.reload()

    def _history_shown(self) -> bool:
        # ui.tabs holds the tab, or its name once the browser has changed it
        return self.tabs.value in (self.history_tab, self.history_tab.props["name"])

    async def _tab_changed(self) -> None:
        if self._history_shown() and self.history.stale:
            await self.history.reload()

    def _current(self) -> tuple[Snapshot, Drawing]:
        snapshot = self.context.live.current(self.conversation_id)
        default = snapshot.drawing()  # also settles the positions of this version
        if not self.highlight:
            return snapshot, default
        nodes, edges = list(snapshot.nodes.values()), list(snapshot.edges.values())
        return snapshot, drawing(
            nodes,
            edges,
            place(nodes, edges, snapshot.positions),
            version=snapshot.version,
            highlight=self.highlight,
        )

    def _redraw(self) -> None:
        """Draw the live graph again with the current highlights."""
        placement = place(self.nodes, self.edges, self.positions)
        self.view.draw(
            drawing(
                self.nodes, self.edges, placement, version=self.version, highlight=self.highlight
            )
        )

    async def view_version(self, version: int) -> None:
        state = await io(self.context.graphs.state_at, self.conversation_id, version)
        self.viewing = version
        nodes = [node_dict(n) for n in state.nodes]
        edges = [edge_dict(e) for e in state.edges]
        placement = place(nodes, edges, self.positions)
        self.view.draw(drawing(nodes, edges, placement, version=version))
        self.past.clear()
        with self.past:
            ui.badge(f"Viewing version {version} (read-only)", color="orange").mark(
                "viewing"
            ).props('data-testid="viewing"')
            ui.button("Back to live", on_click=self.back_to_live).props("dense outline").mark(
                "back-to-live"
            ).props('data-testid="back-to-live"')

    @guarded
    async def back_to_live(self) -> None:
        self.viewing = None
        self.past.clear()
        await self.reload()

    # --- editing --------------------------------------------------------------------------------

    def _edit_forms(self) -> None:
        with ui.row().classes("w-full items-end gap-2"):
            ui.label("Add a node").classes("font-medium w-28")
            self.node_label = ui.input("Label").mark("node-label").props('data-testid="node-label"')
            self.node_type = (
                ui.input("Type", value="gene").mark("node-type").props('data-testid="node-type"')
            )
            self.node_id = (
                ui.input("Id (CURIE, optional)").mark("node-id").props('data-testid="node-id"')
            )
            ui.button("Add node", icon="add", on_click=self.add_node).mark("add-node").props(
                'data-testid="add-node"'
            )
        with ui.row().classes("w-full items-end gap-2"):
            ui.label("Add an edge").classes("font-medium w-28")
            self.edge_source = (
                ui.select({}, label="From", with_input=True, new_value_mode="add-unique")
                .classes("min-w-[10rem]")
                .mark("edge-source")
                .props('data-testid="edge-source"')
            )
            self.edge_target = (
                ui.select({}, label="To", with_input=True, new_value_mode="add-unique")
                .classes("min-w-[10rem]")
                .mark("edge-target")
                .props('data-testid="edge-target"')
            )
            self.edge_label = (
                ui.input("Label", value="related_to")
                .mark("edge-label")
                .props('data-testid="edge-label"')
            )
            ui.button("Add edge", icon="add_link", on_click=self.add_edge).mark("add-edge").props(
                'data-testid="add-edge"'
            )
        with ui.row().classes("w-full items-end gap-2"):
            ui.label("Bulk delete").classes("font-medium w-28")
            self.bulk_types = (
                ui.select([], multiple=True, label="Nodes of types")
                .classes("min-w-[10rem]")
                .mark("bulk-types")
                .props('data-testid="bulk-types"')
            )
            self.bulk_max_degree = (
                ui.number("or of degree at most", min=0, precision=0)
                .mark("bulk-degree")
                .props('data-testid="bulk-degree"')
            )
            ui.button("Preview", icon="visibility", on_click=self.bulk_delete).mark(
                "bulk-preview"
            ).props('data-testid="bulk-preview"')
        with ui.row().classes("w-full items-end gap-2"):
            ui.label("Merge nodes").classes("font-medium w-28")
            self.merge_keep = (
                ui.select({}, label="Keep", with_input=True, new_value_mode="add-unique")
                .classes("min-w-[10rem]")
                .mark("merge-keep")
                .props('data-testid="merge-keep"')
            )
            self.merge_remove = (
                ui.select(
                    {},
                    label="Fold in",
                    multiple=True,
                    with_input=True,
                    new_value_mode="add-unique",
                )
                .classes("min-w-[12rem]")
                .mark("merge-remove")
                .props('data-testid="merge-remove"')
            )
            ui.button("Merge", icon="merge", on_click=self.merge).mark("merge").props(
                'data-testid="merge"'
            )

    def _refresh_choices(self) -> None:
        # Past CHOICES nodes the lists hold the first ones; any id can still be typed in.
        names = {n["id"]: f"{n['label']} ({n['id']})" for n in self.nodes[:CHOICES]}
        kinds = categories(self.nodes)
        if (names, kinds) == self._choices:
            return
        self._choices = (names, kinds)
        for select in (self.edge_source, self.edge_target, self.merge_keep, self.merge_remove):
            value = select.value
            select.set_options(names, value=value if _still(value, names) else None)
        self.bulk_types.set_options(
            kinds, value=[v for v in self.bulk_types.value or [] if v in kinds]
        )
        self.path_from.set_options(names, value=None)
        self.path_to.set_options(names, value=None)

    @property
    def actor(self) -> str:
        return self.principal.actor

    @guarded
    async def add_node(self) -> None:
        node = NodeInput(
            id=(self.node_id.value or "").strip() or None,
            label=(self.node_label.value or "").strip(),
            type=(self.node_type.value or "").strip(),
        )
        created, _ = await io(
            self.context.graphs.add_node, self.conversation_id, node, actor=self.actor
        )
        self.node_label.value = ""
        self.node_id.value = ""
        ui.notify(f"Added {created.label}", type="positive")
        await self.reload()

    @guarded
    async def add_edge(self) -> None:
        if not self.edge_source.value or not self.edge_target.value:
            ui.notify("Choose both ends of the edge")
            return
        edge = EdgeInput(
            source=self.edge_source.value,
            target=self.edge_target.value,
            label=(self.edge_label.value or "").strip() or None,
        )
        await io(self.context.graphs.add_edge, self.conversation_id, edge, actor=self.actor)
        ui.notify("Edge added", type="positive")
        await self.reload()

    def edge_from(self) -> None:
        if self.selected:
            self.edge_source.set_value(self.selected)
            ui.notify("Now choose where the edge goes, under Edit")

    @guarded
    async def delete_selected(self) -> None:
        if self.selected is None:
            ui.notify("Click a node first")
            return
        await self.delete_node(self.selected)

    @guarded
    async def delete_node(self, node_id: str) -> None:
        removal, _ = await io(
            self.context.graphs.remove_node, self.conversation_id, node_id, actor=self.actor
        )
        self.selected = None
        ui.notify(f"Deleted the node and {removal.edge_count} edges (undo brings them back)")
        await self.reload()

    @guarded
    async def delete_edge(self, edge_id: str) -> None:
        await io(self.context.graphs.remove_edge, self.conversation_id, edge_id, actor=self.actor)
        ui.notify("Edge deleted")
        await self.reload()

    @guarded
    async def bulk_delete(self) -> None:
        if self.bulk_types.value:
            selection = NodeSelection(types=list(self.bulk_types.value))
        elif self.bulk_max_degree.value is not None:
            selection = NodeSelection(max_degree=int(self.bulk_max_degree.value))
        else:
            ui.notify("Choose node types or a degree first")
            return
        preview, _ = await io(
            self.context.graphs.remove_nodes,
            self.conversation_id,
            selection,
            actor=self.actor,
            preview=True,
        )
        labels = {n["id"]: n["label"] for n in self.nodes}
        with (
            ui.dialog() as dialog,
            ui.card().mark("bulk-dialog").props('data-testid="bulk-dialog"'),
        ):
            ui.label(
                f"This deletes {preview.node_count} nodes and {preview.edge_count} edges."
            ).classes("font-bold")
            with ui.scroll_area().classes("h-48 w-96"):
                for node_id in preview.node_ids[:300]:
                    ui.label(f"{labels.get(node_id, node_id)} ({node_id})").classes("text-sm")
            with ui.row():
                ui.button(
                    "Delete them", color="negative", on_click=lambda: dialog.submit(True)
                ).mark("bulk-confirm").props('data-testid="bulk-confirm"')
                ui.button("Cancel", on_click=lambda: dialog.submit(False)).props("flat")
        if not await dialog or preview.node_count == 0:
            return
        await io(
            self.context.graphs.remove_nodes,
            self.conversation_id,
            NodeSelection(ids=preview.node_ids),
            actor=self.actor,
            expected_version=self.version,
        )
        ui.notify(f"Deleted {preview.node_count} nodes", type="positive")
        await self.reload()

    @guarded
    async def merge(self) -> None:
        keep, remove = self.merge_keep.value, [r for r in self.merge_remove.value or [] if r]
        if not keep or not remove:
            ui.notify("Choose the node to keep and the nodes to fold into it")
            return
        await io(
            self.context.graphs.merge_nodes, self.conversation_id, keep, remove, actor=self.actor
        )
        ui.notify(f"Merged {len(remove)} nodes into {keep}", type="positive")
        self.merge_remove.set_value([])
        await self.reload()

    @guarded
    async def undo(self) -> None:
        summary, _ = await io(self.context.graphs.undo, self.conversation_id, actor=self.actor)
        ui.notify(f"Undid version {summary.target_version}")
        await self.reload()

    @guarded
    async def redo(self) -> None:
        summary, _ = await io(self.context.graphs.redo, self.conversation_id, actor=self.actor)
        ui.notify(f"Redid version {summary.target_version}")
        await self.reload()

    async def _key(self, event: Any) -> None:
        if not event.action.keydown or str(event.key).lower() != "z":
            return
        if not (event.modifiers.ctrl or event.modifiers.meta):
            return
        await (self.redo() if event.modifiers.shift else self.undo())

    # --- details --------------------------------------------------------------------------------

    @guarded
    async def select_node(self, node_id: str) -> None:
        self.selected = node_id
        node = next((n for n in self.nodes if n["id"] == node_id), None)
        self.details.clear()
        self.tabs.set_value(self.details_tab)
        if node is None:
            return
        with self.details:
            ui.label(f"Node {node_id}").classes("font-bold").mark("selected-node").props(
                'data-testid="selected-node"'
            )
            label = (
                ui.input("Label", value=node["label"])
                .mark("edit-label")
                .props('data-testid="edit-label"')
            )
            kind = (
                ui.input("Type", value=node["type"])
                .mark("edit-type")
                .props('data-testid="edit-type"')
            )

            @guarded
            async def save() -> None:
                patch = NodePatch(label=label.value, type=kind.value)
                await io(
                    self.context.graphs.update_node,
                    self.conversation_id,
                    node_id,
                    patch,
                    actor=self.actor,
                )
                ui.notify("Saved", type="positive")
                await self.reload()

            with ui.row():
                ui.button("Save", on_click=save).mark("save-node").props('data-testid="save-node"')
                ui.button(
                    "Delete node", color="negative", on_click=lambda: self.delete_node(node_id)
                ).mark("delete-node").props('data-testid="delete-node"')
            if node["data"]:
                ui.code(str(node["data"])).classes("w-full text-xs")
            for edge in [e for e in self.edges if node_id in (e["source"], e["target"])][:50]:
                with ui.row().classes("items-center gap-2 text-sm"):
                    ui.label(f"{edge['source']} —{edge['label'] or ''}→ {edge['target']}")
                    for text, url in pmid_links((edge["data"] or {}).get("evidence", [])):
                        ui.link(text, url, new_tab=True)
                    ui.button(
                        icon="link_off", on_click=lambda e=edge: self.delete_edge(e["id"])
                    ).props('flat dense aria-label="Delete this edge"')

    @guarded
    async def select_edge(self, edge_id: str) -> None:
        edge = next((e for e in self.edges if e["id"] == edge_id), None)
        self.details.clear()
        self.tabs.set_value(self.details_tab)
        if edge is None:
            return
        with self.details:
            ui.label(f"Edge {edge['source']} —{edge['label'] or ''}→ {edge['target']}").classes(
                "font-bold"
            )
            ui.button(
                "Delete edge", color="negative", on_click=lambda: self.delete_edge(edge_id)
            ).mark("delete-edge").props('data-testid="delete-edge"')

    # --- analysis and layouts -------------------------------------------------------------------

    def _analysis_forms(self) -> None:
        with ui.row().classes("w-full items-end gap-2"):
            self.measure = (
                ui.select(["degree", "betweenness", "pagerank"], value="degree", label="Centrality")
                .mark("measure")
                .props('data-testid="measure"')
            )
            ui.button("Most central", on_click=self.centrality).mark("run-centrality").props(
                'data-testid="run-centrality"'
            )
            ui.button("Communities", on_click=self.communities).mark("run-communities").props(
                'data-testid="run-communities"'
            )
        with ui.row().classes("w-full items-end gap-2"):
            self.path_from = ui.select(
                {}, label="Path from", with_input=True, new_value_mode="add-unique"
            ).classes("min-w-[10rem]")
            self.path_to = ui.select(
                {}, label="to", with_input=True, new_value_mode="add-unique"
            ).classes("min-w-[10rem]")
            ui.button("Shortest path", on_click=self.path).mark("run-path").props(
                'data-testid="run-path"'
            )
        with ui.row().classes("w-full items-end gap-2"):
            self.layout_kind = (
                ui.select(["force", "hierarchical", "circular"], value="force", label="Layout")
                .mark("layout-kind")
                .props('data-testid="layout-kind"')
            )
            ui.button("Apply and save positions", on_click=self.apply_layout).mark(
                "apply-layout"
            ).props('data-testid="apply-layout"')
            ui.button("Clear highlights", on_click=self.clear_highlight).props("flat")
        self.results = (
            ui.column()
            .classes("w-full")
            .mark("analysis-results")
            .props('data-testid="analysis-results"')
        )

    def _show_results(self, title: str, lines: list[str], highlight: set[str]) -> None:
        self.highlight = highlight
        self._redraw()
        self.results.clear()
        with self.results:
            ui.label(title).classes("font-bold")
            for line in lines:
                ui.label(line).classes("text-sm")

    @guarded
    async def centrality(self) -> None:
        found = await io(
            analysis.centrality, self.nodes, self.edges, measure=self.measure.value, top=10
        )
        approx = " (approximate)" if found["approximate"] else ""
        self._show_results(
            f"Most central by {found['measure']}{approx}",
            [f"{n['label'] or n['id']}: {n['score']}" for n in found["top"]],
            {n["id"] for n in found["top"]},
        )

    @guarded
    async def communities(self) -> None:
        found = await io(analysis.communities, self.nodes, self.edges)
        lines = [
            f"Community {c['index'] + 1}: {c['size']} nodes, e.g. "
            + ", ".join(m["label"] or m["id"] for m in c["members"][:5])
            for c in found["communities"][:20]
        ]
        largest = found["communities"][0]["members"] if found["communities"] else []
        self._show_results(
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
        try:
            found = await io(
                analysis.shortest_path,
                self.nodes,
                self.edges,
                self.path_from.value,
                self.path_to.value,
            )
        except NotFound:
            return
        self._show_results(
            f"Shortest path: {found['length']} steps",
            [" → ".join(n["label"] or n["id"] for n in found["nodes"])],
            {n["id"] for n in found["nodes"]},
        )

    def clear_highlight(self) -> None:
        self.highlight = set()
        self.results.clear()
        self._redraw()

    @guarded
    async def apply_layout(self) -> None:
        if not self.nodes:
            ui.notify("The graph has no nodes to lay out")
            return
        positions = await io(analysis.layout, self.nodes, self.edges, kind=self.layout_kind.value)
        operations = [
            UpdateNodeOp(op="updateNode", id=node_id, patch=NodePatch(position=Position(**xy)))
            for node_id, xy in positions.items()
        ]
        await io(self.context.graphs.batch, self.conversation_id, operations, actor=self.actor)
        ui.notify(f"Applied the {self.layout_kind.value} layout and saved the positions")
        await self.reload()


def _still(value: Any, options: dict[str, str]) -> bool:
    if isinstance(value, list):
        return all(v in options for v in value)
    return value in options
