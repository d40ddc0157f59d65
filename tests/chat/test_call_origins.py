"""Which tool made a call, in which turn: what a graph item's provenance says in words."""

from __future__ import annotations

import pytest

from graphwright.chat.conversations import message_row
from graphwright.chat.mcp_manager import McpManager
from graphwright.chat.models import ConversationCreate, ToolCallRecord
from graphwright.chat.repository import ChatRepository
from graphwright.chat.service import ChatService
from graphwright.core.item_card import ToolOrigin
from graphwright.db import Database
from tests.chat.fakes import chat_service


@pytest.fixture
def service(database: Database) -> ChatService:
    return chat_service(database, McpManager({}), api_base_url="http://127.0.0.1:9")


def _turn(service: ChatService, cid: str, seq: int, asked: str, calls: list[str]) -> None:
    with service.db.write() as session:
        repo = ChatRepository(session)
        repo.add(message_row(cid, seq, role="user", content=asked))
        answer = message_row(cid, seq + 1, role="assistant", content="done")
        repo.add(answer)
        repo.add_all(
            [
                ToolCallRecord(
                    message_id=answer.id, call_id=call, step=1, server="kg",
                    tool="queryNeighbors", arguments={}, result_text="", is_error=False,
                    duration_ms=1.0, created_at=answer.created_at,
                )
                for call in calls
            ]
        )  # fmt: skip


def test_call_origins_name_the_tool_the_turn_and_its_message(service: ChatService) -> None:
    for cid in ("a", "b"):
        service.create_conversation(ConversationCreate(id=cid), actor="t")
    _turn(service, "a", 0, "/kg.queryNeighbors TP53", ["cmd-1-1"])
    _turn(service, "a", 2, "and BRCA1?", ["call_x", "call_y"])
    _turn(service, "b", 0, "elsewhere", ["call_z"])
    found = service.call_origins("a", ["cmd-1-1", "call_y", "call_z", "import-12", "cmd-1-1"])
    assert found == {
        "cmd-1-1": ToolOrigin("kg.queryNeighbors", 1, "/kg.queryNeighbors TP53"),
        "call_y": ToolOrigin("kg.queryNeighbors", 2, "and BRCA1?"),
    }  # another conversation's call and ids of no call are left out
    assert service.call_origins("a", []) == {}
