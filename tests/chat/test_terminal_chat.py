"""`graphwright chat`: the terminal chat streams a turn from a live server, runs slash commands
without a model, and keeps one conversation across lines."""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from graphwright.chat.slash import slash_words
from graphwright.cli import app
from tests.chat.conftest import Live
from tests.chat.fakes import ScriptedChatModel

ON_THE_LIVE_SERVER = pytest.mark.asyncio(loop_scope="module")


async def _chat(live: Live, *args: str, lines: str = "") -> str:
    url = str(live.client.base_url)
    outcome = await asyncio.to_thread(
        CliRunner().invoke,
        app,
        ["chat", "--url", url, "--token", live.token, *args],
        input=lines,
        terminal_width=200,
    )
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


@ON_THE_LIVE_SERVER
async def test_a_message_streams_the_models_answer(live: Live) -> None:
    live.service.model = ScriptedChatModel.with_script(["TP53 binds MDM2, as far as I know."])
    output = await _chat(live, "--conversation", "term-1", "How are TP53 and MDM2 related?")
    assert "TP53 binds MDM2, as far as I know." in output
    conversation = await live.client.get("/api/conversations/term-1")
    messages = conversation.json()["data"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]


@ON_THE_LIVE_SERVER
async def test_lines_continue_one_conversation_and_slash_commands_work_without_a_model(
    live: Live,
) -> None:
    live.service.model = None
    output = await _chat(live, "--conversation", "term-2", lines="/help\n/quit\n")
    assert "Tools you can call" in output
    assert "/graph.addNode" in output or "/kg." in output
    conversation = await live.client.get("/api/conversations/term-2")
    assert conversation.status_code == 200


def test_slash_completion_offers_the_tools_an_answer_named() -> None:
    words = slash_words("- `/kg.queryNeighbors ENTITY`: neighbours\n- `/graph.undo`", {"/help"})
    assert words == {"/help", "/kg.queryNeighbors", "/graph.undo"}
