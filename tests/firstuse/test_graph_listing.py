"""A write to a mistyped conversation id makes a stand-alone graph: `GET /api/graphs` lists it,
and a change to a missing node of a missing graph says the graph does not exist."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_stand_alone_graphs_are_listed(client: TestClient, auth: dict[str, str]) -> None:
    for conversation in ("typo-1", "typo-2"):
        response = client.post(
            f"/api/graph/{conversation}/nodes", headers=auth, json={"label": "a", "type": "g"}
        )
        assert response.status_code == 201
    client.post("/api/graph/typo-2/nodes", headers=auth, json={"label": "b", "type": "g"})
    listed = client.get("/api/graphs", headers=auth)
    assert listed.status_code == 200, listed.text
    graphs = {g["conversationId"]: g for g in listed.json()["data"]["items"]}
    assert graphs.keys() == {"typo-1", "typo-2"}
    assert graphs["typo-2"]["version"] == 2 and graphs["typo-2"]["nodeCount"] == 2
    assert graphs["typo-1"]["hasConversation"] is False
    assert listed.json()["data"]["total"] == 2
    page = client.get("/api/graphs?limit=1&offset=1", headers=auth).json()["data"]
    assert len(page["items"]) == 1 and page["total"] == 2
    assert client.get("/api/graphs").status_code == 401


def test_scoped_token_lists_only_its_graph(client: TestClient, app, auth: dict[str, str]) -> None:
    for conversation in ("mine", "theirs"):
        client.post(
            f"/api/graph/{conversation}/nodes", headers=auth, json={"label": "a", "type": "g"}
        )
    scoped = {"Authorization": f"Bearer {app.state.auth_service.mint(conversation_id='mine')}"}
    items = client.get("/api/graphs", headers=scoped).json()["data"]["items"]
    assert [g["conversationId"] for g in items] == ["mine"]


def test_patch_on_a_missing_graph_says_the_graph_does_not_exist(
    client: TestClient, auth: dict[str, str]
) -> None:
    response = client.patch("/api/graph/nosuch/nodes/X:1", headers=auth, json={"label": "b"})
    assert response.status_code == 404
    assert "Conversation 'nosuch' has no graph" in response.json()["error"]["message"]
    response = client.delete("/api/graph/nosuch/edges/e1", headers=auth)
    assert "has no graph" in response.json()["error"]["message"]
    assert client.get("/api/graphs", headers=auth).json()["data"]["items"] == []
