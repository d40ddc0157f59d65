"""The Graph Mode editor: the conversation's graph, live, with undo and redo and past versions;
beside it the details card of the clicked node or edge; below, its tabs (Edit, History,
Analysis). Each is a panel of its own module. Every action calls GraphService (or
graphmode.analysis), as the REST API does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, TypeVar

from nicegui import background_tasks, ui

from graphwright.auth.models import Principal
from graphwright.drawing.graph import Drawing, drawing
from graphwright.drawing.layout import Placement, place
from graphwright.web.common import guarded, io
from graphwright.web.context import WebContext
from graphwright.web.graph_analysis_panel import AnalysisPanel
from graphwright.web.graph_details import DetailsPanel
from graphwright.web.graph_edit_panel import EditPanel
from graphwright.web.graph_history import HistoryPanel
from graphwright.web.graph_view import GraphView
from graphwright.web.live_graphs import Snapshot

LIVE_QUIET_SECONDS = 15.0
T = TypeVar("T")


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
        self.placement = Placement({}, precomputed=False, note=None)  # of the live version
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
                    .props('role="status" aria-live="polite"')
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
            height = "45vh" if compact else "62vh"
            # The details card sits beside the graph, so both fit on one screen.
            with ui.row().classes("w-full no-wrap items-start gap-2"):
                with ui.column().classes("grow min-w-0 gap-0"):
                    self.view = GraphView(
                        on_node=self.select_node, on_edge=self.select_edge, height=height
                    )
                # Beside the chat the editor has half the window: a narrower card.
                width = "w-60" if compact else "w-72 xl:w-96"
                self.details = DetailsPanel(self, height=height, width=width)
            with ui.context_menu():
                ui.menu_item("Delete the selected node", on_click=self._delete_selected)
                ui.menu_item("Start an edge from the selected node", on_click=self._edge_from)
                ui.menu_item("Clear highlights", on_click=self.clear_highlight)
            with ui.tabs().classes("w-full") as tabs:
                edit_tab = ui.tab("Edit").mark("tab-edit").props('data-testid="tab-edit"')
                history_tab = (
                    ui.tab("History").mark("tab-history").props('data-testid="tab-history"')
                )
                analysis_tab = (
                    ui.tab("Analysis").mark("tab-analysis").props('data-testid="tab-analysis"')
                )
            self.tabs = tabs
            self.history_tab = history_tab
            tabs.on_value_change(self._tab_changed)
            with ui.tab_panels(tabs, value=edit_tab).classes("w-full"):
                with ui.tab_panel(edit_tab):
                    self.edit = EditPanel(self)
                with ui.tab_panel(history_tab):
                    self.history = HistoryPanel(self)
                with ui.tab_panel(analysis_tab):
                    self.analysis = AnalysisPanel(self)
        ui.keyboard(on_key=self._key)
        ui.timer(0, self.start, once=True)

    @property
    def actor(self) -> str:
        return self.principal.actor

    async def change(self, action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A GraphService change to this conversation's graph, made by the signed-in person."""
        return await io(action, self.conversation_id, *args, actor=self.actor, **kwargs)

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
        self.placement = shown.placement
        self.view.update(shown)
        self.title.text = (
            f"Graph · version {self.version} · {len(self.nodes)} nodes, {len(self.edges)} edges"
        )
        self.edit.refresh_choices()
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
        return snapshot, snapshot.drawing(self.highlight)

    def set_highlight(self, highlight: set[str]) -> None:
        """Draw the live graph again with these nodes highlighted."""
        self.highlight = highlight
        self.view.update(
            drawing(
                self.nodes,
                self.edges,
                self.placement,
                version=self.version,
                highlight=self.highlight,
            )
        )

    def clear_highlight(self) -> None:
        self.analysis.results.clear()
        self.set_highlight(set())

    async def view_version(self, version: int) -> None:
        state = await io(self.context.graphs.state_at, self.conversation_id, version)
        self.viewing = version
        nodes = [node_dict(n) for n in state.nodes]
        edges = [edge_dict(e) for e in state.edges]
        placement = place(nodes, edges, self.placement.positions)
        self.view.draw(drawing(nodes, edges, placement, version=version))
        self.past.clear()
        with self.past:
            ui.badge(f"Viewing version {version} (read-only)", color="orange-10").mark(
                "viewing"
            ).props('data-testid="viewing"')
            ui.button("Back to live", on_click=self.back_to_live).props("dense outline").mark(
                "back-to-live"
            ).props('data-testid="back-to-live"')

    @guarded
    async def back_to_live(self) -> None:
        await self.live()

    async def live(self) -> None:
        """Leave a past version, if one is on screen, and show the graph as it is now."""
        self.viewing = None
        self.past.clear()
        await self.reload()

    # --- undo and redo --------------------------------------------------------------------------

    @guarded
    async def undo(self) -> None:
        summary, _ = await self.change(self.context.graphs.undo)
        ui.notify(f"Undid version {summary.target_version}")
        await self.reload()

    @guarded
    async def redo(self) -> None:
        summary, _ = await self.change(self.context.graphs.redo)
        ui.notify(f"Redid version {summary.target_version}")
        await self.reload()

    async def _key(self, event: Any) -> None:
        if not event.action.keydown or str(event.key).lower() != "z":
            return
        if not (event.modifiers.ctrl or event.modifiers.meta):
            return
        await (self.redo() if event.modifiers.shift else self.undo())

    # --- selection ------------------------------------------------------------------------------

    @guarded
    async def select_node(self, node_id: str) -> None:
        node = next((n for n in self.nodes if n["id"] == node_id), None)
        if node is not None:
            await self.details.show_node(node)

    @guarded
    async def select_edge(self, edge_id: str) -> None:
        edge = next((e for e in self.edges if e["id"] == edge_id), None)
        if edge is not None:
            await self.details.show_edge(edge)

    async def _delete_selected(self) -> None:
        await self.details.delete_selected()

    def _edge_from(self) -> None:
        if self.details.selected:
            self.edit.edge_from(self.details.selected)
