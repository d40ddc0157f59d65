"""Conversations: create, list, read, rename, switch mode and delete, and the user's message that
opens each turn. Entering Graph Mode seeds the graph from the conversation's knowledge graph."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import IntegrityError

from graphwright.artifacts.models import ArtifactSummary, StoredArtifact
from graphwright.artifacts.service import (
    ArtifactService,
    DeleteArtifactInput,
    GetArtifactInput,
    ListArtifactsInput,
)
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
from graphwright.chat.running import RunningTurn
from graphwright.core.artifacts import KNOWLEDGE_GRAPH, to_chat
from graphwright.core.graph import load_graph
from graphwright.core.item_card import ToolOrigin
from graphwright.db import Database
from graphwright.errors import Conflict, NotFound
from graphwright.graphmode.service import GraphService

HISTORY_MESSAGES = 40
TITLE_CHARS = 80
DEFAULT_TITLE = "New conversation"  # until the first message gives it a readable one


class ChatConversations:
    """The conversation rules of the chat service (ChatService builds on them)."""

    db: Database
    artifacts: ArtifactService
    graphs: GraphService
    _running: dict[str, RunningTurn]

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
        now = utc_now()
        exists = Conflict(f"A conversation '{conversation_id}' already exists")
        try:
            with self.db.write() as session:
                repo = ChatRepository(session)
                if repo.conversation(conversation_id) is not None:
                    raise exists
                row = Conversation(
                    id=conversation_id,
                    title=request.title or DEFAULT_TITLE,
                    mode=request.mode.value,
                    created_at=now,
                    updated_at=now,
                )
                repo.add(row)
                session.flush()
                return _conversation_json(row)
        except IntegrityError:  # another request made it between the check and the insert
            raise exists from None

    def _ensure_conversation(
        self, conversation_id: str, mode: Mode | None, *, actor: str
    ) -> dict[str, Any]:
        """The conversation, made on first use and switched to `mode` if one is asked for."""
        if self._find(conversation_id) is None:
            request = ConversationCreate(id=conversation_id, mode=mode or Mode.NORMAL)
            with contextlib.suppress(Conflict):  # unless another request has just made it
                return self.create_conversation(request, actor=actor)
        if mode is None:
            return _conversation_json(self._conversation(conversation_id))
        return self.update_conversation(conversation_id, ConversationPatch(mode=mode), actor=actor)

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

    def call_origins(self, conversation_id: str, call_ids: Sequence[str]) -> dict[str, ToolOrigin]:
        """Which tool made each of these calls, in which turn (counted from 1) and after which
        message of the person; calls this conversation does not hold are left out."""
        with self.db.read() as session:
            repo = ChatRepository(session)
            calls = repo.calls_with_turns(conversation_id, list(dict.fromkeys(call_ids)))
            latest = max((seq for _, seq in calls), default=0)
            asked = repo.user_messages(conversation_id, latest) if calls else []
        found = {}
        for call, seq in calls:
            before = [content for user_seq, content in asked if user_seq < seq]
            message = before[-1] if before else ""
            found[call.call_id] = ToolOrigin(f"{call.server}.{call.tool}", len(before), message)
        return found

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
            row.updated_at = utc_now()
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
            now = utc_now()
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
            if seq == 0 and row.title == DEFAULT_TITLE:
                row.title = _title(request.message)
            repo.add(message_row(conversation_id, seq, role="user", content=request.message))
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


def utc_now() -> datetime:
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


def message_row(
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
        created_at=utc_now(),
    )


def _title(message: str) -> str:
    """A readable title from a first message: its first line, and a slash command in words
    (`/kg.queryNeighbors TP53` is "Query neighbors of TP53")."""
    first = " ".join(next((line for line in message.splitlines() if line.strip()), "").split())
    if first.startswith("/"):
        command, _, rest = first[1:].partition(" ")
        words = _words(command.rsplit(".", 1)[-1]) or "Command"
        first = f"{words} of {rest}" if rest else words
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1] + "…"


def _words(name: str) -> str:
    """`queryNeighbors` or `query_neighbors` as "Query neighbors"."""
    spaced = "".join(f" {c.lower()}" if c.isupper() else c for c in name.replace("_", " "))
    return " ".join(spaced.split()).capitalize()


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
