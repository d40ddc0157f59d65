"""Chat rules: conversations, their mode, one running turn per conversation, and what is stored.

A turn runs in its own task and reports through a queue, so a client that stops reading does not
stop the turn, and `cancel` can stop it cleanly: a cancelled turn is stored with what it had done
(its text so far, its tool calls, the artifacts of the calls that finished).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage

from graphwright.artifacts.models import ArtifactSummary, StoredArtifact
from graphwright.artifacts.service import (
    ArtifactService,
    DeleteArtifactInput,
    GetArtifactInput,
    ListArtifactsInput,
)
from graphwright.auth.service import AuthService
from graphwright.chat.mcp_manager import McpManager, describe_exception
from graphwright.chat.models import (
    ChatRequest,
    Conversation,
    ConversationCreate,
    ConversationPatch,
    Message,
    MessageStatus,
    Mode,
    ToolCallRecord,
)
from graphwright.chat.repository import ChatRepository
from graphwright.chat.turn import MAX_STEPS, Turn, TurnContext
from graphwright.core.artifacts import KNOWLEDGE_GRAPH, to_chat
from graphwright.core.graph import load_graph
from graphwright.db import Database
from graphwright.errors import Conflict, InvalidInput, NotFound
from graphwright.graphmode.service import GraphService

logger = logging.getLogger(__name__)

HISTORY_MESSAGES = 40
TITLE_CHARS = 80
GRAPH_TOKEN_TTL = timedelta(minutes=30)


@dataclass(frozen=True, slots=True)
class ChatEvent:
    type: str
    data: dict[str, Any]


class RunningTurn:
    """A turn in progress: its events as they happen, then its final response."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.queue: asyncio.Queue[ChatEvent] = asyncio.Queue()
        self.task: asyncio.Task[dict[str, Any]] | None = None
        self.storing = False  # past the point where a cancel can stop it

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        self.queue.put_nowait(ChatEvent(kind, data))

    async def events(self) -> AsyncIterator[ChatEvent]:
        while True:
            event = await self.queue.get()
            yield event
            if event.type == "done":
                return

    async def response(self) -> dict[str, Any]:
        assert self.task is not None
        return await asyncio.shield(self.task)


class ChatService:
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
    ) -> None:
        self.db = db
        self.manager = manager
        self.model = model
        self.artifacts = artifacts
        self.graphs = graphs
        self.auth = auth
        self.api_base_url = api_base_url.rstrip("/")
        self.max_steps = max_steps
        self._running: dict[str, RunningTurn] = {}

    # --- turns ----------------------------------------------------------------------------------

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
        turn = Turn(context, manager=self.manager, model=self.model, emit=handle.emit)
        handle.task = asyncio.create_task(self._run(turn, handle), name=f"turn-{conversation_id}")
        return handle

    def _prepare(self, conversation_id: str, request: ChatRequest, actor: str) -> TurnContext:
        mode, history = self._open(conversation_id, request, actor=actor)
        context = TurnContext(
            conversation_id=conversation_id,
            mode=mode,
            message=request.message,
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

    async def cancel(self, conversation_id: str) -> bool:
        """Stop the conversation's running turn; False when none is running."""
        handle = self._running.get(conversation_id)
        if handle is None or handle.task is None:
            # A running turn has stored its conversation; otherwise check it exists (404), off
            # the event loop.
            await asyncio.to_thread(self._conversation, conversation_id)
            return False
        if handle.storing:
            await asyncio.gather(handle.task, return_exceptions=True)
            return False
        handle.task.cancel()
        await asyncio.gather(handle.task, return_exceptions=True)
        return True

    async def aclose(self) -> None:
        for conversation_id in list(self._running):
            await self.cancel(conversation_id)
        await self.manager.aclose()

    async def _run(self, turn: Turn, handle: RunningTurn) -> dict[str, Any]:
        status = MessageStatus.COMPLETE
        try:
            await turn.run()
        except asyncio.CancelledError:
            # Our own cancel (or shutdown): the turn ends here and is stored as it stands.
            status = MessageStatus.CANCELLED
            turn.finish()
            turn.stop_reason = "cancelled"
        except Exception as exc:
            logger.exception("Turn in conversation %s failed", handle.conversation_id)
            status = MessageStatus.FAILED
            turn.emit("error", {"message": f"The turn failed: {describe_exception(exc)}"})
            turn.finish()
            turn.stop_reason = "failed"
        handle.storing = True
        refs: list[dict[str, Any]] = []
        try:
            message_id, refs = await asyncio.to_thread(self._store, turn, status)
        except Exception as exc:
            logger.exception("Turn in conversation %s could not be stored", handle.conversation_id)
            turn.emit(
                "error", {"message": f"The turn could not be stored: {describe_exception(exc)}"}
            )
            status, message_id = MessageStatus.FAILED, None
        finally:
            self._running.pop(handle.conversation_id, None)
            if turn.context.database_context:
                token = turn.context.database_context["accessToken"]
                await asyncio.to_thread(self.auth.revoke_token, token)
        response = _response(turn, status, message_id, refs)
        handle.emit("done", response)
        return response

    def _store(self, turn: Turn, status: MessageStatus) -> tuple[str, list[dict[str, Any]]]:
        """Store the turn's artifacts, its answer and its tool calls; returns the message id and
        the stored artifact versions (`{artifactId, version}`)."""
        conversation_id = turn.context.conversation_id
        writes = self.artifacts.save_turn(conversation_id, turn.artifacts)
        refs = [{"artifactId": w.artifact_id, "version": w.version} for w in writes]
        text = turn.text or _fallback_text(status)
        with self.db.write() as session:
            repo = ChatRepository(session)
            message = _message(
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
            repo.touch(conversation_id, _now())
        return message.id, refs

    def _database_context(self, conversation_id: str, actor: str) -> dict[str, Any]:
        """Where graph tools write, with a token for this conversation that lives one turn."""
        token = self.auth.mint(conversation_id=conversation_id, ttl=GRAPH_TOKEN_TTL, label=actor)
        return {
            "conversationId": conversation_id,
            "apiBaseUrl": self.api_base_url,
            "accessToken": token,
        }

    def _graph_version_reader(self, conversation_id: str) -> Any:
        async def read() -> int:
            return await asyncio.to_thread(self.graphs.version, conversation_id)

        return read

    def import_graph(self, conversation_id: str, graph: dict[str, Any], *, actor: str) -> int:
        """Merge an attached knowledge graph into the conversation's Graph Mode graph; returns
        the graph's new version. Outside Graph Mode there is no graph to merge into."""
        conversation = self._conversation(conversation_id)
        if conversation.mode != Mode.GRAPH.value:
            raise InvalidInput(
                f"Conversation '{conversation_id}' is not in Graph Mode, so an attached knowledge "
                "graph has nowhere to go; switch it to Graph Mode first"
            )
        if conversation_id in self._running:
            raise Conflict(
                f"A turn is running in conversation '{conversation_id}'; import the graph "
                "once it has finished"
            )
        return self.graphs.import_graph(conversation_id, load_graph(graph), actor=actor).version

    # --- conversations --------------------------------------------------------------------------

    def list_conversations(
        self, *, limit: int = 50, offset: int = 0, only: str | None = None, text: str | None = None
    ) -> list[dict[str, Any]]:
        """Most recently active first; `text` keeps those whose title or id contains it."""
        with self.db.read() as session:
            repo = ChatRepository(session)
            rows = repo.conversations(limit=limit, offset=offset, only=only, text=text)
        return [_conversation_json(row) for row in rows]

    def existing_conversations(self, conversation_ids: Sequence[str]) -> set[str]:
        """Which of these ids name a conversation."""
        with self.db.read() as session:
            return ChatRepository(session).existing_ids(conversation_ids)

    def create_conversation(self, request: ConversationCreate, *, actor: str) -> dict[str, Any]:
        """An empty conversation; in Graph Mode from the start if asked."""
        conversation_id = request.id or str(uuid.uuid4())
        now = _now()
        with self.db.write() as session:
            repo = ChatRepository(session)
            if repo.conversation(conversation_id) is not None:
                raise Conflict(f"A conversation '{conversation_id}' already exists")
            row = Conversation(
                id=conversation_id,
                title=request.title or "New conversation",
                mode=request.mode.value,
                created_at=now,
                updated_at=now,
            )
            repo.add(row)
            return _conversation_json(row)

    def delete_conversation(self, conversation_id: str) -> None:
        """Delete the conversation, its messages, its artifacts and its Graph Mode graph."""
        if conversation_id in self._running:
            raise Conflict(
                f"A turn is running in conversation '{conversation_id}'; cancel it before "
                "deleting the conversation"
            )
        self._conversation(conversation_id)
        for summary in self.artifacts.list_artifacts(
            ListArtifactsInput(), context_id=conversation_id
        ):
            self.artifacts.delete_artifact(
                DeleteArtifactInput(artifact_id=summary.artifact_id), context_id=conversation_id
            )
        self.graphs.delete_graph(conversation_id)
        with self.db.write() as session:
            ChatRepository(session).delete_conversation(conversation_id)

    def get_conversation(self, conversation_id: str) -> dict[str, Any]:
        """The conversation with its messages, their tool calls and the artifacts they showed."""
        with self.db.read() as session:
            repo = ChatRepository(session)
            conversation = repo.conversation(conversation_id)
            if conversation is None:
                raise _no_conversation(conversation_id)
            messages = repo.messages(conversation_id)
            calls = repo.tool_calls([m.id for m in messages])
        calls_by_message: dict[str, list[dict[str, Any]]] = {}
        for call in calls:
            calls_by_message.setdefault(call.message_id, []).append(_call_json(call))
        body = _conversation_json(conversation)
        body["running"] = conversation_id in self._running
        body["graphVersion"] = self.graphs.version(conversation_id)
        body["messages"] = [
            {
                **_message_json(message),
                "toolCalls": calls_by_message.get(message.id, []),
                "artifacts": self._shown_artifacts(conversation_id, message.artifacts),
            }
            for message in messages
        ]
        body["artifacts"] = [
            {**summary.to_json_dict(), "versions": self._versions(conversation_id, summary)}
            for summary in self.artifacts.list_artifacts(
                ListArtifactsInput(), context_id=conversation_id
            )
        ]
        return body

    def update_conversation(
        self, conversation_id: str, patch: ConversationPatch, *, actor: str
    ) -> dict[str, Any]:
        conversation = self._conversation(conversation_id)
        if patch.mode is not None and conversation_id in self._running:
            raise Conflict(
                f"A turn is running in conversation '{conversation_id}'; let it finish or "
                "cancel it before switching mode"
            )
        seed = conversation.graph_seed
        if patch.mode is not None and patch.mode.value != conversation.mode:
            seed = self._enter_mode(conversation_id, patch.mode, seed, actor=actor)
        with self.db.write() as session:
            repo = ChatRepository(session)
            row = repo.conversation(conversation_id)
            if row is None:
                raise _no_conversation(conversation_id)
            if patch.title is not None:
                row.title = patch.title
            if patch.mode is not None:
                row.mode = patch.mode.value
            row.graph_seed = seed
            row.updated_at = _now()
            return _conversation_json(row)

    def _open(
        self, conversation_id: str, request: ChatRequest, *, actor: str
    ) -> tuple[Mode, list[Message]]:
        """Create the conversation on first use, switch it to `request.mode`, store the user's
        message; returns the mode and the messages before this one."""
        seed: dict[str, Any] | None = None
        switching = False
        if request.mode is not None:
            existing = self._find(conversation_id)
            switching = existing is not None and request.mode.value != existing.mode
            if existing is not None and switching:
                seed = self._enter_mode(
                    conversation_id, request.mode, existing.graph_seed, actor=actor
                )
        with self.db.write() as session:
            repo = ChatRepository(session)
            row = repo.conversation(conversation_id)
            now = _now()
            if row is None:
                row = Conversation(
                    id=conversation_id,
                    title=_title(request.message),
                    mode=(request.mode or Mode.NORMAL).value,
                    created_at=now,
                    updated_at=now,
                )
                repo.add(row)
            mode = request.mode or Mode(row.mode)
            row.mode = mode.value
            if switching:
                row.graph_seed = seed
            row.updated_at = now
            history = repo.messages(conversation_id, last=HISTORY_MESSAGES)
            seq = history[-1].seq + 1 if history else 0
            repo.add(_message(conversation_id, seq, role="user", content=request.message))
        return mode, history

    def _enter_mode(
        self, conversation_id: str, mode: Mode, seed: dict[str, Any] | None, *, actor: str
    ) -> dict[str, Any] | None:
        """Entering Graph Mode seeds the graph from the conversation's merged knowledge-graph
        artifact: all of it the first time, later only what it learned since the last seeding,
        so nodes the person removed in Graph Mode do not come back. Returns the new seed mark."""
        if mode is not Mode.GRAPH:
            return seed
        latest = self._latest_knowledge_graph(conversation_id)
        if latest is None:
            return seed
        artifact_id = latest.artifact.artifact_id
        mark = {"artifactId": artifact_id, "version": latest.version}
        if seed == mark:
            return seed
        graph = _graph_data(latest)
        if seed is not None and seed["artifactId"] == artifact_id:
            earlier = self.artifacts.get_artifact(
                GetArtifactInput(artifact_id=artifact_id, version=seed["version"]),
                context_id=conversation_id,
            )
            graph = learned_since(_graph_data(earlier), graph)
        if graph["nodes"] or graph["links"]:
            self.graphs.import_graph(conversation_id, graph, actor=actor)
        return mark

    def _latest_knowledge_graph(self, conversation_id: str) -> StoredArtifact | None:
        graphs = self.artifacts.latest(conversation_id, {KNOWLEDGE_GRAPH})
        return graphs[0] if graphs else None

    def _shown_artifacts(
        self, conversation_id: str, refs: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        shown = []
        for position, ref in enumerate(refs):
            request = GetArtifactInput(artifact_id=ref["artifactId"], version=ref["version"])
            try:
                stored = self.artifacts.get_artifact(request, context_id=conversation_id)
            except NotFound:
                continue  # deleted since; the message still reads without it
            chat = to_chat(stored.artifact, position).to_json_dict()
            shown.append({**chat, "version": ref["version"]})
        return shown

    def _versions(self, conversation_id: str, summary: ArtifactSummary) -> list[dict[str, Any]]:
        versions = self.artifacts.versions(summary.artifact_id, context_id=conversation_id)
        return [version.to_json_dict() for version in versions]

    def _find(self, conversation_id: str) -> Conversation | None:
        with self.db.read() as session:
            return ChatRepository(session).conversation(conversation_id)

    def _conversation(self, conversation_id: str) -> Conversation:
        row = self._find(conversation_id)
        if row is None:
            raise _no_conversation(conversation_id)
        return row


def _now() -> datetime:
    return datetime.now(UTC)


def _graph_data(stored: StoredArtifact) -> dict[str, Any]:
    return load_graph(stored.artifact.parts[0].data)


def _link_key(link: dict[str, Any]) -> tuple[Any, Any, Any]:
    return link["source"], link["target"], link.get("label")


def learned_since(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """The nodes and links of `later` that `earlier` lacks, with the endpoints of those links."""
    known_nodes = {node["id"] for node in earlier["nodes"]}
    known_links = {_link_key(link) for link in earlier["links"]}
    links = [link for link in later["links"] if _link_key(link) not in known_links]
    wanted = {node for link in links for node in (link["source"], link["target"])}
    nodes = [
        node for node in later["nodes"] if node["id"] not in known_nodes or node["id"] in wanted
    ]
    return {"nodes": nodes, "links": links}


def _message(
    conversation_id: str,
    seq: int,
    *,
    role: str,
    content: str,
    status: MessageStatus = MessageStatus.COMPLETE,
    artifacts: list[dict[str, Any]] | None = None,
    graph_version: int | None = None,
) -> Message:
    return Message(
        id=str(uuid.uuid4()),
        conversation_id=conversation_id,
        seq=seq,
        role=role,
        content=content,
        status=status.value,
        artifacts=artifacts or [],
        graph_version=graph_version,
        created_at=_now(),
    )


def _title(message: str) -> str:
    first = " ".join(message.split())
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1] + "…"


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


def _no_conversation(conversation_id: str) -> NotFound:
    return NotFound(f"No conversation '{conversation_id}'")


def _conversation_json(row: Conversation) -> dict[str, Any]:
    return {
        "id": row.id,
        "title": row.title,
        "mode": row.mode,
        "createdAt": row.created_at.isoformat(),
        "updatedAt": row.updated_at.isoformat(),
    }


def _message_json(row: Message) -> dict[str, Any]:
    return {
        "id": row.id,
        "role": row.role,
        "content": row.content,
        "status": row.status,
        "graphVersion": row.graph_version,
        "createdAt": row.created_at.isoformat(),
    }


def _call_json(row: ToolCallRecord) -> dict[str, Any]:
    return {
        "callId": row.call_id,
        "step": row.step,
        "tool": f"{row.server}.{row.tool}",
        "arguments": row.arguments,
        "isError": row.is_error,
        "durationMs": round(row.duration_ms, 2),
        "result": row.result_text,
    }
