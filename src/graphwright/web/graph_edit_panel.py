"""The Edit tab of the Graph Mode editor: add nodes and edges, bulk delete after a preview, merge
duplicate nodes. Every action calls GraphService, as the REST API does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nicegui import ui

from graphwright.drawing.options import categories
from graphwright.graphmode.schemas import EdgeInput, NodeInput, NodeSelection
from graphwright.web.common import choice, guarded, whole_number

if TYPE_CHECKING:
    from graphwright.web.graph_editor import GraphEditor

CHOICES = 500
PREVIEWED = 300


def node_select(label: str, marker: str, *, multiple: bool = False) -> ui.select:
    """A node picker: labels shown, ids typed in for nodes past the first CHOICES."""
    return choice(
        {}, label, marker, multiple=multiple, with_input=True, new_value_mode="add-unique"
    ).classes("min-w-[10rem]")


class EditPanel:
    def __init__(self, editor: GraphEditor) -> None:
        self.editor = editor
        self._choices: tuple[dict[str, str], list[str]] = ({}, [])
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
            self.edge_source = node_select("From", "edge-source")
            self.edge_target = node_select("To", "edge-target")
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
            self.bulk_types = choice([], "Nodes of types", "bulk-types", multiple=True).classes(
                "min-w-[10rem]"
            )
            self.bulk_max_degree = whole_number("or of degree at most", "bulk-degree")
            ui.button("Preview", icon="visibility", on_click=self.bulk_delete).mark(
                "bulk-preview"
            ).props('data-testid="bulk-preview"')
        with ui.row().classes("w-full items-end gap-2"):
            ui.label("Merge nodes").classes("font-medium w-28")
            self.merge_keep = node_select("Keep", "merge-keep")
            self.merge_remove = node_select("Fold in", "merge-remove", multiple=True)
            ui.button("Merge", icon="merge", on_click=self.merge).mark("merge").props(
                'data-testid="merge"'
            )

    def refresh_choices(self) -> None:
        # Past CHOICES nodes the lists hold the first ones; any id can still be typed in.
        editor = self.editor
        names = {n["id"]: f"{n['label']} ({n['id']})" for n in editor.nodes[:CHOICES]}
        kinds = categories(editor.nodes)
        if (names, kinds) == self._choices:
            return
        self._choices = (names, kinds)
        for select in (self.edge_source, self.edge_target, self.merge_keep, self.merge_remove):
            value = select.value
            select.set_options(names, value=value if _still(value, names) else None)
        self.bulk_types.set_options(
            kinds, value=[v for v in self.bulk_types.value or [] if v in kinds]
        )
        editor.analysis.set_nodes(names)

    @guarded
    async def add_node(self) -> None:
        editor = self.editor
        node = NodeInput(
            id=(self.node_id.value or "").strip() or None,
            label=(self.node_label.value or "").strip(),
            type=(self.node_type.value or "").strip(),
        )
        created, _ = await editor.change(editor.context.graphs.add_node, node)
        self.node_label.value = ""
        self.node_id.value = ""
        ui.notify(f"Added {created.label}", type="positive")
        await editor.reload()

    @guarded
    async def add_edge(self) -> None:
        if not self.edge_source.value or not self.edge_target.value:
            ui.notify("Choose both ends of the edge")
            return
        editor = self.editor
        edge = EdgeInput(
            source=self.edge_source.value,
            target=self.edge_target.value,
            label=(self.edge_label.value or "").strip() or None,
        )
        await editor.change(editor.context.graphs.add_edge, edge)
        ui.notify("Edge added", type="positive")
        await editor.reload()

    def edge_from(self, node_id: str) -> None:
        self.edge_source.set_value(node_id)
        ui.notify("Now choose where the edge goes, under Edit")

    @guarded
    async def bulk_delete(self) -> None:
        if self.bulk_types.value:
            selection = NodeSelection(types=list(self.bulk_types.value))
        elif self.bulk_max_degree.value is not None:
            selection = NodeSelection(max_degree=int(self.bulk_max_degree.value))
        else:
            ui.notify("Choose node types or a degree first")
            return
        editor = self.editor
        preview, _ = await editor.change(
            editor.context.graphs.remove_nodes, selection, preview=True
        )
        labels = {n["id"]: n["label"] for n in editor.nodes}
        with (
            ui.dialog() as dialog,
            ui.card().mark("bulk-dialog").props('data-testid="bulk-dialog"'),
        ):
            ui.label(
                f"This deletes {preview.node_count} nodes and {preview.edge_count} edges."
            ).classes("font-bold")
            with ui.scroll_area().classes("h-48 w-96 max-w-full"):
                for node_id in preview.node_ids[:PREVIEWED]:
                    ui.label(f"{labels.get(node_id, node_id)} ({node_id})").classes("text-sm")
            with ui.row():
                ui.button(
                    "Delete them", color="negative", on_click=lambda: dialog.submit(True)
                ).mark("bulk-confirm").props('data-testid="bulk-confirm"')
                ui.button("Cancel", on_click=lambda: dialog.submit(False)).props("flat").mark(
                    "bulk-cancel"
                ).props('data-testid="bulk-cancel"')
        if not await dialog or preview.node_count == 0:
            return
        await editor.change(
            editor.context.graphs.remove_nodes,
            NodeSelection(ids=preview.node_ids),
            expected_version=editor.version,
        )
        ui.notify(f"Deleted {preview.node_count} nodes", type="positive")
        await editor.reload()

    @guarded
    async def merge(self) -> None:
        keep, remove = self.merge_keep.value, [r for r in self.merge_remove.value or [] if r]
        if not keep or not remove:
            ui.notify("Choose the node to keep and the nodes to fold into it")
            return
        editor = self.editor
        await editor.change(editor.context.graphs.merge_nodes, keep, remove)
        ui.notify(f"Merged {len(remove)} nodes into {keep}", type="positive")
        self.merge_remove.set_value([])
        await editor.reload()


def _still(value: Any, options: dict[str, str]) -> bool:
    if isinstance(value, list):
        return all(v in options for v in value)
    return value in options
