"""What a run did, read from the agent's stream as it happens: todos, subagents started and
finished, tool calls, files, memory writes. It becomes the run's progress events (the SSE
stream) and the workspace fields of seed 001's JSON."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from graphwright.miner.memory import MEMORY_ROOT, file_text
from graphwright.miner.schemas import FileEntry, SubagentRun

ORCHESTRATOR = "orchestrator"
TODO_MARKS = {"completed": "✓", "in_progress": "⧗", "pending": "○"}
FILE_TOOLS = ("write_file", "edit_file")
ARG_PREVIEW = 300
FAILED_MARK = " (write failed: {reason})"


def todo_lines(todos: list[dict[str, Any]], agent: str = ORCHESTRATOR) -> list[str]:
    prefix = "" if agent == ORCHESTRATOR else f"[{agent}] "
    return [
        f"{TODO_MARKS.get(str(todo.get('status')), '○')} {prefix}{todo.get('content', '')}"
        for todo in todos
    ]


def _preview(args: dict[str, Any]) -> dict[str, Any]:
    return {
        key: f"{value[:ARG_PREVIEW]}…" if isinstance(value, str) and len(value) > ARG_PREVIEW
        else value
        for key, value in args.items()
    }  # fmt: skip


@dataclass
class RunTracker:
    """Follows one run across its segments (the first, and one per resume)."""

    emit: Callable[[str, dict[str, Any]], None]
    todos: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    subagents: dict[str, SubagentRun] = field(default_factory=dict)
    memory_writes: dict[str, str | None] = field(default_factory=dict)  # path -> error
    _agents: dict[tuple[str, ...], str] = field(default_factory=dict)
    _file_calls: dict[str, dict[str, Any]] = field(default_factory=dict)

    def observe(self, chunk: dict[str, Any]) -> None:
        if chunk.get("type") != "updates":
            return
        namespace = tuple(chunk.get("ns") or ())
        for update in (chunk.get("data") or {}).values():
            if not isinstance(update, dict):
                continue
            for message in update.get("messages") or []:
                self._message(namespace, message)

    def _agent(self, namespace: tuple[str, ...], message: BaseMessage) -> str:
        if not namespace:
            return ORCHESTRATOR
        if isinstance(message, AIMessage) and message.name:
            self._agents[namespace] = message.name
        return self._agents.get(namespace, "subagent")

    def _message(self, namespace: tuple[str, ...], message: BaseMessage) -> None:
        agent = self._agent(namespace, message)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                self._call(agent, namespace, call)
        elif isinstance(message, ToolMessage):
            self._result(agent, namespace, message)

    def _call(self, agent: str, namespace: tuple[str, ...], call: dict[str, Any]) -> None:
        name, args = call["name"], call.get("args") or {}
        self.emit("tool_call", {"agent": agent, "name": name, "args": _preview(args)})
        if name == "write_todos":
            self.todos[agent] = list(args.get("todos") or [])
            self.emit("todos", {"agent": agent, "todos": self.todo_list()})
        elif name == "task" and not namespace:
            run = SubagentRun(
                name=str(args.get("subagent_type", "")),
                task=str(args.get("description", "")),
                status="running",
            )
            self.subagents[call["id"]] = run
            self.emit("subagent", {"id": call["id"], **run.model_dump(by_alias=True)})
        elif name in FILE_TOOLS:
            self._file_calls[call["id"]] = args

    def _result(self, agent: str, namespace: tuple[str, ...], message: ToolMessage) -> None:
        failed = message.status == "error" or str(message.content).startswith("Error")
        preview = str(message.content)[:ARG_PREVIEW]
        self.emit(
            "tool_result",
            {"agent": agent, "name": message.name, "ok": not failed, "preview": preview},
        )
        if message.name == "task" and not namespace and message.tool_call_id in self.subagents:
            run = self.subagents[message.tool_call_id]
            run.status = "failed" if failed else "completed"
            self.emit("subagent", {"id": message.tool_call_id, **run.model_dump(by_alias=True)})
            return
        args = self._file_calls.pop(message.tool_call_id, None)
        if args is None:
            return
        path = str(args.get("file_path", ""))
        if path.startswith(MEMORY_ROOT):
            error = str(message.content) if failed else None
            self.memory_writes[path] = error
            self.emit("memory_write", {"agent": agent, "path": path, "error": error})
        elif not failed:
            content = args.get("content")
            size = len(content.encode()) if isinstance(content, str) else None
            self.emit("file", {"agent": agent, "path": path, "size": size})

    def snapshot(self) -> dict[str, Any]:
        """What a later segment (perhaps in another process) needs to go on from here."""
        return {
            "todos": self.todos,
            "subagents": {
                key: run.model_dump(by_alias=True) for key, run in self.subagents.items()
            },
            "memoryWrites": self.memory_writes,
        }

    def restore(self, snapshot: dict[str, Any] | None) -> None:
        snapshot = snapshot or {}
        self.todos = dict(snapshot.get("todos") or {})
        self.subagents = {
            key: SubagentRun.model_validate(run)
            for key, run in (snapshot.get("subagents") or {}).items()
        }
        self.memory_writes = dict(snapshot.get("memoryWrites") or {})

    def todo_list(self) -> list[str]:
        lines = todo_lines(self.todos.get(ORCHESTRATOR, []))
        for agent, todos in self.todos.items():
            if agent != ORCHESTRATOR:
                lines.extend(todo_lines(todos, agent))
        return lines

    def memory_write_list(self) -> list[str]:
        """Seed 001's `memoryWrites`: each path written, a failed one with its error marker."""
        return [
            path
            if error is None
            else path + FAILED_MARK.format(reason=error.removeprefix("Error: "))
            for path, error in self.memory_writes.items()
        ]

    def subagent_list(self) -> list[SubagentRun]:
        return list(self.subagents.values())


def files_of(state_files: dict[str, Any]) -> list[FileEntry]:
    return [
        FileEntry(path=path, size=len(file_text(data).encode()))
        for path, data in sorted(state_files.items())
    ]
