"""The turn loop: model, tool calls (in parallel), results, model again, until it answers.

A turn stops when the model answers without tools, after `max_steps` model calls, or when the
model repeats a call it already made with the same arguments. With no model, a message of slash
commands runs them in order, and any other message gets a reply saying how to enable one.

Each tool result is read in a worker thread (`ToolResults`, through the artifacts room's
collector): its model content goes back to the model, its drafts into this turn's
`TurnArtifacts`, which `finish()` turns into the chat-view artifacts of the response. In Graph
Mode no artifact is made: the graph tools write to the conversation's graph, and each step that
changes the graph's version emits `graph_updated`.

Events go out through `emit(type, data)`: status, token, tool_call, tool_result, artifact,
graph_updated, error (`done` is the service's, once the turn is stored).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_chunk_to_message,
)

from graphwright.artifacts.turn import TurnArtifacts
from graphwright.chat.mcp_manager import McpManager, ToolSpec, describe_exception
from graphwright.chat.models import Mode
from graphwright.chat.modes import (
    GRAPH_SERVER,
    MODE_HEADINGS,
    mode_hint,
    model_facing_schema,
    orchestrated,
    other_mode,
    redacted,
    servers_for,
)
from graphwright.chat.replies import storable_reply
from graphwright.chat.slash import (
    command_lines,
    dotted,
    help_text,
    is_slash_message,
    parse,
    servers_named,
)
from graphwright.chat.tool_results import ToolResults
from graphwright.core.artifacts import ChatArtifact
from graphwright.core.nul import storable_text
from graphwright.errors import InvalidInput
from graphwright.llm import NO_MODEL
from graphwright.miner.tags import tagged_message

MAX_STEPS = 8
PREVIEW_CHARS = 2000

Emit = Callable[[str, dict[str, Any]], None]

SYSTEM_PROMPT = (
    "You are graphwright's research assistant. Use the tools to gather biomedical knowledge. "
    "Knowledge graphs, bibliographies and documents that tools return are shown to the user as "
    "artifacts, merged across calls, so do not copy them into your answer: summarise what they "
    "show and cite PMIDs where you have them."
)
GRAPH_MODE_PROMPT = (
    "You are in Graph Mode: you and the user build one persistent knowledge graph together, and "
    "the graph tools are your only tools. Every change is saved and versioned (undo is a tool). "
    "Read the graph with getGraphState or searchNodes before editing it, and say what you changed."
)


@dataclass(slots=True)
class ToolCallLog:
    call_id: str
    step: int
    server: str
    tool: str
    arguments: dict[str, Any]
    result_text: str
    is_error: bool
    seconds: float


@dataclass(slots=True)
class TurnContext:
    conversation_id: str
    mode: Mode
    message: str
    history: list[BaseMessage] = field(default_factory=list)
    artifacts: TurnArtifacts | None = None  # None in Graph Mode, where artifacts are suppressed
    database_context: dict[str, Any] | None = None
    graph_version: Callable[[], Awaitable[int]] | None = None
    max_steps: int = MAX_STEPS
    # The knowledge-miner tags the person chose: the model sees `#tag ...` before the text.
    domain_tags: list[str] = field(default_factory=list)


class Turn:
    """One turn. Its fields hold what has happened so far, so a cancelled turn can be stored."""

    def __init__(
        self,
        context: TurnContext,
        *,
        manager: McpManager,
        model: BaseChatModel | None,
        emit: Emit,
        model_notice: str = NO_MODEL,
    ) -> None:
        self.context = context
        self.manager = manager
        self.model = model
        self.model_notice = model_notice  # said in place of an answer when there is no model
        self.emit = emit
        self.text_parts: list[str] = []
        self.calls: list[ToolCallLog] = []
        self.artifacts: list[ChatArtifact] = []
        self.graph_version: int | None = None
        self.stop_reason = ""
        self._results = ToolResults(context.artifacts)
        self._owned_values: dict[str, Any] = {}
        if context.database_context is not None:
            self._owned_values[GRAPH_SERVER] = context.database_context
        self._seen: set[tuple[str, bytes]] = set()
        self._finished = False

    @property
    def text(self) -> str:
        return "\n\n".join(part.strip() for part in self.text_parts if part.strip())

    @property
    def graph_mode(self) -> bool:
        return self.context.mode is Mode.GRAPH

    async def run(self) -> None:
        self.emit("status", {"state": "started", "mode": self.context.mode.value})
        lines = command_lines(self.context.message)
        commands = [line for line in lines if line.startswith("/")]
        runs_commands = is_slash_message(self.context.message) or (
            self.model is None and bool(commands)
        )
        has_words = not runs_commands or len(commands) < len(lines)
        answering = self.model if has_words else None  # the model, where it has words to answer
        tools = await self._start_tools(
            self._servers_needed(commands, runs_model=answering is not None)
        )
        if self.graph_mode:
            self.graph_version = await self._read_graph_version()
        if runs_commands:
            await self._run_commands(tools, commands)
        if answering is not None:
            await self._run_model(answering, tools)
        elif has_words:  # words, alone or among commands, and no model to answer them
            self._say(self.model_notice)
            if not runs_commands:
                self.stop_reason = "no_model"
        await self.finish()

    def _servers_needed(self, commands: list[str], *, runs_model: bool) -> list[str]:
        """The mode's servers the turn starts: every one when the model answers (it sees every
        tool), else those the commands name (none for words alone). Each server is a process of
        its own, seconds of CPU to start on a busy machine."""
        servers = servers_for(self.context.mode, self.manager.connections)
        return servers if runs_model else servers_named(commands, servers)

    async def _start_tools(self, servers: list[str]) -> list[ToolSpec]:
        """The tools of `servers`, each started if it is not running; one that cannot start is
        an `error` event."""
        tools, failures = await self.manager.tools(servers)
        for server, reason in failures.items():
            self.emit("error", {"server": server, "message": reason})
        return tools

    async def finish(self) -> None:
        """Settle the turn's artifacts (in a worker thread) and announce them, once; also called
        for a cancelled or failed turn. A cancel landing while they settle leaves the turn
        unfinished, so the caller's own `finish` settles again and gets the same artifacts
        (`settle` merges once); a failure to settle fails the turn, with nothing to announce."""
        if self._finished:
            return
        try:
            artifacts = await asyncio.to_thread(self._results.settle)
        except Exception:
            self._finished = True
            raise
        self._finished = True
        self.artifacts = artifacts
        for artifact in artifacts:
            self.emit("artifact", artifact.to_json_dict())

    def _say(self, text: str) -> None:
        self.text_parts.append(text)
        self.emit("token", {"text": text})

    # --- slash commands -------------------------------------------------------------------------

    async def _run_commands(self, tools: list[ToolSpec], lines: list[str]) -> None:
        self.stop_reason = "commands"
        by_name = {dotted(spec): spec for spec in tools}
        turn_id = uuid.uuid4().hex[:8]  # call ids stay unique across turns, as the model's are
        for number, line in enumerate(lines, start=1):
            try:
                call = parse(line, by_name)
            except InvalidInput as exc:
                head = line[1:].split(" ", 1)[0]
                hint = mode_hint(head, self.context.mode, by_name, self.manager.connections)
                message = hint or str(exc)
                error: dict[str, Any] = {"command": line, "message": message}
                if hint:  # a page can word the switch its own way (the UI has a Mode switch)
                    error |= {"tool": head, "offeredIn": other_mode(self.context.mode).value}
                self.emit("error", error)
                self._say(f"{line}\n{message}")
                continue
            if call.spec is None:
                await self._help(tools)
                continue
            call_id = f"cmd-{turn_id}-{number}"
            text, _ = await self._execute(number, call_id, call.spec, call.arguments)
            self._say(f"{line}\n{text}")
            await self._check_graph()

    async def _help(self, tools: list[ToolSpec]) -> None:
        other = other_mode(self.context.mode)
        other_tools, _ = await self.manager.tools(servers_for(other, self.manager.connections))
        heading = MODE_HEADINGS[other]
        note = self.model_notice if self.model is None else None
        self._say(help_text(tools, note=note, other_tools=other_tools, other_heading=heading))

    # --- the model loop -------------------------------------------------------------------------

    async def _run_model(self, model: BaseChatModel, tools: list[ToolSpec]) -> None:
        specs = {spec.qualified: spec for spec in tools}
        bound = model.bind_tools([_openai_tool(spec) for spec in tools]) if tools else model
        prompt = GRAPH_MODE_PROMPT if self.graph_mode else SYSTEM_PROMPT
        messages: list[BaseMessage] = [
            SystemMessage(prompt),
            *self.context.history,
            HumanMessage(tagged_message(self.context.message, self.context.domain_tags)),
        ]
        for step in range(1, self.context.max_steps + 1):
            self.emit("status", {"state": "thinking", "step": step})
            try:
                reply = await self._ask(bound, messages)
            except Exception as exc:
                message = f"The model could not answer: {describe_exception(exc)}"
                self.emit("error", {"message": message})
                self._say(message)
                self.stop_reason = "model_error"
                return
            messages.append(reply)
            if not reply.tool_calls and not reply.invalid_tool_calls:
                self.stop_reason = "answered"
                return
            results, repeated = await self._run_step(step, reply, specs)
            messages.extend(results)
            await self._check_graph()
            if repeated:
                self.stop_reason = "repeated_call"
                self._say(
                    f"(Stopped: the model asked for {repeated} again with the same arguments.)"
                )
                return
        self.stop_reason = "max_steps"
        self._say(f"(Stopped after {self.context.max_steps} steps, the most a turn may take.)")

    async def _ask(self, model: Any, messages: list[BaseMessage]) -> AIMessage:
        reply: AIMessageChunk | None = None
        async for chunk in model.astream(messages):
            if chunk.text:
                self.emit("token", {"text": storable_text(chunk.text)})
            reply = chunk if reply is None else reply + chunk
        if reply is None:
            return AIMessage(content="")
        message = message_chunk_to_message(reply)
        assert isinstance(message, AIMessage)
        message = storable_reply(message)
        if message.text.strip():
            self.text_parts.append(message.text)
        return message

    async def _run_step(
        self, step: int, reply: AIMessage, specs: dict[str, ToolSpec]
    ) -> tuple[list[ToolMessage], str | None]:
        """Run the step's new calls in parallel; answer every call id, in the model's order."""
        answers: dict[str, Awaitable[tuple[str, bool]]] = {}
        repeated: str | None = None
        for call in reply.tool_calls:
            call_id = call.get("id") or f"call-{step}-{len(answers)}"
            spec = specs.get(call["name"])
            if spec is None:
                answers[call_id] = self._refuse(call_id, call["name"], specs)
                continue
            key = (call["name"], orjson.dumps(call["args"], option=orjson.OPT_SORT_KEYS))
            if key in self._seen:
                repeated = repeated or dotted(spec)
                answers[call_id] = _ready("Not run again: the same call was made before.", False)
                continue
            self._seen.add(key)
            answers[call_id] = self._execute(step, call_id, spec, dict(call["args"]))
        for invalid in reply.invalid_tool_calls:
            call_id = invalid.get("id") or f"invalid-{step}-{len(answers)}"
            message = f"The call to '{invalid.get('name')}' had arguments that are not valid JSON"
            self.emit("error", {"callId": call_id, "message": message})
            answers[call_id] = _ready(message, True)
        outcomes = await asyncio.gather(*answers.values())
        results = [
            ToolMessage(content=text, tool_call_id=call_id, status="error" if failed else "success")
            for call_id, (text, failed) in zip(answers, outcomes, strict=True)
        ]
        return results, repeated

    async def _refuse(
        self, call_id: str, name: str, specs: dict[str, ToolSpec]
    ) -> tuple[str, bool]:
        where = "in Graph Mode" if self.graph_mode else "in this conversation"
        message = f"No tool named '{name}' is available {where}"
        self.emit("error", {"callId": call_id, "tool": name, "message": message})
        return f"{message}. Available: {', '.join(sorted(specs)) or 'none'}.", True

    # --- one tool call --------------------------------------------------------------------------

    async def _execute(
        self, step: int, call_id: str, spec: ToolSpec, arguments: dict[str, Any]
    ) -> tuple[str, bool]:
        """Run one call; returns the text for the model and whether the call failed."""
        name = dotted(spec)
        arguments = orchestrated(spec.server, spec.name, arguments, self._owned_values)
        shown = redacted(arguments)
        self.emit("tool_call", {"callId": call_id, "tool": name, "arguments": shown, "step": step})
        outcome = await self.manager.call_tool(spec.server, spec.name, arguments)

        def logged(text: str, is_error: bool) -> None:
            log = ToolCallLog(
                call_id, step, spec.server, spec.name, shown, text, is_error, outcome.seconds
            )
            self.calls.append(log)

        if outcome.result is None:
            text, is_error = storable_text(outcome.error or "The call failed"), True
            self.emit("error", {"callId": call_id, "tool": name, "message": text})
        else:
            reading = asyncio.ensure_future(
                asyncio.to_thread(
                    self._results.read, outcome.result, tool=name, call_id=call_id, spec=spec
                )
            )
            try:
                text, is_error, notes = await asyncio.shield(reading)
            except asyncio.CancelledError:
                # The read goes on in its thread and may still bring an artifact into the turn's:
                # the call that brought it is stored with it.
                text, is_error, _ = await reading
                logged(text, is_error)
                raise
            for note in notes:
                self.emit("error", {"callId": call_id, "tool": name, **note.to_json_dict()})
        self.emit(
            "tool_result",
            {
                "callId": call_id,
                "tool": name,
                "isError": is_error,
                "text": text[:PREVIEW_CHARS],
                "seconds": round(outcome.seconds, 4),
            },
        )
        logged(text, is_error)
        return text, is_error

    # --- Graph Mode -----------------------------------------------------------------------------

    async def _read_graph_version(self) -> int | None:
        reader = self.context.graph_version
        return None if reader is None else await reader()

    async def _check_graph(self) -> None:
        if not self.graph_mode:
            return
        version = await self._read_graph_version()
        if version is not None and version != self.graph_version:
            self.emit(
                "graph_updated",
                {
                    "conversationId": self.context.conversation_id,
                    "version": version,
                    "previousVersion": self.graph_version,
                },
            )
            self.graph_version = version


def _openai_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.qualified,
            "description": spec.description[:1024] or f"{dotted(spec)} (no description)",
            "parameters": model_facing_schema(spec.server, spec.input_schema),
        },
    }


async def _ready(text: str, failed: bool) -> tuple[str, bool]:
    return text, failed
