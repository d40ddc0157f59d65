"""Chat rules: one running turn per conversation, what a turn stores, and the import of a graph
attached to a message (not while a turn runs).

A turn runs in its own task and reports through a queue (`RunningTurn`), so a client that stops
reading does not stop the turn, and `cancel` can stop it cleanly: a cancelled turn is stored with
what it had done (its text so far, its tool calls, the artifacts of the calls that finished).
Conversations are in `conversations.py`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage

from graphwright.artifacts.service import ArtifactService
from graphwright.auth.service import AuthService
from graphwright.chat.conversations import ChatConversations, message_row, utc_now
from graphwright.chat.mcp_manager import McpManager, describe_exception
from graphwright.chat.models import ChatRequest, MessageStatus, Mode, ToolCallRecord
from graphwright.chat.repository import ChatRepository
from graphwright.chat.running import RunningTurn
from graphwright.chat.turn import MAX_STEPS, Turn, TurnContext
from graphwright.core.graph import load_graph
from graphwright.db import Database
from graphwright.errors import Conflict, InvalidInput
from graphwright.graphmode.service import GraphService
from graphwright.llm import NO_MODEL
from graphwright.miner.tags import checked_tags

logger = logging.getLogger(__name__)

GRAPH_TOKEN_TTL = timedelta(minutes=30)
GRAPH_TOKEN_PURPOSE = "the graph tools of one Graph Mode turn write with it"


class ChatService(ChatConversations):
    def __init__(
        self,
        *,
        db: Database,
        manager: McpManager,
        model: BaseChatModel | None,
        artifacts: ArtifactService,
        graphs: GraphService,
        auth: AuthService,
        api_base_url: str,
        max_steps: int = MAX_STEPS,
        model_notice: str = NO_MODEL,
    ) -> None:
        self.db = db
        self.manager = manager
        self.model = model
        self._model_notice = model_notice
        self.artifacts = artifacts
        self.graphs = graphs
        self.auth = auth
        self.api_base_url = api_base_url.rstrip("/")
        self.max_steps = max_steps
        self._running: dict[str, RunningTurn] = {}
        self._starting_servers: asyncio.Task[None] | None = None

    @property
    def model_notice(self) -> str | None:
        """What is missing for the model and how to set it; None when a model answers."""
        return None if self.model is not None else self._model_notice

    def start_servers(self) -> None:
        """With a model, start every MCP server now, in the background, so that the first turn
        waits for none (`graphwright serve` does, once up). Without one, a turn uses tools only
        through slash commands, and each server starts on its first use. A server that does not
        start is said once in the log, and started again on its first use."""
        if self.model is None or self._starting_servers is not None:
            return
        self._starting_servers = asyncio.create_task(
            self._start_servers(), name="mcp-servers-ahead"
        )

    async def _start_servers(self) -> None:
        for reason in (await self.manager.start_servers()).values():
            logger.warning("%s; the chat starts it again when a turn needs it", reason)

    async def start_turn(self, request: ChatRequest, *, actor: str) -> RunningTurn:
        """Store the user's message and start the turn; its events follow on the handle."""
        conversation_id = request.conversation_id or str(uuid.uuid4())
        if conversation_id in self._running:
            raise Conflict(
                f"A turn is already running in conversation '{conversation_id}'; wait for it "
                f"or cancel it (POST /api/conversations/{conversation_id}/cancel)"
            )
        handle = RunningTurn(conversation_id)
        self._running[conversation_id] = handle  # held from here, so a second request waits
        try:
            context = await asyncio.to_thread(self._prepare, conversation_id, request, actor)
        except BaseException:
            self._running.pop(conversation_id, None)
            raise
        turn = Turn(
            context,
            manager=self.manager,
            model=self.model,
            emit=handle.emit,
            model_notice=self._model_notice,
        )
        handle.task = asyncio.create_task(self._run(turn, handle), name=f"turn-{conversation_id}")
        return handle

    def _prepare(self, conversation_id: str, request: ChatRequest, actor: str) -> TurnContext:
        mode, history = self._open(conversation_id, request, actor=actor)
        context = TurnContext(
            conversation_id=conversation_id,
            mode=mode,
            message=request.message,
            domain_tags=checked_tags(request.domain_tags),
            history=[
                HumanMessage(row.content) if row.role == "user" else AIMessage(row.content)
                for row in history
                if row.content.strip()
            ],
            max_steps=self.max_steps,
        )
        if mode is Mode.GRAPH:
            context.database_context = self._database_context(conversation_id, actor)
            context.graph_version = self._graph_version_reader(conversation_id)
        else:
            context.artifacts = self.artifacts.start_turn(conversation_id, carry_over=True)
        return context

    def import_graph(
        self, conversation_id: str, graph: dict[str, Any], *, actor: str, mode: Mode | None = None
    ) -> int:
        """Merge an attached knowledge graph into the conversation's Graph Mode graph; returns
        the graph's new version. As with a turn's message, the conversation is made on first use
        and switched to `mode` if one is asked for. Outside Graph Mode there is no graph to merge
        into."""
        if conversation_id in self._running:
            raise Conflict(
                f"A turn is running in conversation '{conversation_id}'; import the graph "
                "once it has finished"
            )
        conversation = self._ensure_conversation(conversation_id, mode, actor=actor)
        if conversation["mode"] != Mode.GRAPH.value:
            raise InvalidInput(
                f"Conversation '{conversation_id}' is not in Graph Mode, so an attached knowledge "
                "graph has nowhere to go; switch it to Graph Mode first"
            )
        return self.graphs.import_graph(conversation_id, load_graph(graph), actor=actor).version

    async def cancel(self, conversation_id: str, turn: RunningTurn | None = None) -> bool:
        """Stop the conversation's running turn, or only `turn` if given (a caller holding a
        turn that has ended must not stop the next one); False when none is stopped."""
        handle = self._running.get(conversation_id)
        if turn is not None and handle is not turn:
            return False
        if handle is None or handle.task is None:
            # A running turn has stored its conversation; otherwise check it exists (404), off
            # the event loop.
            await asyncio.to_thread(self._conversation, conversation_id)
            return False
        # Waited for with `wait`, which never cancels what it waits for: a caller cancelled
        # while it waits (a client gone) would otherwise cancel the turn a second time.
        if handle.storing:
            await asyncio.wait([handle.task])
            return False
        if not handle.cancel_asked:  # once: a second cancel would interrupt the first's ending
            handle.cancel_asked = True
            if handle.started:  # else `_run` sees `cancel_asked` as it begins
                handle.task.cancel()
        await asyncio.wait([handle.task])
        return True

    async def aclose(self) -> None:
        if self._starting_servers is not None:  # it holds servers' locks until they answer
            self._starting_servers.cancel()
            await asyncio.gather(self._starting_servers, return_exceptions=True)
        for conversation_id in list(self._running):
            await self.cancel(conversation_id)
        await self.manager.aclose()

    async def _run(self, turn: Turn, handle: RunningTurn) -> dict[str, Any]:
        handle.started = True
        status = await self._outcome(turn, handle)
        # From here a cancel waits for the turn to be stored (`cancel`), so nothing below is
        # interrupted, and the `finally` frees the conversation whatever happens.
        handle.storing = True
        refs: list[dict[str, Any]] = []
        message_id: str | None = None
        try:
            status = await self._finish(turn, status)
            message_id, refs = await asyncio.to_thread(self._store, turn, status)
        except Exception as exc:
            logger.exception("Turn in conversation %s could not be stored", handle.conversation_id)
            turn.emit(
                "error", {"message": f"The turn could not be stored: {describe_exception(exc)}"}
            )
            status = MessageStatus.FAILED
        finally:
            self._running.pop(handle.conversation_id, None)
            if turn.context.database_context:
                token = turn.context.database_context["accessToken"]
                await asyncio.to_thread(self.auth.revoke_token, token)
        response = _response(turn, status, message_id, refs)
        handle.emit("done", response)
        return response

    async def _outcome(self, turn: Turn, handle: RunningTurn) -> MessageStatus:
        """Run the turn, unless a cancel came before it began; how it ended."""
        if handle.cancel_asked:
            turn.stop_reason = "cancelled"
            return MessageStatus.CANCELLED
        try:
            await turn.run()
        except asyncio.CancelledError:
            # Our own cancel (or shutdown): the turn ends here and is stored as it stands.
            turn.stop_reason = "cancelled"
            return MessageStatus.CANCELLED
        except Exception as exc:
            return _failed(turn, exc)
        return MessageStatus.COMPLETE

    async def _finish(self, turn: Turn, status: MessageStatus) -> MessageStatus:
        """Settle the artifacts of a turn that ended without settling them (cancelled or
        failed); a failure to settle fails the turn."""
        try:
            await turn.finish()
        except Exception as exc:
            return _failed(turn, exc)
        return status

    def _store(self, turn: Turn, status: MessageStatus) -> tuple[str, list[dict[str, Any]]]:
        """Store the turn's artifacts, its answer and its tool calls; returns the message id and
        the stored artifact versions (`{artifactId, version}`)."""
        conversation_id = turn.context.conversation_id
        writes = self.artifacts.save_turn(conversation_id, turn.artifacts)
        refs = [{"artifactId": w.artifact_id, "version": w.version} for w in writes]
        text = turn.text or _fallback_text(status)
        with self.db.write() as session:
            repo = ChatRepository(session)
            message = message_row(
                conversation_id,
                repo.next_seq(conversation_id),
                role="assistant",
                content=text,
                status=status,
                artifacts=refs,
                graph_version=turn.graph_version,
            )
            repo.add(message)
            repo.add_all(
                [
                    ToolCallRecord(
                        message_id=message.id,
                        call_id=log.call_id,
                        step=log.step,
                        server=log.server,
                        tool=log.tool,
                        arguments=log.arguments,
                        result_text=log.result_text,
                        is_error=log.is_error,
                        duration_ms=log.seconds * 1000,
                        created_at=message.created_at,
                    )
                    for log in turn.calls
                ]
            )
            repo.touch(conversation_id, utc_now())
        return message.id, refs

    def _database_context(self, conversation_id: str, actor: str) -> dict[str, Any]:
        """Where graph tools write, with a token for this conversation that lives one turn."""
        token = self.auth.mint(
            conversation_id=conversation_id,
            ttl=GRAPH_TOKEN_TTL,
            label=actor,
            purpose=GRAPH_TOKEN_PURPOSE,
        )
        return {
            "conversationId": conversation_id,
            "apiBaseUrl": self.api_base_url,
            "accessToken": token,
        }

    def _graph_version_reader(self, conversation_id: str) -> Any:
        async def read() -> int:
            return await asyncio.to_thread(self.graphs.version, conversation_id)

        return read


def _failed(turn: Turn, exc: Exception) -> MessageStatus:
    """A turn that raised: logged, told to its listeners, and stored as failed."""
    logger.exception("Turn in conversation %s failed", turn.context.conversation_id)
    turn.emit("error", {"message": f"The turn failed: {describe_exception(exc)}"})
    turn.stop_reason = "failed"
    return MessageStatus.FAILED


def _response(
    turn: Turn, status: MessageStatus, message_id: str | None, refs: list[dict[str, Any]]
) -> dict[str, Any]:
    """The turn's final response: the `done` event, and the body of a non-streamed chat.
    `artifactVersions` gives the stored version of each artifact, in the artifacts' order."""
    conversation_id = turn.context.conversation_id
    graph = None
    if turn.graph_mode:
        graph = {"conversationId": conversation_id, "version": turn.graph_version}
    return {
        "conversationId": conversation_id,
        "messageId": message_id,
        "mode": turn.context.mode.value,
        "status": status.value,
        "stopReason": turn.stop_reason,
        "content": turn.text or _fallback_text(status),
        "artifacts": [artifact.to_json_dict() for artifact in turn.artifacts],
        "artifactVersions": refs,
        "graph": graph,
        "toolCalls": [
            {
                "callId": log.call_id,
                "tool": f"{log.server}.{log.tool}",
                "isError": log.is_error,
                "seconds": round(log.seconds, 4),
            }
            for log in turn.calls
        ],
    }


def _fallback_text(status: MessageStatus) -> str:
    if status is MessageStatus.CANCELLED:
        return "(Cancelled before any answer.)"
    if status is MessageStatus.FAILED:
        return "(The turn failed; see the error event.)"
    return "(No answer.)"
