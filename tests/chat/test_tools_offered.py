"""The model and `/help` get each capability once, under one name: no internal `artifacts.*`
tools, and the knowledge tools under the DKG node's names only (the miner keeps its own names
inside itself)."""

from __future__ import annotations

import pytest

from tests.chat.conftest import Live
from tests.chat.fakes import ScriptedChatModel

ON_THE_LIVE_SERVER = pytest.mark.asyncio(loop_scope="module")
KNOWLEDGE = {"dkg-get", "dkg-sparql-query", "dkg-create", "dkg_get_asset_metadata"}


@ON_THE_LIVE_SERVER
async def test_a_turn_offers_no_internal_tool_and_no_capability_twice(live: Live) -> None:
    live.service.model = ScriptedChatModel.with_script(["ok"])
    await live.chat(conversationId="offered", message="What do you know about TP53?")
    offered = live.service.model.offered[0]
    assert len(offered) == len(set(offered))
    assert not [name for name in offered if name.startswith("artifacts__")]
    knowledge = {name.split("__", 1)[1] for name in offered if name.startswith("knowledge__")}
    assert knowledge == KNOWLEDGE


@ON_THE_LIVE_SERVER
async def test_help_lists_no_internal_tool_and_each_knowledge_tool_once(live: Live) -> None:
    live.service.model = None
    text = (await live.chat(conversationId="help", message="/help"))["content"]
    assert "/artifacts." not in text
    for name in KNOWLEDGE:
        assert text.count(f"/knowledge.{name} ") + text.count(f"/knowledge.{name}`") == 1, name
    assert "dkg_get_asset " not in text and "dkg_sparql " not in text
    refused = await live.chat(conversationId="help", message="/artifacts.list_artifacts")
    assert "No tool 'artifacts.list_artifacts'" in refused["content"]
