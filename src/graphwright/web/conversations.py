"""The home page: conversations, to search, create, rename, delete and open."""

from __future__ import annotations

from typing import Any

from nicegui import ui
from starlette.responses import RedirectResponse

from graphwright.auth.models import Principal
from graphwright.chat.models import ConversationCreate, ConversationPatch, Mode
from graphwright.web.common import (
    MODE_NAMES,
    SIGN_IN,
    frame,
    guarded,
    io,
    model_banner,
    signed_in,
)
from graphwright.web.context import WebContext

PAGE_SIZE = 200


def register(context: WebContext) -> None:
    @ui.page("/", title="Conversations · graphwright")
    async def conversations_page() -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        frame(context, principal, "Conversations")
        ConversationList(context, principal)
        return None


class ConversationList:
    def __init__(self, context: WebContext, principal: Principal) -> None:
        self.context = context
        self.principal = principal
        with ui.column().classes("w-full max-w-5xl mx-auto gap-3 p-4"):
            if notice := context.chat.model_notice:
                model_banner(context, notice)
            with ui.row().classes("w-full items-end gap-2"):
                self.search = (
                    ui.input("Search conversations", on_change=self.refresh)
                    .props('clearable debounce=250 aria-label="Search conversations"')
                    .classes("grow")
                    .mark("search")
                    .props('data-testid="search"')
                )
                self.title = (
                    ui.input("Title of a new conversation")
                    .mark("new-title")
                    .props('data-testid="new-title"')
                )
                self.mode = (
                    ui.select(MODE_NAMES, value=Mode.NORMAL.value, label="Mode")
                    .mark("new-mode")
                    .props('data-testid="new-mode"')
                )
                ui.button("New conversation", icon="add", on_click=self.create).mark(
                    "create"
                ).props('data-testid="create"')
            self.rows = ui.column().classes("w-full gap-1")
        ui.timer(0, self.refresh, once=True)

    @guarded
    async def refresh(self, *_: Any) -> None:
        text = (self.search.value or "").strip() or None
        found = await io(
            self.context.chat.list_conversations,
            limit=PAGE_SIZE,
            only=self.principal.conversation_id,
            text=text,
        )
        self.rows.clear()
        with self.rows:
            if not found:
                ui.label("No conversations yet." if text is None else "No conversation matches.")
            for conversation in found:
                self._row(conversation)

    def _row(self, conversation: dict[str, Any]) -> None:
        cid = conversation["id"]
        card = (
            ui.card()
            .classes("w-full")
            .props("flat bordered")
            .mark(f"conversation-{cid}")
            .props(f'data-testid="conversation-{cid}"')
        )
        with card, ui.row().classes("w-full items-center gap-3 no-wrap"):
            ui.link(conversation["title"] or cid, f"/c/{cid}").props(
                'data-testid="conversation-title"'
            ).classes("text-base font-medium grow truncate")
            mode = conversation["mode"]
            ui.badge(MODE_NAMES.get(mode, mode)).props(
                f"color={'deep-purple' if mode == Mode.GRAPH.value else 'blue-grey-8'}"
            )
            ui.label(conversation["updatedAt"][:16].replace("T", " ")).classes(
                "text-xs text-gray-600"
            )
            ui.button(icon="edit", on_click=lambda c=conversation: self.rename(c)).props(
                f'flat dense aria-label="Rename {conversation["title"] or cid}"'
            ).mark("rename").props('data-testid="rename"')
            ui.button(icon="delete", on_click=lambda c=conversation: self.delete(c)).props(
                f'flat dense color=negative aria-label="Delete {conversation["title"] or cid}"'
            ).mark("delete").props('data-testid="delete"')

    @guarded
    async def create(self) -> None:
        request = ConversationCreate(
            title=(self.title.value or "").strip() or None, mode=Mode(self.mode.value)
        )
        created = await io(
            self.context.chat.create_conversation, request, actor=self.principal.actor
        )
        ui.navigate.to(f"/c/{created['id']}")

    @guarded
    async def rename(self, conversation: dict[str, Any]) -> None:
        with ui.dialog() as dialog, ui.card():
            ui.label("Rename conversation").classes("font-bold")
            name = (
                ui.input("Title", value=conversation["title"] or "")
                .mark("rename-title")
                .props('data-testid="rename-title"')
            )
            name.on("keydown.enter", lambda: dialog.submit(name.value))  # as Save
            with ui.row():
                ui.button("Save", on_click=lambda: dialog.submit(name.value)).mark(
                    "rename-save"
                ).props('data-testid="rename-save"')
                ui.button("Cancel", on_click=lambda: dialog.submit(None)).props("flat")
        title = await dialog
        if title is None or not title.strip():
            return
        patch = ConversationPatch(title=title.strip())
        await io(
            self.context.chat.update_conversation,
            conversation["id"],
            patch,
            actor=self.principal.actor,
        )
        ui.notify("Renamed", type="positive")
        await self.refresh()

    @guarded
    async def delete(self, conversation: dict[str, Any]) -> None:
        with ui.dialog() as dialog, ui.card():
            ui.label(
                f"Delete '{conversation['title'] or conversation['id']}' with its messages, "
                "artifacts and graph? This cannot be undone."
            )
            with ui.row():
                ui.button("Delete", color="negative", on_click=lambda: dialog.submit(True)).mark(
                    "delete-confirm"
                ).props('data-testid="delete-confirm"')
                ui.button("Keep it", on_click=lambda: dialog.submit(False)).props("flat")
        if not await dialog:
            return
        await io(self.context.chat.delete_conversation, conversation["id"])
        ui.notify("Deleted", type="positive")
        await self.refresh()
