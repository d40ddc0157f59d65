"""The details card beside the Graph Mode editor's graph: the clicked node as a person reads it
(name, type, its id and equivalent ids linked to their resolver, evidence linked to PubMed, where
it came from in words, its links), with its label and type to edit and a delete; or the clicked
edge (its predicate, evidence and provenance) with a delete. The words and links come from
`core.item_card`; which tool made a call, and in which turn, from the chat service."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nicegui import ui

from graphwright.core.item_card import (
    ItemCard,
    Link,
    ToolOrigin,
    all_provenance_ids,
    edge_card,
    evidence_links,
    node_card,
)
from graphwright.core.palette import type_colour
from graphwright.graphmode.schemas import NodePatch
from graphwright.web.common import guarded

if TYPE_CHECKING:
    from graphwright.web.graph_editor import GraphEditor

EDGES_SHOWN = 50
MakeCard = Callable[[Mapping[str, Any], Mapping[str, ToolOrigin]], ItemCard]
NO_PROVENANCE = "added in Graph Mode; no tool result recorded"
HINT = "Click a node or an edge to see its details here."


def _links(links: Sequence[Link]) -> None:
    with ui.row().classes("gap-x-2 gap-y-0 items-center"):
        for link in links:
            if link.url:
                ui.link(link.text, link.url, new_tab=True).classes("text-sm break-all")
            else:
                ui.label(link.text).classes("text-sm break-all")


def _section(title: str) -> None:
    ui.label(title).classes("text-xs font-bold uppercase text-gray-700 mt-1")


def _facts(card: ItemCard) -> None:
    """The parts of a card that nodes and edges share: evidence and provenance."""
    if card.evidence:
        _section("Evidence")
        _links(card.evidence)
    _section("Provenance")
    with ui.column().classes("gap-0").mark("provenance").props('data-testid="provenance"'):
        for words in card.provenance or [NO_PROVENANCE]:
            ui.label(words[0].upper() + words[1:]).classes("text-sm")


class DetailsPanel:
    def __init__(self, editor: GraphEditor, *, height: str, width: str) -> None:
        self.editor = editor
        self.selected: str | None = None
        self._shown = 0  # the latest selection: a slower earlier one must not replace it
        self.body = (
            ui.card()
            .classes(f"{width} shrink-0 overflow-auto gap-1 p-3")
            .style(f"height: {height}; min-height: 320px")
            .props('role="region" aria-label="Details of the selected node or edge"')
            .mark("graph-details")
            .props('data-testid="graph-details"')
        )
        with self.body:
            ui.label(HINT).classes("text-sm")
        # Over the graph, so it shows whichever tab is open.
        with editor.view.root:
            self.toast = (
                ui.row()
                .classes("items-center gap-2 bg-gray-800 text-white px-3 py-1 rounded")
                .mark("delete-toast")
                .props('data-testid="delete-toast" role="status"')
            )
        self.toast.set_visibility(False)

    async def _card(self, items: list[dict[str, Any]], make: MakeCard) -> list[ItemCard] | None:
        """Cards for `items` (the first the selected one), or None when another selection came
        first. Off the event loop: it reads the conversation, and Bioregistry loads on first use."""
        self._shown += 1
        shown = self._shown
        editor = self.editor

        def build() -> list[ItemCard]:
            ids = all_provenance_ids(items)
            origins = editor.context.chat.call_origins(editor.conversation_id, ids) if ids else {}
            return [make(item, origins) for item in items]

        cards = await asyncio.to_thread(build)
        return cards if shown == self._shown else None

    def _name(self, node_id: str) -> str:
        node = next((n for n in self.editor.nodes if n["id"] == node_id), None)
        return str(node["label"]) if node and node.get("label") else node_id

    async def show_node(self, node: dict[str, Any]) -> None:
        editor = self.editor
        node_id = node["id"]
        self.selected = node_id
        cards = await self._card([node], node_card)
        if cards is None:
            return
        card = cards[0]
        touching = [e for e in editor.edges if node_id in (e["source"], e["target"])]
        self.body.clear()
        with self.body:
            heading = (
                ui.label(str(node["label"]))
                .classes("text-lg font-bold break-words")
                .props('role="heading" aria-level="2"')
                .mark("selected-node")
                .props('data-testid="selected-node"')
            )
            heading.props["data-node-id"] = node_id
            with ui.row().classes("items-center gap-2"):
                dot = ui.element("span").classes("inline-block w-3 h-3 rounded-full")
                dot.style(f"background: {type_colour(str(node['type']))}").props("aria-hidden=true")
                ui.label(str(node["type"])).classes("text-sm").mark("node-type-shown")
            _links([card.identifier])
            if card.equivalents:
                _section("Equivalent ids")
                _links(card.equivalents)
            if card.description:
                ui.label(card.description).classes("text-sm")
            if card.synonyms:
                ui.label("Also: " + ", ".join(card.synonyms)).classes("text-sm")
            _facts(card)
            if touching:
                _section(f"Links ({len(touching)})")
            for edge in touching[:EDGES_SHOWN]:
                self._edge_row(node_id, edge)
            self._edit(node)

    def _edge_row(self, node_id: str, edge: dict[str, Any]) -> None:
        outgoing = edge["source"] == node_id
        other = self._name(edge["target"] if outgoing else edge["source"])
        predicate = edge["label"] or edge.get("type") or "linked to"
        words = f"→ {predicate} → {other}" if outgoing else f"← {predicate} ← {other}"
        with (
            ui.row()
            .classes("w-full items-center gap-1 text-sm no-wrap")
            .mark("node-edge")
            .props('data-testid="node-edge"')
        ):
            with ui.column().classes("grow gap-0 min-w-0"):
                ui.label(words).classes("break-words")
                evidence = evidence_links(edge["data"])
                if evidence:
                    _links(evidence)
            ui.button(icon="link_off", on_click=lambda e=edge: self.delete_edge(e["id"])).props(
                f'flat dense aria-label="Delete the link {predicate} {other}"'
            )

    def _edit(self, node: dict[str, Any]) -> None:
        editor = self.editor
        node_id = node["id"]
        _section("Edit")
        label = ui.input("Label", value=node["label"]).classes("w-full")
        label.mark("edit-label").props('data-testid="edit-label"')
        kind = ui.input("Type", value=node["type"]).classes("w-full")
        kind.mark("edit-type").props('data-testid="edit-type"')

        @guarded
        async def save() -> None:
            patch = NodePatch(label=label.value, type=kind.value)
            await editor.change(editor.context.graphs.update_node, node_id, patch)
            ui.notify("Saved", type="positive")
            await editor.reload()

        with ui.row().classes("gap-2"):
            ui.button("Save", on_click=save).props("dense").mark("save-node").props(
                'data-testid="save-node"'
            )
            ui.button(
                "Delete node", color="negative", on_click=lambda: self.delete_node(node_id)
            ).props("dense").mark("delete-node").props('data-testid="delete-node"')

    async def show_edge(self, edge: dict[str, Any]) -> None:
        self.selected = None  # node actions must not fall back on a node clicked earlier
        cards = await self._card([edge], edge_card)
        if cards is None:
            return
        card = cards[0]
        self.body.clear()
        with self.body:
            source, target = self._name(edge["source"]), self._name(edge["target"])
            heading = (
                ui.label(f"{source} → {target}")
                .classes("text-lg font-bold break-words")
                .props('role="heading" aria-level="2"')
                .mark("selected-edge")
                .props('data-testid="selected-edge"')
            )
            heading.props["data-edge-id"] = edge["id"]
            _section("Predicate")
            _links([card.identifier])
            _facts(card)
            ui.button(
                "Delete edge", color="negative", on_click=lambda: self.delete_edge(edge["id"])
            ).props("dense").mark("delete-edge").props('data-testid="delete-edge"')

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
        with self.body:
            ui.label(HINT).classes("text-sm")
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
