"""A scripted chat model for the chat tests: a real LangChain model that replies from a script.

It subclasses LangChain's own GenericFakeChatModel, accepts `bind_tools` (recording the tools it
was offered) and keeps tool calls when streamed, which the parent drops. It also records the
messages each call received, so tests can check what reached the model.

`chat_service` wires a ChatService to one database, as the chat tests and the chat benchmark use it.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import orjson
import pytest
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from pydantic import Field

from graphwright.artifacts.service import ArtifactService
from graphwright.artifacts.store import SqlArtifactStore
from graphwright.auth.service import AuthService
from graphwright.chat import tool_results
from graphwright.chat.mcp_manager import McpManager
from graphwright.chat.service import ChatService
from graphwright.chat.turn import MAX_STEPS
from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.service import GraphService

_ids = itertools.count(1)


def call(tool: str, /, **args: Any) -> dict[str, Any]:
    """One scripted tool call, with a unique id."""
    return {"name": tool, "args": args, "id": f"call_{next(_ids)}"}


def reply(text: str = "", *calls: dict[str, Any]) -> AIMessage:
    return AIMessage(content=text, tool_calls=list(calls))


def chat_service(
    database: Database, manager: McpManager, *, api_base_url: str, max_steps: int = MAX_STEPS
) -> ChatService:
    """A ChatService with no model (set `.model` per test) and its own services on `database`."""
    return ChatService(
        db=database,
        manager=manager,
        model=None,
        artifacts=ArtifactService(SqlArtifactStore(database)),
        graphs=GraphService(database, create_graph_events(database)),
        auth=AuthService(database),
        api_base_url=api_base_url,
        max_steps=max_steps,
    )


class ScriptedChatModel(GenericFakeChatModel):
    offered: list[list[str]] = Field(default_factory=list)
    schemas: dict[str, dict[str, Any]] = Field(default_factory=dict)
    received: list[list[BaseMessage]] = Field(default_factory=list)

    @classmethod
    def with_script(cls, script: Sequence[AIMessage | str]) -> ScriptedChatModel:
        return cls(messages=iter(script))

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        self.offered.append([tool["function"]["name"] for tool in tools])
        self.schemas.update({tool["function"]["name"]: tool["function"] for tool in tools})
        return self

    def _chunks(self, messages: list[BaseMessage]) -> Iterator[ChatGenerationChunk]:
        self.received.append(list(messages))
        message = next(self.messages)
        if isinstance(message, str):
            message = AIMessage(content=message)
        for token in re.split(r"(\s)", message.content) if message.content else []:
            if token:
                yield ChatGenerationChunk(message=AIMessageChunk(content=token, id=message.id))
        if message.tool_calls:
            chunks = [
                {
                    "name": tool_call["name"],
                    "args": orjson.dumps(tool_call["args"]).decode(),
                    "id": tool_call["id"],
                    "index": index,
                }
                for index, tool_call in enumerate(message.tool_calls)
            ]
            yield ChatGenerationChunk(
                message=AIMessageChunk(content="", tool_call_chunks=chunks, id=message.id)
            )

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        yield from self._chunks(messages)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            yield chunk


class SlowSettling:
    """Makes every turn's `ToolResults.settle` take `seconds` in its worker thread; `started`
    waits until one is under way (so that a test can cancel the turn there)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
        self._settling = threading.Event()
        settle = tool_results.ToolResults.settle

        def slow(results: tool_results.ToolResults) -> Any:
            self._settling.set()
            time.sleep(seconds)
            return settle(results)

        monkeypatch.setattr(tool_results.ToolResults, "settle", slow)

    async def started(self) -> None:
        while not self._settling.is_set():
            await asyncio.sleep(0.01)
