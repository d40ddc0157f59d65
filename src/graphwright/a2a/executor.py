"""The A2A executor: one A2A message is one chat turn, run by the chat service.

The message's `contextId` is the conversation (follow-ups continue it) and its `taskId` is the
turn. Text parts are the user's message, so slash commands work without a model exactly as in the
chat; a data part holding a knowledge graph is merged into the conversation's Graph Mode graph.

What the turn does goes out as A2A events, in this order: the task (`working`), the assistant's
text as one artifact streamed in chunks (`append`, and `lastChunk` on the last), a `working`
status with the new graph version after each Graph Mode change, the turn's stored artifacts (same
ids as in the artifact store, `metadata.version` their stored version), then the final status
with the answer as its message.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Artifact as ProtoArtifact
from a2a.types import Message, Part, TaskArtifactUpdateEvent, TaskState

from graphwright.a2a.auth import actor_of
from graphwright.a2a.parts import ANSWER_KEY, admit, chat_to_proto
from graphwright.a2a.tasks import GraphwrightTaskStore
from graphwright.chat.models import ChatRequest, MessageStatus
from graphwright.chat.running import RunningTurn
from graphwright.chat.service import ChatService
from graphwright.core.artifacts import MARKDOWN
from graphwright.errors import GraphwrightError

logger = logging.getLogger(__name__)

ANSWER_NAME = "Answer"
GRAPH_VERSION_KEY = "graphVersion"
# Tokens are sent in chunks of at least this age or size, so that a fast model does not cost
# one task-store write per token.
CHUNK_SECONDS = 0.05
CHUNK_CHARS = 2000
# How often a running turn checks whether its task was cancelled through another server.
CANCEL_CHECK_SECONDS = 1.0


def answer_artifact_id(task_id: str) -> str:
    return f"{task_id}-answer"


class AnswerStream:
    """The assistant's text as one artifact: the first chunk creates it, the others append, and
    the last carries `lastChunk`. The newest text is always held back, so that the last chunk
    has content."""

    def __init__(self, queue: EventQueue, task_id: str, context_id: str) -> None:
        self._queue = queue
        self._task_id = task_id
        self._context_id = context_id
        self._held = ""
        self._held_since = 0.0
        self.chunks = 0

    async def add(self, text: str) -> None:
        if not text:
            return
        now = time.monotonic()
        if self._held and now - self._held_since >= CHUNK_SECONDS:
            await self._send(self._held, last=False)
            self._held = ""
        if not self._held:
            self._held_since = now
        self._held += text
        # No chunk is longer than CHUNK_CHARS, however long one piece of text; what is left of
        # it is held.
        while len(self._held) > CHUNK_CHARS:
            await self._send(self._held[:CHUNK_CHARS], last=False)
            self._held = self._held[CHUNK_CHARS:]

    async def close(self) -> None:
        if self._held:
            await self._send(self._held, last=True)
            self._held = ""

    async def _send(self, text: str, *, last: bool) -> None:
        first = self.chunks == 0
        artifact = ProtoArtifact(
            artifact_id=answer_artifact_id(self._task_id),
            name=ANSWER_NAME if first else None,
            parts=[Part(text=text, media_type=MARKDOWN)],
            metadata={ANSWER_KEY: True} if first else None,
        )
        self.chunks += 1
        await self._queue.enqueue_event(
            TaskArtifactUpdateEvent(
                task_id=self._task_id,
                context_id=self._context_id,
                artifact=artifact,
                append=not first,
                last_chunk=last,
            )
        )


@dataclass(slots=True)
class Run:
    """One task being executed: whether a cancel was asked for, its turn once started, and its
    end (set once its final status is queued)."""

    cancelled: bool = False
    turn: RunningTurn | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)


class ChatAgentExecutor(AgentExecutor):
    """Runs each A2A message as a turn of the chat service that `chat()` returns.

    `execute` alone reports how a task ends. `cancel` stops the task's turn and waits until
    `execute` has queued the final status (`canceled`, or what the turn had already reached), so
    the task's stream, CancelTask and GetTask all see that one outcome: a final status queued
    after `execute` returns would come after the stream had closed."""

    def __init__(self, chat: Callable[[], ChatService], tasks: GraphwrightTaskStore) -> None:
        self._chat = chat
        self._tasks = tasks
        self._runs: dict[str, Run] = {}

    @property
    def running(self) -> list[str]:
        """The ids of the tasks being executed, for shutdown to cancel them."""
        return list(self._runs)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id
        assert task_id is not None
        run = self._runs[task_id] = Run()
        try:
            await self._execute(run, context, event_queue)
        finally:
            del self._runs[task_id]
            run.ended.set()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        run = self._runs.get(context.task_id or "")
        if run is None:
            return  # it has ended, and its final status is queued
        if not run.cancelled:
            run.cancelled = True
            if run.turn is not None:  # else `execute` stops before, or as soon as, it starts
                assert context.context_id is not None
                await self._chat().cancel(context.context_id, run.turn)
        await run.ended.wait()

    async def _execute(self, run: Run, context: RequestContext, event_queue: EventQueue) -> None:
        message, task_id, context_id = context.message, context.task_id, context.context_id
        assert message is not None and task_id is not None and context_id is not None
        request = admit(message, context.metadata)
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            # The task starts out working: one event (and one task-store write) less per turn.
            task = new_task_from_user_message(message)
            task.status.state = TaskState.TASK_STATE_WORKING
            await event_queue.enqueue_event(task)
        else:
            await updater.start_work()
        service = self._chat()
        actor = actor_of(context.call_context)
        try:
            for graph in request.graphs:
                version = await asyncio.to_thread(
                    service.import_graph, context_id, graph, actor=actor, mode=request.mode
                )
                await _graph_status(updater, version, "Imported the attached knowledge graph")
            if run.cancelled:
                await updater.cancel(_text(updater, "Cancelled before the turn started."))
                return
            if not request.text:
                await updater.complete(_text(updater, "Imported the attached knowledge graph."))
                return
            run.turn = await service.start_turn(
                ChatRequest(
                    conversation_id=context_id,
                    message=request.text,
                    mode=request.mode,
                ),
                actor=actor,
            )
        except GraphwrightError as exc:
            await updater.failed(_text(updater, str(exc)))
            return
        turn = run.turn
        try:
            if run.cancelled:  # asked for while the turn was starting
                await service.cancel(context_id, turn)
            await self._relay(turn, updater, event_queue, context.call_context)
        except asyncio.CancelledError:
            # The turn runs in its own task: stop it too, so it is stored as cancelled.
            await asyncio.shield(service.cancel(context_id, turn))
            raise

    async def _relay(
        self,
        turn: RunningTurn,
        updater: TaskUpdater,
        queue: EventQueue,
        call_context: ServerCallContext,
    ) -> None:
        answer = AnswerStream(queue, updater.task_id, updater.context_id)
        watching = asyncio.create_task(self._cancelled_elsewhere(turn, updater, call_context))
        try:
            response = await self._relay_events(turn, updater, answer)
        finally:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
        await answer.close()
        await self._finish(response, updater, queue)

    async def _relay_events(
        self, turn: RunningTurn, updater: TaskUpdater, answer: AnswerStream
    ) -> dict[str, Any]:
        """The turn's events as A2A events, up to its `done`; returns the turn's response."""
        response: dict[str, Any] = {}
        async for event in turn.events():
            if event.type == "token":
                await answer.add(event.data["text"])
            elif event.type == "graph_updated":
                await _graph_status(updater, event.data["version"], "The graph changed")
            elif event.type == "error":
                await updater.update_status(
                    TaskState.TASK_STATE_WORKING,
                    _text(updater, event.data.get("message", "error")),
                    metadata={"error": event.data},
                )
            elif event.type == "done":
                response = event.data
        return response

    async def _cancelled_elsewhere(
        self, turn: RunningTurn, updater: TaskUpdater, call_context: ServerCallContext
    ) -> None:
        """Stop `turn` once its task is stored cancelled. A cancel sent to another server sharing
        the database writes that there; this server's task store would only refuse the turn's
        next event, and meanwhile the turn would go on, and might be stored complete in the
        conversation."""
        while True:
            await asyncio.sleep(CANCEL_CHECK_SECONDS)
            try:
                cancelled = await self._tasks.cancelled(updater.task_id, call_context)
            except Exception:  # the database did not answer: ask again at the next check
                logger.warning(
                    "Could not read the state of task %s", updater.task_id, exc_info=True
                )
                continue
            if cancelled:
                await self._chat().cancel(turn.conversation_id, turn)
                return

    async def _finish(
        self, response: dict[str, Any], updater: TaskUpdater, queue: EventQueue
    ) -> None:
        status = response.get("status")
        reply = _text(updater, response.get("content", ""))
        if status == MessageStatus.CANCELLED.value:
            await updater.cancel(reply)
            return
        versions = {ref["artifactId"]: ref["version"] for ref in response["artifactVersions"]}
        for chat in response["artifacts"]:
            # A 20,000-node graph takes protobuf's converter a second: not on the event loop.
            artifact = await asyncio.to_thread(
                chat_to_proto, chat, version=versions.get(chat["artifactId"])
            )
            await queue.enqueue_event(
                TaskArtifactUpdateEvent(
                    task_id=updater.task_id,
                    context_id=updater.context_id,
                    artifact=artifact,
                    last_chunk=True,
                )
            )
        if status == MessageStatus.FAILED.value:
            await updater.failed(reply)
            return
        graph = response.get("graph")
        metadata = {GRAPH_VERSION_KEY: graph["version"]} if graph else None
        await updater.update_status(TaskState.TASK_STATE_COMPLETED, reply, metadata=metadata)


async def _graph_status(updater: TaskUpdater, version: int, what: str) -> None:
    await updater.update_status(
        TaskState.TASK_STATE_WORKING,
        _text(updater, f"{what}: graph version {version}."),
        metadata={GRAPH_VERSION_KEY: version},
    )


def _text(updater: TaskUpdater, text: str) -> Message:
    return updater.new_agent_message([Part(text=text)])
