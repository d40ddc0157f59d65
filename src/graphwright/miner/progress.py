"""What a run did, read from the agent's stream as it happens: todos, subagents started and
finished, tool calls, files, memory reads and writes. It becomes the run's progress events (the
SSE stream), the workspace fields of seed 001's JSON, and the run's trace (each agent's steps,
with their arguments shortened)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from graphwright.miner.memory import MEMORY_ROOT, file_text
from graphwright.miner.schemas import FileEntry, SubagentRun, Trace, TraceAgent, TraceStep

ORCHESTRATOR = "orchestrator"
TODO_MARKS = {"completed": "✓", "in_progress": "⧗", "pending": "○"}
FILE_TOOLS = ("write_file", "edit_file")
ARG_PREVIEW = 200
RESULT_PREVIEW = 300
MAX_STEPS = 400  # per run, in the trace: a run that loops keeps its first steps
FAILED_MARK = " (write failed: {reason})"


def todo_lines(todos: list[dict[str, Any]], agent: str = ORCHESTRATOR) -> list[str]:
    prefix = "" if agent == ORCHESTRATOR else f"[{agent}] "
    return [
        f"{TODO_MARKS.get(str(todo.get('status')), '○')} {prefix}{todo.get('content', '')}"
        for todo in todos
    ]


def _short(value: Any) -> Any:
    """An argument as shown: long text, and objects whose JSON is long, cut to ARG_PREVIEW."""
    text = value if isinstance(value, str) else None
    if isinstance(value, dict | list):
        text = orjson.dumps(value, default=str).decode()
    if text is None or len(text) <= ARG_PREVIEW:
        return value
    return f"{text[:ARG_PREVIEW]}…"


def preview(args: dict[str, Any]) -> dict[str, Any]:
    return {key: _short(value) for key, value in args.items()}


@dataclass
class RunTracker:
    """Follows one run across its segments (the first, and one per resume)."""

    emit: Callable[[str, dict[str, Any]], None]
    todos: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    subagents: dict[str, SubagentRun] = field(default_factory=dict)
    memory_writes: dict[str, str | None] = field(default_factory=dict)  # path -> error
    memory_reads: list[str] = field(default_factory=list)
    # The trace: steps by agent key (the orchestrator, or a subagent's `task` call id).
    steps: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _step_calls: dict[str, tuple[str, int]] = field(default_factory=dict)
    _agents: dict[tuple[str, ...], str] = field(default_factory=dict)
    _calls_of: dict[tuple[str, ...], str] = field(default_factory=dict)
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
        if isinstance(message, AIMessage) and message.name and namespace not in self._agents:
            self._agents[namespace] = message.name
            mapped = set(self._calls_of.values())
            call_id = next(
                (
                    key
                    for key, run in self.subagents.items()
                    if run.name == message.name and run.status == "running" and key not in mapped
                ),
                None,
            )
            if call_id is not None:
                self._calls_of[namespace] = call_id
        return self._agents.get(namespace, "subagent")

    def _key(self, namespace: tuple[str, ...]) -> str:
        """Whose steps a message's are: the orchestrator's, or one subagent call's."""
        if not namespace:
            return ORCHESTRATOR
        return self._calls_of.get(namespace, "/".join(namespace))

    def _message(self, namespace: tuple[str, ...], message: BaseMessage) -> None:
        agent = self._agent(namespace, message)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                self._call(agent, namespace, call)
        elif isinstance(message, ToolMessage):
            self._result(agent, namespace, message)

    def _call(self, agent: str, namespace: tuple[str, ...], call: dict[str, Any]) -> None:
        name, args = call["name"], call.get("args") or {}
        shown = preview(args)
        self.emit("tool_call", {"agent": agent, "name": name, "args": shown})
        self._step(namespace, call["id"], name, shown)
        path = str(args.get("file_path", ""))
        if name == "read_file" and path.startswith(MEMORY_ROOT) and path not in self.memory_reads:
            self.memory_reads.append(path)
            self.emit("memory_read", {"agent": agent, "path": path})
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

    def _step(
        self, namespace: tuple[str, ...], call_id: str, tool: str, args: dict[str, Any]
    ) -> None:
        if sum(len(steps) for steps in self.steps.values()) >= MAX_STEPS:
            return
        steps = self.steps.setdefault(self._key(namespace), [])
        self._step_calls[call_id] = (self._key(namespace), len(steps))
        steps.append({"tool": tool, "args": args, "ok": None, "result": None})

    def _result(self, agent: str, namespace: tuple[str, ...], message: ToolMessage) -> None:
        failed = message.status == "error" or str(message.content).startswith("Error")
        shown = str(message.content)[:RESULT_PREVIEW]
        self.emit(
            "tool_result",
            {"agent": agent, "name": message.name, "ok": not failed, "preview": shown},
        )
        where = self._step_calls.pop(message.tool_call_id, None)
        if where is not None:
            step = self.steps[where[0]][where[1]]
            step["ok"], step["result"] = not failed, shown
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
            "memoryReads": self.memory_reads,
            "steps": self.steps,
            "stepCalls": {key: list(where) for key, where in self._step_calls.items()},
        }

    def restore(self, snapshot: dict[str, Any] | None) -> None:
        snapshot = snapshot or {}
        self.todos = dict(snapshot.get("todos") or {})
        self.subagents = {
            key: SubagentRun.model_validate(run)
            for key, run in (snapshot.get("subagents") or {}).items()
        }
        self.memory_writes = dict(snapshot.get("memoryWrites") or {})
        self.memory_reads = list(snapshot.get("memoryReads") or [])
        self.steps = {key: list(steps) for key, steps in (snapshot.get("steps") or {}).items()}
        self._step_calls = {
            key: (where[0], int(where[1]))
            for key, where in (snapshot.get("stepCalls") or {}).items()
        }

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

    def trace(self) -> Trace:
        agents = [TraceAgent(agent=ORCHESTRATOR, steps=self._steps_of(ORCHESTRATOR))]
        for key, run in self.subagents.items():
            agents.append(
                TraceAgent(
                    agent=run.name,
                    id=key,
                    task=run.task,
                    status=run.status,
                    steps=self._steps_of(key),
                )
            )
        return Trace(agents=agents, memory_reads=list(self.memory_reads))

    def _steps_of(self, key: str) -> list[TraceStep]:
        return [TraceStep.model_validate(step) for step in self.steps.get(key, [])]


def files_of(state_files: dict[str, Any]) -> list[FileEntry]:
    return [
        FileEntry(path=path, size=len(file_text(data).encode()))
        for path, data in sorted(state_files.items())
    ]
