"""The chat page: messages with streamed answers and tool-call cards, cancel, the mode switch,
slash-command completion, and beside it the artifacts panel (or, in Graph Mode, the graph)."""

from __future__ import annotations

import logging
from typing import Any

from nicegui import ui
from starlette.responses import RedirectResponse

from graphwright.auth.models import Principal
from graphwright.chat.models import ChatRequest, ConversationPatch, Mode
from graphwright.chat.modes import servers_for
from graphwright.chat.running import RunningTurn
from graphwright.chat.slash import dotted, usage
from graphwright.errors import GraphwrightError
from graphwright.miner.tags import GLOBAL_THREAD, tagged_message
from graphwright.web.artifacts_panel import ArtifactsPanel
from graphwright.web.common import (
    MODE_NAMES,
    SIGN_IN,
    allowed,
    frame,
    guarded,
    io,
    markdown,
    model_banner,
    notify_error,
    signed_in,
)
from graphwright.web.context import WebContext
from graphwright.web.graph_editor import GraphEditor
from graphwright.web.miner_pages import TagBar
from graphwright.web.miner_workspace import Workspace
from graphwright.web.turn_view import TurnView

logger = logging.getLogger(__name__)

HINTS_SHOWN = 8
# The page fills the window and no more: the banner, the mode row and the composer take what
# they need, the message list the rest, so the message box is never below the fold.
FILL_WINDOW_CSS = """
.q-page { display: flex; flex-direction: column; }
.q-page > .nicegui-content { flex: 1 1 0; min-height: 0; flex-wrap: nowrap; }
.q-page > .nicegui-content > .q-splitter { flex: 1 1 0; min-height: 0; }
"""
# The message list follows what arrives while its reader is at the bottom; once they scroll up
# it stays where they are and "Jump to latest" brings them back (and following on).
FOLLOW_JS = """
(() => {
  const box = getHtmlElement(%(box)s), jump = getHtmlElement(%(jump)s);
  let follow = true;
  const atBottom = () => box.scrollHeight - box.scrollTop - box.clientHeight < 24;
  const show = () => { jump.style.display = follow || atBottom() ? 'none' : ''; };
  const toEnd = () => { box.scrollTop = box.scrollHeight; };
  box.addEventListener('scroll', () => { follow = atBottom(); show(); });
  const changed = () => { if (follow) toEnd(); show(); };
  // Text and cards arriving are mutations; a message laid out again or the list itself made
  // smaller (the composer growing, the window resized) are only resizes.
  const sizes = new ResizeObserver(changed);
  sizes.observe(box);
  const watchChildren = () => [...box.children].forEach(child => sizes.observe(child));
  new MutationObserver(() => { watchChildren(); changed(); })
    .observe(box, {childList: true, subtree: true, characterData: true});
  watchChildren();
  jump.addEventListener('click', () => { follow = true; toEnd(); show(); });
  window.graphwrightFollow = () => { follow = true; toEnd(); show(); };
  toEnd(); show();
})();
"""


def register(context: WebContext) -> None:
    @ui.page("/c/{conversation_id}", title="Chat · graphwright")
    async def chat_page(conversation_id: str) -> RedirectResponse | None:
        principal = signed_in(context)
        if principal is None:
            return RedirectResponse(SIGN_IN)
        if not allowed(principal, conversation_id):
            frame(context, principal, "Not allowed")
            ui.label("Your token does not give access to this conversation.")
            return None
        try:
            conversation = await io(context.chat.get_conversation, conversation_id)
        except Exception:
            frame(context, principal, "Not found")
            ui.label(f"No conversation '{conversation_id}'.").mark("not-found").props(
                'data-testid="not-found"'
            )
            ui.link("Back to the conversations", "/")
            return None
        frame(context, principal, conversation["title"] or conversation_id)
        ChatPage(context, principal, conversation, known_tags=await _known_tags(context))
        return None


async def _known_tags(context: WebContext) -> list[str]:
    """Tags that already have memory notes, for the tag bar (none if the store cannot open)."""
    try:
        return [tag for tag in await context.miner.memory() if tag != GLOBAL_THREAD]
    except Exception:
        logger.warning("The miner's memory could not be listed for the tag bar", exc_info=True)
        return []


class ChatPage:
    def __init__(
        self,
        context: WebContext,
        principal: Principal,
        conversation: dict[str, Any],
        *,
        known_tags: list[str],
    ) -> None:
        self.context = context
        self.principal = principal
        self.conversation_id: str = conversation["id"]
        self.mode = Mode(conversation["mode"])
        self.tools: dict[str, Any] = {}
        self.running_turn: RunningTurn | None = None  # the turn this page started, while it runs
        ui.add_css(FILL_WINDOW_CSS)
        if notice := context.chat.model_notice:
            model_banner(context, notice)
        with ui.row().classes("w-full items-center gap-3 px-2"):
            ui.label("Mode").classes("text-sm")
            self.mode_switch = (
                ui.toggle(MODE_NAMES, value=self.mode.value, on_change=self._switch_mode)
                .mark("mode-switch")
                .props('data-testid="mode-switch"')
            )
            self.mode_switch.props('aria-label="Conversation mode"')
            if self.mode is Mode.GRAPH:
                ui.link("Open the graph editor full width", f"/c/{self.conversation_id}/graph")
        with ui.splitter(value=42).classes("w-full") as splitter:
            with splitter.before, ui.column().classes("w-full h-full no-wrap p-2"):
                self.workspace = Workspace(context.miner, principal)
                self.tag_bar = TagBar(
                    context.miner,
                    self.workspace,
                    known=known_tags,
                    composer_text=lambda: self.input.value or "",
                    principal=principal,
                )
                self.workspace.card.move(target_index=-1)
                self.messages = ui.column().classes(
                    "w-full grow min-h-0 overflow-auto no-wrap gap-2"
                )
                self.messages.mark("messages").props('data-testid="messages"')
                self.jump = (
                    ui.button("Jump to latest", icon="arrow_downward")
                    .props("rounded dense no-caps")
                    .classes("self-center")
                    .style("display: none")
                    .mark("jump-to-latest")
                    .props('data-testid="jump-to-latest"')
                )
                self._composer()
            with splitter.after, ui.column().classes("w-full p-2"):
                if self.mode is Mode.GRAPH:
                    self.panel: ArtifactsPanel | None = None
                    self.editor: GraphEditor | None = GraphEditor(
                        context, principal, self.conversation_id, compact=True
                    )
                else:
                    self.editor = None
                    self.panel = ArtifactsPanel(
                        context, self.conversation_id, open_in_graph_mode=self.open_in_graph_mode
                    )
        for message in conversation["messages"]:
            self._stored_message(message)
        if self.panel is not None:
            ui.timer(0, self.panel.reload, once=True)
        ui.timer(0.05, self._load_tools, once=True)
        ui.timer(
            0,
            lambda: ui.run_javascript(FOLLOW_JS % {"box": self.messages.id, "jump": self.jump.id}),
            once=True,
        )

    # --- composing ------------------------------------------------------------------------------

    def _composer(self) -> None:
        self.hints = (
            ui.column()
            .classes("w-full gap-0 text-xs")
            .mark("slash-hints")
            .props('data-testid="slash-hints"')
        )
        with ui.row().classes("w-full items-end no-wrap gap-2"):
            self.input = (
                ui.textarea(
                    "Message, or a slash command such as /help (Shift+Enter: new line)",
                    on_change=self._hint,
                )
                .classes("grow")
                .props('aria-label="Message" autofocus autogrow rows=1 input-class="max-h-40"')
                .mark("message-input")
                .props('data-testid="message-input"')
            )
            # Enter alone sends (and no new line is typed); Shift+Enter types a new line.
            self.input.on("keydown.enter.exact.prevent", self.send)
            self.send_button = (
                ui.button(icon="send", on_click=self.send)
                .props('aria-label="Send"')
                .mark("send")
                .props('data-testid="send"')
            )
            self.cancel_button = (
                ui.button(icon="stop", on_click=self.cancel)
                .props('color=negative aria-label="Cancel the running turn"')
                .mark("cancel")
                .props('data-testid="cancel"')
            )
            self.cancel_button.set_visibility(False)

    @guarded
    async def _load_tools(self) -> None:
        manager = self.context.chat.manager
        specs, _failures = await manager.tools(servers_for(self.mode, manager.connections))
        self.tools = {dotted(spec): spec for spec in specs}
        self._hint()  # for what was typed while the tools were loading

    def _hint(self) -> None:
        text = (self.input.value or "").strip()
        self.hints.clear()
        if not text.startswith("/"):
            return
        head = text[1:].split(" ", 1)[0]
        matches = [spec for name, spec in sorted(self.tools.items()) if name.startswith(head)]
        with self.hints:
            if "/help".startswith(text):
                ui.label("/help: list every command you can run here")
            for spec in matches[:HINTS_SHOWN]:
                summary = spec.description.strip().splitlines()[0] if spec.description else ""
                ui.label(f"{usage(spec)}  {summary}").classes("font-mono")

    # --- a turn ---------------------------------------------------------------------------------

    @guarded
    async def send(self) -> None:
        text = (self.input.value or "").strip()
        if not text:
            return
        tags = list(self.tag_bar.selected)
        request = ChatRequest(conversation_id=self.conversation_id, message=text, domain_tags=tags)
        try:
            handle = await self.context.chat.start_turn(request, actor=self.principal.actor)
        except GraphwrightError as exc:
            notify_error(str(exc))
            return
        self.input.value = ""
        self.hints.clear()
        ui.run_javascript("window.graphwrightFollow && window.graphwrightFollow()")
        with self.messages:
            self._bubble("user", tagged_message(text, tags))
            turn = TurnView(self)
        self.cancel_button.set_visibility(True)
        self.send_button.disable()  # one turn at a time; the stop button cancels it
        self.running_turn = handle
        try:
            async for event in handle.events():
                turn.on_event(event.type, event.data)
        finally:
            self.running_turn = None
            self.cancel_button.set_visibility(False)
            self.send_button.enable()
        if self.panel is not None:
            await self.panel.reload()

    @guarded
    async def cancel(self) -> None:
        # This page's own turn only: a late click must not stop a turn another client started.
        turn = self.running_turn
        cancelled = turn is not None and await self.context.chat.cancel(self.conversation_id, turn)
        ui.notify("Cancelled" if cancelled else "No turn was running")

    @guarded
    async def _switch_mode(self) -> None:
        wanted = Mode(self.mode_switch.value)
        if wanted is self.mode:
            return
        patch = ConversationPatch(mode=wanted)
        try:
            await io(
                self.context.chat.update_conversation,
                self.conversation_id,
                patch,
                actor=self.principal.actor,
            )
        except Exception:
            self.mode_switch.set_value(self.mode.value)
            raise
        ui.navigate.to(f"/c/{self.conversation_id}")

    async def open_in_graph_mode(self) -> None:
        if self.mode is not Mode.GRAPH:
            await io(
                self.context.chat.update_conversation,
                self.conversation_id,
                ConversationPatch(mode=Mode.GRAPH),
                actor=self.principal.actor,
            )
        ui.navigate.to(f"/c/{self.conversation_id}/graph")

    async def open_artifact(self, artifact_id: str, version: int | None) -> None:
        if self.panel is None:
            ui.notify("Artifacts are shown in normal mode; switch the mode to see them")
            return
        await self.panel.reload(select=artifact_id, version=version)

    # --- stored messages ------------------------------------------------------------------------

    def _bubble(self, role: str, text: str) -> ui.markdown:
        user = role == "user"
        with (
            ui.card()
            .classes("max-w-[95%] " + ("self-end bg-blue-50" if user else "self-start bg-gray-50"))
            .props("flat bordered")
            .mark(f"message-{role}")
            .props(f'data-testid="message-{role}"')
        ):
            ui.label("You" if user else "Assistant").classes("text-xs font-bold text-gray-700")
            return markdown(text).classes("w-full")

    def _stored_message(self, message: dict[str, Any]) -> None:
        with self.messages:
            if message["role"] == "user":
                self._bubble("user", message["content"])
                return
            turn = TurnView(self)
            for call in message["toolCalls"]:
                card = turn.call_card(call["callId"], call["tool"], call["arguments"])
                card.finish(
                    is_error=call["isError"],
                    seconds=call["durationMs"] / 1000,
                    text=call["result"],
                )
            turn.set_text(message["content"])
            for artifact in message["artifacts"]:
                turn.artifact_link(artifact, artifact.get("version"))
            if message["status"] != "complete":
                turn.status.text = message["status"]
