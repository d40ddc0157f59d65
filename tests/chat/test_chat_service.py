"""ChatService on the test database (SQLite, and PostgreSQL when configured): what a turn stores,
how a conversation reloads, artifact versions across turns, mode switches, and turn rules."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from pydantic import Field
from sqlalchemy import select

from graphwright.auth.models import AuthToken
from graphwright.auth.service import AuthService
from graphwright.chat import tool_results
from graphwright.chat.config import StdioServer
from graphwright.chat.mcp_manager import McpManager
from graphwright.chat.models import ChatRequest, ConversationPatch, Mode
from graphwright.chat.service import ChatService
from graphwright.chat.turn import Turn
from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from graphwright.db import Database
from graphwright.errors import Conflict, Forbidden, NotFound
from tests.chat.fakes import ScriptedChatModel, SlowSettling, call, chat_service, reply

FLAKY = Path(__file__).parents[1] / "fixtures" / "chat" / "flaky_server.py"

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def manager() -> AsyncIterator[McpManager]:
    manager = McpManager({"flaky": StdioServer(command=sys.executable, args=[str(FLAKY)])})
    yield manager
    await manager.aclose()


@pytest.fixture
def service(database: Database, manager: McpManager) -> ChatService:
    return chat_service(database, manager, api_base_url="http://127.0.0.1:8000/")


async def turn(service: ChatService, message: str, **fields: Any) -> dict[str, Any]:
    handle = await service.start_turn(ChatRequest(message=message, **fields), actor="tester")
    return await handle.response()


def graph_of(response: dict[str, Any]) -> dict[str, Any]:
    [artifact] = [a for a in response["artifacts"] if a["type"] == KNOWLEDGE_GRAPH]
    return artifact


async def test_turns_are_stored_and_reload_with_artifact_versions(service: ChatService) -> None:
    first = await turn(service, "/flaky.chain A,B", conversationId="c1")
    second = await turn(service, "/flaky.chain B,C\n/flaky.echo hi", conversationId="c1")
    one, two = graph_of(first), graph_of(second)
    assert two["artifactId"] == one["artifactId"]
    assert two["metadata"]["previousVersionId"] == one["id"]
    nodes = {node["id"] for node in orjson.loads(two["content"])["nodes"]}
    assert nodes == {"A", "B", "C"}

    body = service.get_conversation("c1")
    assert body["title"] == "Chain of A,B" and body["mode"] == "normal"  # readable title
    roles = [(m["role"], m["status"]) for m in body["messages"]]
    assert roles == [("user", "complete"), ("assistant", "complete")] * 2
    answers = [m for m in body["messages"] if m["role"] == "assistant"]
    assert [[a["version"] for a in m["artifacts"]] for m in answers] == [[1], [2]]
    assert orjson.loads(answers[0]["artifacts"][0]["content"]) == orjson.loads(one["content"])
    assert [c["tool"] for c in answers[1]["toolCalls"]] == ["flaky.chain", "flaky.echo"]
    assert answers[1]["toolCalls"][1]["result"] == "hi"
    [stored] = body["artifacts"]
    assert [v["version"] for v in stored["versions"]] == [1, 2]


async def test_the_model_sees_the_conversation_so_far(service: ChatService) -> None:
    service.model = ScriptedChatModel.with_script(["First answer.", "Second answer."])
    await turn(service, "First question?", conversationId="h1")
    await turn(service, "Second question?", conversationId="h1")
    history = [(type(m).__name__, m.content) for m in service.model.received[1][1:]]
    assert history == [
        ("HumanMessage", "First question?"),
        ("AIMessage", "First answer."),
        ("HumanMessage", "Second question?"),
    ]


async def test_a_model_answer_that_cannot_be_stored_as_text_is_stored_with_replacements(
    service: ChatService,
) -> None:
    """A model (any OpenAI-compatible server) may answer a NUL or a lone surrogate, which
    PostgreSQL cannot store: the answer is kept, each such character shown as U+FFFD, alike on
    both backends, and the next turn sees what was stored."""
    service.model = ScriptedChatModel.with_script(["Odd \x00 answer \ud800 here.", "Fine."])
    answered = await turn(service, "Anything?", conversationId="odd1")
    assert answered["status"] == "complete", answered["content"]
    assert answered["content"] == "Odd \ufffd answer \ufffd here."
    [_, stored] = service.get_conversation("odd1")["messages"]
    assert stored["content"] == "Odd \ufffd answer \ufffd here." and stored["status"] == "complete"
    await turn(service, "Again?", conversationId="odd1")
    assert service.model.received[1][2].content == "Odd \ufffd answer \ufffd here."


async def test_a_tool_result_that_cannot_be_stored_as_text_is_stored_with_replacements(
    service: ChatService,
) -> None:
    """An MCP server may answer a NUL, in its text or escaped in a graph's JSON, which PostgreSQL
    cannot store: the turn, its tool call and its graph are kept, the NUL shown as U+FFFD, alike on
    both backends."""
    answered = await turn(service, "/flaky.odd", conversationId="odd2")
    assert answered["status"] == "complete", answered["content"]
    [stored] = [m for m in service.get_conversation("odd2")["messages"] if m["role"] == "assistant"]
    assert stored["status"] == "complete"
    assert stored["toolCalls"][0]["result"].startswith("odd \ufffd result")
    [node] = orjson.loads(graph_of(answered)["content"])["nodes"]
    assert node["name"] == "X\ufffd"
    assert orjson.loads(stored["artifacts"][0]["content"])["nodes"] == [node]


async def test_entering_graph_mode_seeds_the_graph_from_the_merged_artifact(
    service: ChatService,
) -> None:
    await turn(service, "/flaky.chain A,B,C", conversationId="g1")
    updated = service.update_conversation(
        "g1", ConversationPatch(mode=Mode.GRAPH, title="Chain"), actor="tester"
    )
    assert updated["mode"] == "graph_mode" and updated["title"] == "Chain"
    graph = service.graphs.to_graph("g1")
    assert sorted(node["id"] for node in graph["nodes"]) == ["A", "B", "C"]
    assert len(graph["links"]) == 2
    version = service.graphs.version("g1")
    # Back to normal and in again with nothing learned in between: the graph is left alone.
    service.update_conversation("g1", ConversationPatch(mode=Mode.NORMAL), actor="tester")
    service.update_conversation("g1", ConversationPatch(mode=Mode.GRAPH), actor="tester")
    assert service.graphs.version("g1") == version
    # Remove a node in Graph Mode, learn more in normal mode, come back: only the new knowledge
    # arrives, and the removed node stays removed.
    service.graphs.remove_node("g1", "A", actor="tester")
    await turn(service, "/flaky.chain C,D", conversationId="g1", mode=Mode.NORMAL)
    await turn(service, "/help", conversationId="g1", mode=Mode.GRAPH)
    graph = service.graphs.to_graph("g1")
    assert sorted(node["id"] for node in graph["nodes"]) == ["B", "C", "D"]
    assert sorted((link["source"], link["target"]) for link in graph["links"]) == [
        ("B", "C"),
        ("C", "D"),
    ]
    with pytest.raises(NotFound, match="No conversation 'nope'"):
        service.update_conversation("nope", ConversationPatch(title="x"), actor="tester")


async def test_a_graph_mode_turn_gets_a_scoped_short_lived_token(service: ChatService) -> None:
    response = await turn(service, "/help", conversationId="g2", mode=Mode.GRAPH)
    assert response["mode"] == "graph_mode"
    assert response["graph"] == {"conversationId": "g2", "version": 0}
    with service.db.read() as session:
        turn_tokens = session.scalars(
            select(AuthToken).where(AuthToken.conversation_id == "g2")
        ).all()
    assert turn_tokens and all(t.revoked_at is not None for t in turn_tokens)
    assert {t.label for t in turn_tokens} == {"tester"}
    context = service._database_context("g2", "tester")
    assert context["conversationId"] == "g2"
    assert context["apiBaseUrl"] == "http://127.0.0.1:8000"
    principal = service.auth.authenticate(context["accessToken"])
    assert principal.conversation_id == "g2"
    with pytest.raises(Forbidden):
        AuthService.authorize(principal, "another")
    with service.db.read() as session:
        token = session.scalar(select(AuthToken).where(AuthToken.id == principal.token_id))
        assert token is not None and token.expires_at is not None
        lifetime = token.expires_at - token.created_at
    assert timedelta(minutes=1) <= lifetime <= timedelta(hours=1)


async def test_one_turn_at_a_time_and_cancel(service: ChatService) -> None:
    service.model = ScriptedChatModel.with_script(
        [reply("Started.", call("flaky__sleep", seconds=20)), reply("never")]
    )
    handle = await service.start_turn(
        ChatRequest(conversationId="busy", message="go"), actor="tester"
    )
    async for event in handle.events():  # until the turn is in its tool call
        if event.type == "tool_call":
            break
    with pytest.raises(Conflict, match="already running"):
        await service.start_turn(ChatRequest(conversationId="busy", message="again"), actor="t")
    with pytest.raises(Conflict, match="before switching mode"):
        service.update_conversation("busy", ConversationPatch(mode=Mode.GRAPH), actor="tester")
    assert await service.cancel("busy")
    response = await handle.response()
    assert response["status"] == "cancelled" and response["content"] == "Started."
    events = [event.type async for event in handle.events()]
    assert events[-1] == "done"
    assert not await service.cancel("busy")
    assert service.get_conversation("busy")["messages"][-1]["status"] == "cancelled"


async def test_a_turn_whose_artifacts_fail_to_settle_is_stored_failed_once(
    service: ChatService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure fails the turn, and the turn still ends: stored, announced `done`, and the
    conversation free for its next turn."""

    def broken(_results: tool_results.ToolResults) -> Any:
        raise RuntimeError("the artifacts could not be merged")

    with monkeypatch.context() as patch:
        patch.setattr(tool_results.ToolResults, "settle", broken)
        handle = await service.start_turn(
            ChatRequest(conversationId="unsettled", message="/flaky.chain A,B"), actor="tester"
        )
        response = await asyncio.wait_for(handle.response(), 30)
    assert response["status"] == "failed"
    assert service.get_conversation("unsettled")["messages"][-1]["status"] == "failed"
    assert (await turn(service, "/flaky.chain A,B", conversationId="unsettled"))["status"] == (
        "complete"
    )


async def test_a_second_cancel_waits_for_the_first_to_end_the_turn(
    service: ChatService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel that lands while the first one's turn is settling its artifacts, to be stored as
    cancelled, must not interrupt that: the turn is stored once, with its artifacts."""
    settling = SlowSettling(monkeypatch, 0.5)
    handle = await service.start_turn(
        ChatRequest(conversationId="twice", message="/flaky.chain A,B"), actor="tester"
    )
    await settling.started()

    async def again() -> bool:
        await asyncio.sleep(0.1)
        return await service.cancel("twice")

    await asyncio.wait_for(asyncio.gather(service.cancel("twice"), again()), 30)
    response = await asyncio.wait_for(handle.response(), 30)
    assert response["status"] == "cancelled"
    assert [a["type"] for a in response["artifacts"]] == [KNOWLEDGE_GRAPH]
    assert "twice" not in service._running


async def test_a_cancel_whose_caller_goes_away_still_ends_the_turn_once(
    service: ChatService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller of a cancel may itself be cancelled while it waits (a client that disconnects
    from the cancel request): its wait must not become a second cancel of the turn."""
    settling = SlowSettling(monkeypatch, 0.5)
    handle = await service.start_turn(
        ChatRequest(conversationId="gone", message="/flaky.chain A,B"), actor="tester"
    )
    await settling.started()
    caller = asyncio.create_task(service.cancel("gone"))
    await asyncio.sleep(0.1)
    caller.cancel()
    response = await asyncio.wait_for(handle.response(), 30)
    assert response["status"] == "cancelled"
    assert [a["type"] for a in response["artifacts"]] == [KNOWLEDGE_GRAPH]
    assert "gone" not in service._running


async def test_a_cancel_asked_for_as_the_turn_starts_ends_it(service: ChatService) -> None:
    """A cancel made before the turn's task has taken its first step (an A2A cancel that came
    while the turn was being prepared) still ends the turn: stored, announced, conversation free."""
    handle = await service.start_turn(
        ChatRequest(conversationId="at-once", message="/flaky.echo hi"), actor="tester"
    )
    assert await service.cancel("at-once")  # no await between: the turn's task has not begun
    response = await asyncio.wait_for(handle.response(), 30)
    assert response["status"] == "cancelled"
    assert "at-once" not in service._running
    assert (await turn(service, "/flaky.echo again", conversationId="at-once"))["status"] == (
        "complete"
    )


async def test_a_cancelled_turn_whose_artifacts_fail_to_settle_still_ends(
    service: ChatService, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_results: tool_results.ToolResults) -> Any:
        time.sleep(0.3)
        raise RuntimeError("the artifacts could not be merged")

    monkeypatch.setattr(tool_results.ToolResults, "settle", broken)
    handle = await service.start_turn(
        ChatRequest(conversationId="cancel-broken", message="/flaky.chain A,B"), actor="tester"
    )
    await asyncio.sleep(0.1)
    await asyncio.wait_for(service.cancel("cancel-broken"), 30)
    response = await asyncio.wait_for(handle.response(), 30)
    assert response["status"] == "failed"
    assert "cancel-broken" not in service._running


async def test_a_cancel_while_a_failed_turn_is_ending_waits_for_it(
    service: ChatService, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing(_turn: Turn) -> None:
        raise RuntimeError("the turn broke")

    monkeypatch.setattr(Turn, "run", failing)
    settling = SlowSettling(monkeypatch, 0.5)
    handle = await service.start_turn(
        ChatRequest(conversationId="failing", message="/flaky.echo hi"), actor="tester"
    )
    await settling.started()
    assert not await asyncio.wait_for(service.cancel("failing"), 30)
    response = await asyncio.wait_for(handle.response(), 30)
    assert response["status"] == "failed"
    assert "failing" not in service._running


async def test_cancelling_a_turn_that_has_ended_leaves_the_next_one_running(
    service: ChatService,
) -> None:
    first = await service.start_turn(
        ChatRequest(conversationId="next", message="/flaky.echo first"), actor="tester"
    )
    await first.response()
    second = await service.start_turn(
        ChatRequest(conversationId="next", message="/flaky.sleep 1"), actor="tester"
    )
    assert not await service.cancel("next", first)
    assert (await second.response())["status"] == "complete"


class CancelledAsItsTimeoutFires(ScriptedChatModel):
    """A model call whose own timeout fires, and the person cancels the turn in that instant;
    then the call, as an SDK's would, tries again after its timeout."""

    service: Any = None
    conversation_id: str = ""
    cancelled: list[asyncio.Task[bool]] = Field(default_factory=list)

    async def _astream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.01):
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:  # the timeout's own cancel of this task
                    cancel = self.service.cancel(self.conversation_id)
                    self.cancelled.append(asyncio.create_task(cancel))
                    await asyncio.sleep(0)  # the cancel runs now, inside the timeout
                    raise
        async for chunk in super()._astream(messages, *args, **kwargs):
            yield chunk


async def test_a_cancel_that_lands_as_a_timeout_inside_the_turn_fires_still_ends_it(
    service: ChatService,
) -> None:
    """A timeout inside the turn cancels the turn's task too: the person's cancel must not be
    taken for it (and swallowed with it when the timeout ends), so the turn ends cancelled."""
    model = CancelledAsItsTimeoutFires(
        messages=iter([reply("should never be said")]),
        service=service,
        conversation_id="timeout",
    )
    service.model = model
    handle = await service.start_turn(
        ChatRequest(conversationId="timeout", message="go"), actor="tester"
    )
    response = await asyncio.wait_for(handle.response(), 30)
    assert response["status"] == "cancelled"
    assert "should never be said" not in response["content"]
    [cancel] = model.cancelled
    assert await cancel


async def test_listing_is_newest_first_and_can_be_limited_to_one(service: ChatService) -> None:
    for name in ("l1", "l2", "l3"):
        await turn(service, "/help", conversationId=name)
    assert [c["id"] for c in service.list_conversations()] == ["l3", "l2", "l1"]
    assert [c["id"] for c in service.list_conversations(limit=1, offset=1)] == ["l2"]
    assert [c["id"] for c in service.list_conversations(only="l1")] == ["l1"]
