"""One assistant message on the chat page as it streams: its text, a card per tool call (running,
done, failed or cut short) with arguments and result, errors, and links to its artifacts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from nicegui import ui

from graphwright.artifacts.collectors import without_pointers
from graphwright.web.common import MODE_NAMES, code, markdown

if TYPE_CHECKING:
    from graphwright.web.chat_page import ChatPage

RESULT_PREVIEW = 1500
MINER_TOOL = "knowledge-miner"


class ToolCard:
    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.tool = tool
        self.finished = False
        with (
            ui.expansion(f"{tool} · running", icon="build")
            .classes("w-full border rounded")
            .mark("tool-call")
            .props('data-testid="tool-call"') as self.expansion
        ):
            ui.label("Arguments").classes("text-xs font-bold")
            code(orjson.dumps(arguments, option=orjson.OPT_INDENT_2).decode()).classes(
                "w-full text-xs"
            )
            self.result = ui.column().classes("w-full")

    def finish(self, *, is_error: bool, seconds: float, text: str) -> None:
        self.finished = True
        state = "failed" if is_error else "done"
        self.expansion.text = f"{self.tool} · {state} in {seconds:.2f} s"
        self.expansion.props(f"icon={'error' if is_error else 'check_circle'}")
        if is_error:
            self.expansion.classes("border-red-600")
        with self.result:
            ui.label("Error" if is_error else "Result").classes("text-xs font-bold")
            text = without_pointers(text)
            code(text[:RESULT_PREVIEW] + ("…" if len(text) > RESULT_PREVIEW else "")).classes(
                "w-full text-xs"
            )

    def cut_short(self, status: str) -> None:
        """The turn ended (`status`: cancelled, failed...) before this call answered."""
        self.finished = True
        self.expansion.text = f"{self.tool} · {status}"
        self.expansion.props("icon=block")


class TurnView:
    """One assistant message as it streams: text, tool-call cards, errors and artifact links."""

    def __init__(self, page: ChatPage) -> None:
        self.page = page
        self.text = ""
        self.shown_errors: list[str] = []  # in the error list, so not again in the text
        self.cards: dict[str, ToolCard] = {}
        with (
            ui.card()
            .classes("max-w-[95%] self-start bg-gray-50")
            .props("flat bordered")
            .mark("message-assistant")
            .props('data-testid="message-assistant"')
        ):
            with ui.row().classes("items-center gap-2"):
                ui.label("Assistant").classes("text-xs font-bold text-gray-700")
                self.status = (
                    ui.label()
                    .classes("text-xs text-gray-600")
                    .mark("turn-status")
                    .props('data-testid="turn-status"')
                )
            self.calls = ui.column().classes("w-full gap-1")
            self.body = (
                markdown("")
                .classes("w-full")
                .mark("assistant-text")
                .props('data-testid="assistant-text"')
            )
            self.errors = ui.column().classes("w-full gap-0")
            self.links = ui.row().classes("gap-1")

    def set_text(self, text: str) -> None:
        self.text = text
        shown = without_pointers(text)
        for error in self.shown_errors:
            shown = shown.replace(error, "")
        self.body.set_content(shown)

    def call_card(self, call_id: str, tool: str, arguments: dict[str, Any]) -> ToolCard:
        with self.calls:
            card = ToolCard(tool, arguments)
        self.cards[call_id] = card
        return card

    def artifact_link(self, artifact: dict[str, Any], version: int | None) -> None:
        title = artifact.get("title") or artifact.get("type") or "artifact"
        with self.links:
            ui.button(
                title,
                icon="description",
                on_click=lambda: self.page.open_artifact(artifact["artifactId"], version),
            ).props("outline dense no-caps").mark("artifact-link").props(
                'data-testid="artifact-link"'
            )

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "status":
            self.status.text = "working…"
        elif kind == "token":
            self.set_text(self.text + data.get("text", ""))
        elif kind == "tool_call":
            self.call_card(data["callId"], data["tool"], data.get("arguments", {}))
            if data["tool"].endswith(MINER_TOOL):
                self.page.workspace.watch_new_run()
        elif kind == "tool_result":
            card = self.cards.get(data["callId"])
            if card is not None:
                card.finish(
                    is_error=data["isError"], seconds=data["seconds"], text=data.get("text", "")
                )
        elif kind == "artifact":
            self.artifact_link(data, None)
        elif kind == "graph_updated":
            self.status.text = f"graph now at version {data['version']}"
        elif kind == "error":
            message = data.get("message", "error")
            self.shown_errors.append(message)
            self.set_text(self.text)
            with self.errors:
                ui.label(_in_page_words(data) or message).classes("text-sm text-red-800").mark(
                    "turn-error"
                ).props('data-testid="turn-error"')
        elif kind == "done":
            self.status.text = "" if data["status"] == "complete" else data["status"]
            for card in self.cards.values():
                if not card.finished:
                    card.cut_short(data["status"])
            if data["content"] and not self.text:
                self.set_text(data["content"])


def _in_page_words(error: dict[str, Any]) -> str | None:
    """A refusal for a tool of the other mode, pointing at this page's Mode switch (the
    service's words name the REST call, which fits API callers)."""
    mode = error.get("offeredIn")
    if mode not in MODE_NAMES or not error.get("tool"):
        return None
    here = MODE_NAMES["normal" if mode == "graph_mode" else "graph_mode"]
    return (
        f"/{error['tool']} is not offered in {here}; switch to {MODE_NAMES[mode]} with the Mode "
        "switch above, then send it again."
    )
