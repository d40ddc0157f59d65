"""graphwright's chat calling remote A2A agents as tools: a second graphwright is the remote."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
import pytest_asyncio

from graphwright.app import create_app
from graphwright.chat.models import ChatRequest
from graphwright.chat.service import ChatService
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH
from tests.a2a.conftest import LiveServer, graphwright_settings, serve
from tests.conftest import free_port

pytestmark = pytest.mark.asyncio(loop_scope="module")


@dataclass
class Pair:
    local: LiveServer
    remote: LiveServer

    @property
    def chat(self) -> ChatService:
        return self.local.app.state.chat_service

    async def turn(self, message: str) -> dict[str, Any]:
        handle = await self.chat.start_turn(ChatRequest(message=message), actor="a2a client test")
        return await handle.response()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pair(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str
) -> AsyncIterator[Pair]:
    remote_port = free_port()
    remote_home = tmp_path_factory.mktemp("remote")
    remote_app = create_app(
        graphwright_settings(remote_home, remote_port, f"sqlite:///{remote_home / 'remote.db'}")
    )
    remote = await serve(remote_app, remote_port)
    token = remote_app.state.auth_service.mint(label="the local graphwright")
    port = free_port()
    agents = {
        "remote": {"url": remote.url, "headers": {"Authorization": f"Bearer {token}"}},
        "gone": {"url": f"http://127.0.0.1:{free_port()}", "timeout": 10},
    }
    settings = graphwright_settings(
        tmp_path_factory.mktemp("local"), port, module_database_url, a2aAgents=agents
    )
    local = await serve(create_app(settings), port)
    try:
        yield Pair(local, remote)
    finally:
        await local.stop()
        await remote.stop()


async def test_remote_skills_are_tools_and_their_graph_merges_into_the_turn(pair: Pair) -> None:
    help_text = (await pair.turn("/help"))["content"]
    assert "/remote.knowledge-graph" in help_text and "/remote.bibliography" in help_text

    response = await pair.turn(
        '/remote.knowledge-graph "/kg.queryNeighbors TP53"\n'
        '/remote.bibliography "/literature.searchPubMed TP53"\n'
        "/kg.queryNeighbors BRCA1"
    )
    assert [c["tool"] for c in response["toolCalls"]] == [
        "remote.knowledge-graph",
        "remote.bibliography",
        "kg.queryNeighbors",
    ]
    assert not any(c["isError"] for c in response["toolCalls"])
    artifacts = {a["type"]: a for a in response["artifacts"]}
    assert set(artifacts) == {KNOWLEDGE_GRAPH, BIBLIOGRAPHY}  # the remote answer is text
    graph = orjson.loads(artifacts[KNOWLEDGE_GRAPH]["content"])
    ids = {node["id"] for node in graph["nodes"]}
    assert {"NCBIGene:7157", "NCBIGene:672"} <= ids  # remote TP53 and local BRCA1, merged
    citations = orjson.loads(artifacts[BIBLIOGRAPHY]["content"])
    assert any(c.get("pmid") for c in citations)
    assert "A2A task" in response["content"]

    # The remote agent ran the turn in its own conversation, stored like any other.
    remote_chat: ChatService = pair.remote.app.state.chat_service
    stored = [
        artifact["mediaType"]
        for conversation in remote_chat.list_conversations()
        for artifact in remote_chat.get_conversation(conversation["id"])["artifacts"]
    ]
    assert sorted(stored) == sorted([KNOWLEDGE_GRAPH, BIBLIOGRAPHY])


async def test_an_unreachable_agent_is_reported_and_the_turn_goes_on(pair: Pair) -> None:
    handle = await pair.chat.start_turn(ChatRequest(message="/help"), actor="test")
    events = [event async for event in handle.events()]
    errors = [e.data for e in events if e.type == "error"]
    assert any(e.get("server") == "gone" and "could not be reached" in e["message"] for e in errors)
    done = events[-1].data
    assert done["status"] == "complete" and "/remote.grant" in done["content"]
