"""The history tab of the Graph Mode editor: changesets with actor and time, view a version,
diff two versions, revert."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nicegui import ui

from graphwright.graphmode.history_words import diff_sections
from graphwright.graphmode.schemas import ChangesetSummary
from graphwright.web.common import guarded, io, whole_number

if TYPE_CHECKING:
    from graphwright.web.graph_editor import GraphEditor

SHOWN = 50


class HistoryPanel:
    def __init__(self, editor: GraphEditor) -> None:
        self.editor = editor
        self.stale = True
        with ui.row().classes("w-full items-end gap-2"):
            self.diff_from = whole_number("Diff from version", "diff-from")
            self.diff_to = whole_number("to version", "diff-to")
            ui.button("Diff", icon="difference", on_click=self.diff).mark("diff").props(
                'data-testid="diff"'
            )
        self.timeline = (
            ui.column().classes("w-full gap-1").mark("history").props('data-testid="history"')
        )

    async def reload(self) -> None:
        editor = self.editor
        self.stale = False
        try:
            page = await io(editor.context.graphs.history, editor.conversation_id, limit=SHOWN)
        except Exception:
            page = None
        self.timeline.clear()
        with self.timeline:
            if page is None or not page.items:
                ui.label("No changes yet.").classes("text-sm")
                return
            for group in grouped(page.items):
                with ui.column().classes("w-full gap-0").props('data-testid="history-entry"'):
                    self._row(group[0])
                    with ui.column().classes("w-full gap-0 pl-8 border-l-2 border-gray-300"):
                        for item in group[1:]:
                            self._row(item)

    def _row(self, item: ChangesetSummary) -> None:
        with (
            ui.row()
            .classes("w-full items-center gap-2 text-sm no-wrap")
            .mark(f"version-{item.version}")
            .props(f'data-testid="version-{item.version}"')
        ):
            ui.label(f"v{item.version}").classes("font-mono font-bold w-12")
            undone = " (undone)" if item.undo_state == "undone" else ""
            ui.label(f"{item.description}{undone}").classes("grow break-words").props(
                'data-testid="change-words"'
            )
            ui.label(f"{item.actor} · {item.created_at:%Y-%m-%d %H:%M:%S}").classes("text-gray-700")
            ui.button("View", on_click=lambda v=item.version: self.view(v)).props(
                "flat dense"
            ).mark("view-version").props('data-testid="view-version"')
            ui.button("Revert to", on_click=lambda v=item.version: self.revert(v)).props(
                "flat dense"
            ).mark("revert-version").props('data-testid="revert-version"')

    @guarded
    async def view(self, version: int) -> None:
        await self.editor.view_version(version)

    @guarded
    async def revert(self, version: int) -> None:
        editor = self.editor
        _, new_version = await editor.change(editor.context.graphs.revert, version)
        ui.notify(f"The graph is back to version {version} (now version {new_version})")
        await editor.live()

    @guarded
    async def diff(self) -> None:
        if self.diff_from.value is None or self.diff_to.value is None:
            ui.notify("Give both versions")
            return
        editor = self.editor
        found = await io(
            editor.context.graphs.diff,
            editor.conversation_id,
            int(self.diff_from.value),
            int(self.diff_to.value),
        )
        with (
            ui.dialog() as dialog,
            ui.card()
            .classes("w-[40rem] max-w-full")
            .mark("graph-diff")
            .props('data-testid="graph-diff"'),
        ):
            ui.label(f"From version {found.from_version} to {found.to_version}").classes(
                "text-lg font-bold"
            )
            for title, items in diff_sections(found):
                ui.label(f"{title}: {len(items)}").classes("font-medium")
                for line in items[:100]:
                    ui.label(line).classes("text-sm")
            ui.button("Close", on_click=dialog.close)
        dialog.open()


def grouped(items: list[ChangesetSummary]) -> list[list[ChangesetSummary]]:
    """The page's changes as timeline entries, newest first: each change with the undos and
    redos of it (newest first) under it, the entry placed by its newest member."""
    shown = {item.version for item in items}
    groups: dict[int, list[ChangesetSummary]] = {}
    for item in sorted(items, key=lambda i: i.version):
        root = item.target_version if item.target_version in shown else item.version
        groups.setdefault(root, []).append(item)
    entries = [[group[0], *reversed(group[1:])] for group in groups.values()]
    return sorted(entries, key=lambda g: -max(i.version for i in g))
