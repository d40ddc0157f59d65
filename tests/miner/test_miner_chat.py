"""The chat's side of the miner: the `#tag` prefix the model sees (seed 001's message
injection), and the miner server offered in normal mode only."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from graphwright import mcp_registry
from graphwright.chat.mcp_manager import McpManager
from graphwright.chat.models import ChatRequest, Mode
from graphwright.chat.modes import servers_for
from graphwright.chat.turn import Turn, TurnContext
from graphwright.miner.tags import tagged_message
from tests.chat.fakes import ScriptedChatModel


async def test_the_model_sees_the_tags_before_the_text() -> None:
    model = ScriptedChatModel.with_script(["Noted."])
    context = TurnContext("c1", Mode.NORMAL, "Vendor risks?", domain_tags=["general_risk", "x"])
    manager = McpManager({})
    await Turn(context, manager=manager, model=model, emit=lambda *_: None).run()
    await manager.aclose()

    [human] = [m for m in model.received[0] if isinstance(m, HumanMessage)]
    assert human.content == "#general_risk #x\n\nVendor risks?"
    assert context.message == "Vendor risks?"  # stored and matched as the person typed it


def test_the_request_carries_tags_and_no_tags_changes_nothing() -> None:
    request = ChatRequest.model_validate({"message": "hi", "domainTags": ["supply_chain"]})
    assert request.domain_tags == ["supply_chain"]
    assert tagged_message("hi", []) == "hi"


def test_the_miner_is_offered_in_normal_mode_only() -> None:
    assert "miner" in servers_for(Mode.NORMAL, mcp_registry.names())
    assert "miner" not in servers_for(Mode.GRAPH, mcp_registry.names())
