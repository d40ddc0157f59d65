"""Creating, searching, renaming and deleting conversations, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from graphwright.app import create_app
from graphwright.artifacts.service import ArtifactUpdateInput, ListArtifactsInput
from graphwright.chat.mcp_manager import McpManager
from graphwright.chat.models import ConversationCreate, ConversationPatch, Mode
from graphwright.chat.service import ChatService
from graphwright.core.artifacts import Artifact, Part
from graphwright.db import Database
from graphwright.errors import Conflict, NotFound
from graphwright.graphmode.schemas import NodeInput
from graphwright.settings import Settings
from tests.chat.fakes import chat_service


@pytest.fixture
def service(database: Database) -> ChatService:
    return chat_service(database, McpManager({}), api_base_url="http://127.0.0.1:9")


def test_create_search_and_rename(service: ChatService) -> None:
    service.create_conversation(ConversationCreate(id="a", title="TP53 in diabetes"), actor="t")
    service.create_conversation(ConversationCreate(id="b", title="100% BRCA1_x"), actor="t")
    made = service.create_conversation(ConversationCreate(mode=Mode.GRAPH), actor="t")
    assert made["mode"] == "graph_mode" and made["title"] == "New conversation"
    assert [c["id"] for c in service.list_conversations(text="tp53")] == ["a"]
    # LIKE wildcards in the search text are matched literally
    assert [c["id"] for c in service.list_conversations(text="100%")] == ["b"]
    assert [c["id"] for c in service.list_conversations(text="A1_X")] == ["b"]
    assert service.list_conversations(text="A_X") == []
    assert service.list_conversations(text="%") == [
        c for c in service.list_conversations() if c["id"] == "b"
    ]
    assert service.list_conversations(text="brca", only="a") == []
    service.update_conversation("a", ConversationPatch(title="renamed"), actor="t")
    assert service.get_conversation("a")["title"] == "renamed"
    with pytest.raises(Conflict, match="already exists"):
        service.create_conversation(ConversationCreate(id="a"), actor="t")


def test_delete_takes_messages_artifacts_and_graph(service: ChatService) -> None:
    service.create_conversation(ConversationCreate(id="gone", title="x"), actor="t")
    service.create_conversation(ConversationCreate(id="kept", title="y"), actor="t")
    for cid in ("gone", "kept"):
        service.graphs.add_node(cid, NodeInput(label="TP53", type="gene"), actor="t")
        service.artifacts.artifact_update(
            ArtifactUpdateInput(artifact=Artifact(name="doc", parts=[Part(text="hello")])),
            context_id=cid,
        )
    service.delete_conversation("gone")
    with pytest.raises(NotFound):
        service.get_conversation("gone")
    assert service.graphs.version("gone") == 0
    assert service.artifacts.list_artifacts(ListArtifactsInput(), context_id="gone") == []
    # the other conversation is untouched
    assert service.graphs.version("kept") == 1
    assert len(service.artifacts.list_artifacts(ListArtifactsInput(), context_id="kept")) == 1
    with pytest.raises(NotFound):
        service.delete_conversation("gone")


def test_the_rest_api_creates_searches_and_deletes(database: Database, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, database_url=database.url, offline=True, model=None)
    app = create_app(settings, database=database)
    with TestClient(app) as client:
        auth = {"Authorization": f"Bearer {app.state.auth_service.mint(label='t')}"}
        made = client.post("/api/conversations", json={"id": "c1", "title": "TP53"}, headers=auth)
        assert made.status_code == 201 and made.json()["data"]["mode"] == "normal"
        client.post("/api/conversations", json={"title": "Other"}, headers=auth)
        found = client.get("/api/conversations", params={"q": "tp5"}, headers=auth).json()
        assert [c["id"] for c in found["data"]] == ["c1"]
        again = client.post("/api/conversations", json={"id": "c1"}, headers=auth)
        assert again.status_code == 409
        assert client.delete("/api/conversations/c1", headers=auth).status_code == 200
        assert client.get("/api/conversations/c1", headers=auth).status_code == 404
        scoped = {"Authorization": f"Bearer {app.state.auth_service.mint(conversation_id='c9')}"}
        refused = client.post("/api/conversations", json={"id": "c2"}, headers=scoped)
        assert refused.status_code == 403
        assert client.post("/api/conversations", json={}, headers=scoped).status_code == 403


@pytest.mark.parametrize("round_", range(3))
def test_creating_one_conversation_at_once_makes_it_once_and_answers_cleanly(
    service: ChatService, round_: int
) -> None:
    """Issue 29, M4: requests racing to create one conversation id (explicitly, and on first
    use by a chat turn) make it once; the others get a clean Conflict or the conversation,
    never a database error."""
    conversation_id = f"raced-{round_}"
    start = threading.Barrier(12)
    outcomes: list[str] = []

    def create() -> None:
        start.wait()
        try:
            service.create_conversation(ConversationCreate(id=conversation_id), actor="t")
            outcomes.append("made")
        except Conflict:
            outcomes.append("conflict")

    def first_use() -> None:
        start.wait()
        service._ensure_conversation(conversation_id, None, actor="t")
        outcomes.append("used")

    threads = [threading.Thread(target=create) for _ in range(6)]
    threads += [threading.Thread(target=first_use) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(outcomes) == 12, outcomes  # no thread died of an IntegrityError
    assert outcomes.count("used") == 6 and outcomes.count("made") <= 1
    assert [c["id"] for c in service.list_conversations(only=conversation_id)] == [conversation_id]
