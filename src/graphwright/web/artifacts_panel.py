"""The artifacts panel beside the chat (seed 003): the conversation's artifacts, each at any of
its versions, with what changed between two versions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from nicegui import ui

from graphwright.artifacts.service import GetArtifactInput, ListArtifactsInput
from graphwright.core.artifacts import to_chat
from graphwright.errors import InvalidInput
from graphwright.web.artifact_views import raw, show_artifact
from graphwright.web.common import code, guarded, io
from graphwright.web.context import WebContext

KIND_NAMES = {
    "application/vnd.knowledge-graph": "Knowledge graph",
    "application/vnd.bibliography": "Bibliography",
    "text/markdown": "Document",
}


class ArtifactsPanel:
    def __init__(
        self,
        context: WebContext,
        conversation_id: str,
        *,
        open_in_graph_mode: Callable[[], Awaitable[None]],
    ) -> None:
        self.context = context
        self.conversation_id = conversation_id
        self.open_in_graph_mode = open_in_graph_mode
        self.summaries: dict[str, Any] = {}
        with (
            ui.column()
            .classes("w-full gap-2")
            .mark("artifacts-panel")
            .props('data-testid="artifacts-panel"') as self.root
        ):
            ui.label("Artifacts").classes("text-lg font-bold")
            with ui.row().classes("w-full items-end gap-2"):
                self.picker = (
                    ui.select({}, label="Artifact", on_change=self._picked)
                    .classes("grow")
                    .mark("artifact-picker")
                    .props('data-testid="artifact-picker"')
                )
                self.version = (
                    ui.select({}, label="Version", on_change=self._show)
                    .mark("artifact-version")
                    .props('data-testid="artifact-version"')
                )
                self.compare_with = (
                    ui.select({}, label="Compare with", clearable=True)
                    .mark("artifact-compare")
                    .props('data-testid="artifact-compare"')
                )
                ui.button("Compare", icon="difference", on_click=self._compare).props(
                    "outline"
                ).mark("artifact-compare-go").props('data-testid="artifact-compare-go"')
            self.body = ui.column().classes("w-full")

    @guarded
    async def reload(self, select: str | None = None, version: int | None = None) -> None:
        summaries = await io(
            self.context.artifacts.list_artifacts,
            ListArtifactsInput(),
            context_id=self.conversation_id,
        )
        self.summaries = {s.artifact_id: s for s in summaries}
        self.picker.options = {s.artifact_id: _picker_name(s) for s in summaries}
        self.picker.update()
        if not summaries:
            self.body.clear()
            with self.body:
                ui.label(
                    "No artifacts yet. Tools that return graphs, references or documents "
                    "add them here."
                ).classes("text-gray-700")
            return
        chosen = select if select in self.summaries else self.picker.value
        if chosen not in self.summaries:
            chosen = summaries[0].artifact_id
        await self.open(chosen, version)

    @guarded
    async def open(self, artifact_id: str, version: int | None = None) -> None:
        versions = await io(
            self.context.artifacts.versions, artifact_id, context_id=self.conversation_id
        )
        numbers = [v.version for v in versions]
        labels = {v.version: f"v{v.version} · {v.created_at:%Y-%m-%d %H:%M}" for v in versions}
        self.version.set_options(labels, value=None)
        self.compare_with.set_options(dict(labels), value=None)
        self.picker.set_value(artifact_id)
        self.version.set_value(
            version if version in numbers else (numbers[-1] if numbers else None)
        )
        await self._show()

    async def _picked(self) -> None:
        if self.picker.value and self.picker.value != getattr(self, "_open_id", None):
            await self.open(self.picker.value)

    @guarded
    async def _show(self) -> None:
        artifact_id, version = self.picker.value, self.version.value
        if not artifact_id or version is None:
            return
        if (artifact_id, version) == getattr(self, "_shown", None):
            return
        self._open_id, self._shown = artifact_id, (artifact_id, version)
        stored = await io(
            self.context.artifacts.get_artifact,
            GetArtifactInput(artifact_id=artifact_id, version=version),
            context_id=self.conversation_id,
        )
        self.body.clear()
        with self.body:
            ui.label(stored.artifact.name or artifact_id).classes("text-base font-medium")
            try:
                chat = to_chat(stored.artifact)
            except InvalidInput:
                code(stored.artifact.model_dump_json(indent=2, by_alias=True)).classes("w-full")
                return
            if chat.type.startswith("text/") or chat.type.startswith("application/"):
                show_artifact(chat, open_in_graph_mode=self.open_in_graph_mode)
            else:
                raw(chat)

    @guarded
    async def _compare(self) -> None:
        artifact_id, version, other = (
            self.picker.value,
            self.version.value,
            self.compare_with.value,
        )
        if not artifact_id or version is None or other is None:
            ui.notify("Pick a version and a version to compare it with")
            return
        low, high = sorted((version, other))
        found = await io(
            self.context.artifacts.compare,
            artifact_id,
            low,
            high,
            context_id=self.conversation_id,
        )
        with (
            ui.dialog() as dialog,
            ui.card()
            .classes("w-[48rem] max-w-full")
            .mark("artifact-diff")
            .props('data-testid="artifact-diff"'),
        ):
            ui.label(f"What changed from v{low} to v{high}").classes("text-lg font-bold")
            show_diff(found)
            ui.button("Close", on_click=dialog.close)
        dialog.open()


def show_diff(found: dict[str, Any]) -> None:
    if found["kind"] == "graph":
        for key, title in (
            ("nodesAdded", "Nodes added"),
            ("nodesRemoved", "Nodes removed"),
            ("linksAdded", "Links added"),
            ("linksRemoved", "Links removed"),
        ):
            items = found[key]
            ui.label(f"{title}: {len(items)}").classes("font-medium")
            for item in items[:100]:
                text = (
                    f"{item.get('name') or item['id']} ({item['id']})"
                    if isinstance(item, dict)
                    else f"{item[0]} —{item[1]}→ {item[2]}"
                )
                ui.label(text).classes("text-sm")
    elif found["kind"] == "bibliography":
        for key, title in (("added", "References added"), ("removed", "References removed")):
            ui.label(f"{title}: {len(found[key])}").classes("font-medium")
            for citation in found[key][:100]:
                ui.label(str(citation.get("title") or citation.get("pmid"))).classes("text-sm")
    else:
        code("\n".join(found["lines"]) or "(no change)").classes("w-full")


def _picker_name(summary: Any) -> str:
    """ "Kind: name", less the kind when the name already says it ("Knowledge graph: TP53")."""
    kind = KIND_NAMES.get(summary.media_type or "", summary.media_type or "Artifact")
    name = summary.name or ""
    return name if name.lower().startswith(kind.lower()) else f"{kind}: {name}"
