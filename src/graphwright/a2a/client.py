"""Remote A2A agents as the chat's tools (`a2aAgents` in the MCP config file).

Each skill on a remote agent's card becomes a tool named `agent__skill`. A call sends one A2A
message with a2a-sdk's client and waits for the task to end. The result looks like an MCP
tool's, so the artifacts collector treats it like any other: the reply is text for the model, and
every artifact with a media type (a knowledge graph, a bibliography, markdown, a file) becomes an
embedded resource, so a remote knowledge graph merges into the turn's graph. A remote
graphwright's streamed answer is left out (it marks it `metadata.answer`): its text is the reply.
"""

from __future__ import annotations

import asyncio
import base64
import uuid
from typing import Any

import httpx
import mcp_types as types
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    AgentSkill,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.types import Artifact as ProtoArtifact
from a2a.utils.constants import TransportProtocol
from google.protobuf.json_format import MessageToDict

from graphwright.a2a.parts import ANSWER_KEY
from graphwright.chat.config import A2AAgentConfig
from graphwright.chat.mcp_manager import FullCallToolResult, ServerUnavailable, describe_exception
from graphwright.core.artifacts import dumps_json

CONNECT_SECONDS = 30.0
PLAIN_TYPES = ("", "text/plain")
MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "description": "What to ask the agent, in plain words."},
        "contextId": {
            "type": "string",
            "description": "Continue an earlier exchange with this agent (its contextId).",
        },
    },
    "required": ["message"],
}


class RemoteAgent:
    """One remote A2A agent: its card read on first use, its skills offered as tools."""

    def __init__(self, name: str, config: A2AAgentConfig) -> None:
        self.name = name
        self.config = config
        self._lock = asyncio.Lock()
        self._http: httpx.AsyncClient | None = None
        self._client: Client | None = None
        self._card: AgentCard | None = None

    async def tools(self) -> list[types.Tool]:
        card = await self._connect()
        return [_tool(self.name, card, skill) for skill in card.skills]

    async def call(self, tool: str, arguments: dict[str, Any]) -> FullCallToolResult:
        await self._connect()
        assert self._client is not None
        message = Message(
            role=Role.ROLE_USER,
            message_id=uuid.uuid4().hex,
            context_id=arguments.get("contextId") or None,
            parts=[Part(text=str(arguments.get("message", "")))],
            metadata={"skill": tool},
        )
        async with asyncio.timeout(self.config.timeout):
            async for event in self._client.send_message(SendMessageRequest(message=message)):
                if event.HasField("message"):
                    return _message_result(event.message)
                if event.HasField("task"):
                    return _task_result(self.name, event.task)
        return _failure(f"A2A agent '{self.name}' answered nothing")

    async def stop(self) -> None:
        async with self._lock:
            if self._client is not None:
                await self._client.close()
            if self._http is not None:
                await self._http.aclose()
            self._client = self._http = self._card = None

    async def _connect(self) -> AgentCard:
        async with self._lock:
            if self._card is not None:
                return self._card
            self._http = httpx.AsyncClient(
                headers=self.config.headers,
                timeout=httpx.Timeout(self.config.timeout, connect=CONNECT_SECONDS),
            )
            config = ClientConfig(
                streaming=False,
                httpx_client=self._http,
                supported_protocol_bindings=[TransportProtocol.JSONRPC.value],
            )
            try:
                card = await A2ACardResolver(self._http, self.config.url).get_agent_card()
                self._client = ClientFactory(config).create(card)
            except Exception as exc:
                await self._http.aclose()
                self._http = None
                raise ServerUnavailable(
                    f"A2A agent '{self.name}' at {self.config.url} could not be reached: "
                    f"{describe_exception(exc)}"
                ) from None
            self._card = card
            return card


def remote_agents(configs: dict[str, A2AAgentConfig]) -> dict[str, RemoteAgent]:
    return {name: RemoteAgent(name, config) for name, config in configs.items()}


def _tool(agent: str, card: AgentCard, skill: AgentSkill) -> types.Tool:
    examples = "; ".join(skill.examples[:5])
    description = f"{card.name} (A2A agent '{agent}'): {skill.name}. {skill.description}"
    if examples:
        description += f" Examples: {examples}"
    return types.Tool(name=skill.id, description=description, input_schema=MESSAGE_SCHEMA)


def _message_result(message: Message) -> FullCallToolResult:
    text = "\n".join(part.text for part in message.parts if part.WhichOneof("content") == "text")
    return FullCallToolResult(content=[types.TextContent(type="text", text=text or "(no text)")])


def _task_result(agent: str, task: Task) -> FullCallToolResult:
    state = task.status.state
    reply = "\n".join(
        part.text for part in task.status.message.parts if part.WhichOneof("content") == "text"
    )
    texts = [reply] if reply else []
    resources: list[types.ContentBlock] = []
    for artifact in task.artifacts:
        if MessageToDict(artifact.metadata).get(ANSWER_KEY):
            continue
        for index, part in enumerate(artifact.parts):
            kind = part.WhichOneof("content")
            if kind == "text" and part.media_type in PLAIN_TYPES:
                texts.append(part.text)
            elif kind == "url":
                texts.append(f"[{artifact.name or 'link'}: {part.url}]")
            elif (resource := _resource(agent, task, artifact, index, part)) is not None:
                resources.append(resource)
    name = TaskState.Name(state).removeprefix("TASK_STATE_").lower()
    texts.append(f"(A2A task {task.id} in context {task.context_id}: {name})")
    failed = state in (TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text="\n\n".join(texts))]
    return FullCallToolResult(content=[*content, *resources], is_error=failed)


def _resource(
    agent: str, task: Task, artifact: ProtoArtifact, index: int, part: Part
) -> types.EmbeddedResource | None:
    """One artifact part as an embedded resource with its media type, for the collector."""
    uri = f"a2a://{agent}/tasks/{task.id}/artifacts/{artifact.artifact_id}/{index}"
    meta = {"title": artifact.name} if artifact.name else None
    kind = part.WhichOneof("content")
    contents: types.TextResourceContents | types.BlobResourceContents
    if kind == "data":
        media_type = part.media_type or "application/json"
        text = dumps_json(MessageToDict(part)["data"])
        contents = types.TextResourceContents(uri=uri, mime_type=media_type, text=text, _meta=meta)
    elif kind == "text":
        contents = types.TextResourceContents(
            uri=uri, mime_type=part.media_type, text=part.text, _meta=meta
        )
    elif kind == "raw":
        contents = types.BlobResourceContents(
            uri=uri,
            mime_type=part.media_type or "application/octet-stream",
            blob=base64.b64encode(part.raw).decode(),
            _meta=meta,
        )
    else:
        return None  # a url part: its link is in the model's text, never fetched from here
    return types.EmbeddedResource(type="resource", resource=contents)


def _failure(text: str) -> FullCallToolResult:
    return FullCallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
