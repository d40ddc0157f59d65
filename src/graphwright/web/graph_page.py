"""The Graph Mode editor page of a conversation, full width."""

from __future__ import annotations

import asyncio
import contextlib

from nicegui import ui
from starlette.responses import RedirectResponse

from graphwright.errors import GraphwrightError
from graphwright.web.common import SIGN_IN, allowed, frame, signed_in
from graphwright.web.context import WebContext
from graphwright.web.graph_editor import GraphEditor


def register(context: WebContext) -> None:
    @ui.page("/c/{conversation_id}/graph", title="Graph · graphwright")
    async def graph_page(conversation_id: str) -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        title = conversation_id
        if allowed(principal, conversation_id):  # named by the conversation's title
            with contextlib.suppress(GraphwrightError):
                found = await asyncio.to_thread(context.chat.get_conversation, conversation_id)
                title = found["title"] or title
        frame(context, principal, f"Graph: {title}")
        if not allowed(principal, conversation_id):
            ui.label("Your token does not give access to this conversation.")
            return None
        with ui.column().classes("w-full p-2"):
            ui.link("Back to the chat", f"/c/{conversation_id}")
            GraphEditor(context, principal, conversation_id)
        return None
