"""The Details tab of the Graph Mode editor: the clicked node (edit its label and type, delete
it, its edges with evidence links) or the clicked edge (delete it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nicegui import ui

from graphwright.core.citation_formats import pmid_links
from graphwright.graphmode.schemas import NodePatch
from graphwright.web.common import guarded

if TYPE_CHECKING:
    from graphwright.web.graph_editor import GraphEditor

EDGES_SHOWN = 50


class DetailsPanel:
    def __init__(self, editor: GraphEditor) -> None:
        self.editor = editor
        self.selected: str | None = None
        self.body = (
            ui.column().classes("w-full").mark("graph-details").props('data-testid="graph-details"')
        )
        with self.body:
            ui.label("Click a node or an edge to see it here.").classes("text-sm")
        # Beside the graph, so it shows whichever tab is open.
        with editor.view.root:
            self.toast = (
                ui.row()
                .classes("items-center gap-2 bg-gray-800 text-white px-3 py-1 rounded")
                .mark("delete-toast")
                .props('data-testid="delete-toast" role="status"')
            )
        self.toast.set_visibility(False)

    def show_node(self, node: dict[str, Any]) -> None:
        editor = self.editor
        node_id = node["id"]
        self.selected = node_id
        self.body.clear()
        with self.body:
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
                await editor.change(editor.context.graphs.update_node, node_id, patch)
                ui.notify("Saved", type="positive")
                await editor.reload()

            with ui.row():
                ui.button("Save", on_click=save).mark("save-node").props('data-testid="save-node"')
                ui.button(
                    "Delete node", color="negative", on_click=lambda: self.delete_node(node_id)
                ).mark("delete-node").props('data-testid="delete-node"')
            if node["data"]:
                ui.code(str(node["data"])).classes("w-full text-xs")
            touching = [e for e in editor.edges if node_id in (e["source"], e["target"])]
            for edge in touching[:EDGES_SHOWN]:
                with (
                    ui.row()
                    .classes("items-center gap-2 text-sm")
                    .mark("node-edge")
                    .props('data-testid="node-edge"')
                ):
                    ui.label(f"{edge['source']} —{edge['label'] or ''}→ {edge['target']}")
                    for text, url in pmid_links((edge["data"] or {}).get("evidence", [])):
                        ui.link(text, url, new_tab=True)
                    ui.button(
                        icon="link_off", on_click=lambda e=edge: self.delete_edge(e["id"])
                    ).props('flat dense aria-label="Delete this edge"')

    def show_edge(self, edge: dict[str, Any]) -> None:
        self.selected = None  # node actions must not fall back on a node clicked earlier
        self.body.clear()
        with self.body:
            ui.label(f"Edge {edge['source']} —{edge['label'] or ''}→ {edge['target']}").classes(
                "font-bold"
            ).mark("selected-edge").props('data-testid="selected-edge"')
            ui.button(
                "Delete edge", color="negative", on_click=lambda: self.delete_edge(edge["id"])
            ).mark("delete-edge").props('data-testid="delete-edge"')

    @guarded
    async def delete_selected(self) -> None:
        if self.selected is None:
            ui.notify("Click a node first")
            return
        await self.delete_node(self.selected)

    @guarded
    async def delete_node(self, node_id: str) -> None:
        editor = self.editor
        node = next((n for n in editor.nodes if n["id"] == node_id), None)
        removal, version = await editor.change(editor.context.graphs.remove_node, node_id)
        self.selected = None
        self.body.clear()
        name = f"{node['label']} ({node['type']})" if node else node_id
        edges = f" and {removal.edge_count} edges" if removal.edge_count else ""
        self._offer_undo(f"Deleted {name}{edges}", version)
        await editor.reload()

    def _offer_undo(self, text: str, version: int) -> None:
        """A toast naming what went, with Undo while that delete is still the newest change."""

        @guarded
        async def undo() -> None:
            self.toast.set_visibility(False)
            if self.editor.version != version:
                ui.notify("The graph changed since; restore it from History")
                return
            await self.editor.undo()

        self.toast.clear()
        with self.toast:
            ui.label(text).mark("delete-toast-text").props('data-testid="delete-toast-text"')
            ui.button("Undo", on_click=undo).props("flat dense color=yellow-3").mark(
                "delete-undo"
            ).props('data-testid="delete-undo"')
        self.toast.set_visibility(True)

    @guarded
    async def delete_edge(self, edge_id: str) -> None:
        editor = self.editor
        await editor.change(editor.context.graphs.remove_edge, edge_id)
        ui.notify("Edge deleted")
        await editor.reload()
