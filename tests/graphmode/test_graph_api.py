"""The REST API through FastAPI's test client: envelope, auth, errors, endpoints."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from graphwright.core.formats import read_graph
from graphwright.graphmode import api as graph_api
from tests.graphmode.conftest import LiveServer

BASE = "/api/graph/c1"


def post_node(client: TestClient, auth: dict[str, str], node_id: str, **extra: object) -> dict:
    response = client.post(
        f"{BASE}/nodes",
        headers=auth,
        json={"id": node_id, "label": node_id, "type": "gene", **extra},
    )
    assert response.status_code == 201, response.text
    return response.json()


def test_health_needs_no_token(client: TestClient) -> None:
    body = client.get("/health").json()
    assert body["success"] is True and body["data"]["status"] == "ok"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"{BASE}/state"),
        ("POST", f"{BASE}/nodes"),
        ("POST", f"{BASE}/undo"),
        ("GET", f"{BASE}/history"),
        ("GET", f"{BASE}/events"),
        ("GET", f"{BASE}/export"),
    ],
)
def test_every_graph_route_needs_a_token(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path, json={})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response.headers["www-authenticate"] == "Bearer"
    bad = client.request(method, path, json={}, headers={"Authorization": "Bearer gw_nope"})
    assert bad.status_code == 401


def test_scoped_token_cannot_touch_another_conversation(client: TestClient, app: FastAPI) -> None:
    scoped = {"Authorization": f"Bearer {app.state.auth_service.mint(conversation_id='c1')}"}
    assert (
        client.post(
            f"{BASE}/nodes", headers=scoped, json={"label": "a", "type": "gene"}
        ).status_code
        == 201
    )
    other = client.get("/api/graph/c2/state", headers=scoped)
    assert other.status_code == 403
    assert "'c1'" in other.json()["error"]["message"]


def test_node_crud_with_custom_id_alias(client: TestClient, auth: dict[str, str]) -> None:
    created = client.post(
        f"{BASE}/nodes",
        headers=auth,
        json={"label": "TP53", "type": "gene", "customId": "ncbigene:7157",
              "data": {"category": "gene"}, "position": {"x": 1, "y": 2}},
    )  # fmt: skip
    assert created.status_code == 201 and created.headers["etag"] == '"1"'
    body = created.json()
    assert body["version"] == 1
    assert body["data"]["id"] == "NCBIGene:7157" and body["data"]["position"] == {"x": 1, "y": 2}
    got = client.get(f"{BASE}/nodes/NCBIGene:7157", headers=auth).json()["data"]
    assert got["createdAt"].endswith("Z") or got["createdAt"].endswith("+00:00")
    patched = client.patch(f"{BASE}/nodes/NCBIGene:7157", headers=auth, json={"label": "p53"})
    assert patched.json()["data"]["label"] == "p53"
    deleted = client.delete(f"{BASE}/nodes/NCBIGene:7157", headers=auth)
    assert deleted.json()["message"] == "Node deleted successfully"
    assert client.get(f"{BASE}/nodes/NCBIGene:7157", headers=auth).status_code == 404


def test_errors_use_the_envelope(client: TestClient, auth: dict[str, str]) -> None:
    assert client.get("/api/graph/ghost/state", headers=auth).status_code == 404
    post_node(client, auth, "A:1")
    dup = client.post(f"{BASE}/nodes", headers=auth, json={"id": "A:1", "label": "a", "type": "g"})
    assert dup.status_code == 409 and "'A:1'" in dup.json()["error"]["message"]
    edge = client.post(f"{BASE}/edges", headers=auth, json={"source": "A:1", "target": "B:1"})
    assert edge.status_code == 404 and "'B:1'" in edge.json()["error"]["message"]
    invalid = client.post(f"{BASE}/nodes", headers=auth, json={"label": "no type"})
    assert invalid.status_code == 422
    assert invalid.json()["error"]["code"] == "invalid_input"
    assert "type" in invalid.json()["error"]["message"]
    garbage = client.post(
        f"{BASE}/nodes", headers={**auth, "content-type": "application/json"}, content=b"{"
    )
    assert garbage.status_code == 422 and garbage.json()["success"] is False


def test_oversized_body_is_413(client: TestClient, auth: dict[str, str]) -> None:
    big = {"label": "x", "type": "gene", "data": {"blob": "x" * 200_000}}
    response = client.post(f"{BASE}/nodes", headers=auth, json=big)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"

    def chunks():  # no Content-Length: the limit applies while the body streams in
        yield b'{"label": "x", "type": "gene", "data": {"blob": "'
        for _ in range(30):
            yield b"x" * 10_000
        yield b'"}}'

    streamed = client.post(f"{BASE}/nodes", headers=auth, content=chunks())
    assert streamed.status_code == 413


def test_version_conflict_by_if_match_and_query(client: TestClient, auth: dict[str, str]) -> None:
    post_node(client, auth, "A:1")
    stale = client.post(
        f"{BASE}/nodes", headers={**auth, "If-Match": '"0"'}, json={"label": "b", "type": "g"}
    )
    assert stale.status_code == 409
    assert stale.json()["error"] == {
        "code": "version_conflict",
        "message": "This graph is at version 1, not 0; reload it and try again",
        "currentVersion": 1,
    }
    stale_delete = client.delete(f"{BASE}/nodes/A:1?expectedVersion=5", headers=auth)
    assert stale_delete.status_code == 409
    fresh = client.delete(f"{BASE}/nodes/A:1", headers={**auth, "If-Match": 'W/"1"'})
    assert fresh.status_code == 200 and fresh.json()["version"] == 2


def test_bulk_batch_undo_redo_history_versions_diff(
    client: TestClient, auth: dict[str, str]
) -> None:
    nodes = [{"id": f"N:{i}", "label": f"n{i}", "type": "gene" if i % 2 else "drug"}
             for i in range(6)]  # fmt: skip
    assert client.post(f"{BASE}/nodes/bulk", headers=auth, json={"nodes": nodes}).status_code == 201
    edges = [{"source": f"N:{i}", "target": f"N:{i + 1}", "label": "r"} for i in range(5)]
    added = client.post(f"{BASE}/edges/bulk", headers=auth, json={"edges": edges}).json()
    edge_ids = [e["id"] for e in added["data"]]
    updated = client.patch(
        f"{BASE}/edges/bulk", headers=auth, json={"edges": [{"id": edge_ids[0], "type": "t"}]}
    )
    assert updated.json()["data"][0]["type"] == "t"
    preview = client.request(
        "DELETE", f"{BASE}/nodes/bulk", headers=auth, json={"types": ["drug"], "preview": True}
    ).json()
    assert preview["data"]["nodeIds"] == ["N:0", "N:2", "N:4"] and preview["version"] == 3
    removed = client.request(
        "DELETE", f"{BASE}/edges/bulk", headers=auth, json={"ids": edge_ids[:2]}
    ).json()
    assert removed["data"]["edgeCount"] == 2 and removed["version"] == 4
    batch = client.post(
        f"{BASE}/batch",
        headers=auth,
        json={"operations": [
            {"op": "addNode", "node": {"id": "X:1", "label": "x", "type": "gene"}},
            {"op": "addEdge", "edge": {"source": "X:1", "target": "N:0"}},
            {"op": "updateNode", "id": "N:0", "patch": {"label": "zero"}},
        ]},
    )  # fmt: skip
    assert batch.json()["version"] == 5
    assert client.post(f"{BASE}/undo", headers=auth).json()["data"]["targetVersion"] == 5
    assert client.post(f"{BASE}/redo", headers=auth).json()["version"] == 7
    history = client.get(f"{BASE}/history?limit=3", headers=auth).json()["data"]
    assert [i["command"] for i in history["items"]] == ["redo", "undo", "batch"]
    assert history["total"] == 7
    detail = client.get(f"{BASE}/history/4", headers=auth).json()["data"]
    assert [op["op"] for op in detail["forward"]] == ["remove_edge", "remove_edge"]
    at_two = client.get(f"{BASE}/versions/2", headers=auth).json()["data"]
    assert at_two["metadata"]["edgeCount"] == 5
    diff = client.get(f"{BASE}/diff?from=2&to=7", headers=auth).json()["data"]
    assert [n["id"] for n in diff["nodesAdded"]] == ["X:1"] and len(diff["edgesRemoved"]) == 2
    reverted = client.post(f"{BASE}/versions/2/revert", headers=auth).json()
    assert reverted["version"] == 8
    assert client.get(f"{BASE}/diff?from=2&to=8", headers=auth).json()["data"]["nodesAdded"] == []
    assert client.get(f"{BASE}/versions/99", headers=auth).status_code == 404


def test_state_paging_and_filters(client: TestClient, auth: dict[str, str]) -> None:
    for i in range(5):
        post_node(client, auth, f"N:{i}", type="gene" if i < 3 else "drug")
    for i in range(4):
        client.post(
            f"{BASE}/edges", headers=auth, json={"source": f"N:{i}", "target": f"N:{i + 1}"}
        )
    page = client.get(f"{BASE}/state?limit=2&offset=2", headers=auth).json()["data"]
    assert [n["id"] for n in page["nodes"]] == ["N:2", "N:3"]
    assert page["metadata"]["hasMore"] is True and page["metadata"]["nodeCount"] == 5
    assert len(page["edges"]) == 2  # nodes and edges are paged side by side, each by id
    last = client.get(f"{BASE}/state?limit=2&offset=4", headers=auth).json()["data"]
    assert [n["id"] for n in last["nodes"]] == ["N:4"] and last["edges"] == []
    assert last["metadata"]["hasMore"] is False
    drugs = client.get(f"{BASE}/state?nodeTypes=drug", headers=auth).json()["data"]
    assert [n["id"] for n in drugs["nodes"]] == ["N:3", "N:4"] and len(drugs["edges"]) == 1
    chosen = client.get(f"{BASE}/state?ids=N:0,N:1&ids=N:4", headers=auth).json()["data"]
    assert [n["id"] for n in chosen["nodes"]] == ["N:0", "N:1", "N:4"]


def test_import_export_merge_clear(client: TestClient, auth: dict[str, str]) -> None:
    graph = {
        "nodes": [{"id": "A:1", "name": "a", "category": "gene"},
                  {"id": "B:1", "name": "b", "category": "gene"},
                  {"id": "B:2", "name": "b", "category": "gene"}],
        "links": [{"source": "A:1", "target": "B:1", "label": "r", "evidence": ["PMID:1"]},
                  {"source": "A:1", "target": "B:2", "label": "r", "evidence": ["PMID:2"]}],
    }  # fmt: skip
    imported = client.post(f"{BASE}/import", headers=auth, json={"graph": graph}).json()
    assert imported["data"] == {"nodesAdded": 3, "nodesMerged": 0, "edgesAdded": 2,
                                "edgesMerged": 0}  # fmt: skip
    text = client.post(
        f"{BASE}/import", headers=auth, json={"content": json.dumps(graph), "format": "json"}
    ).json()
    assert text["data"]["nodesMerged"] == 3 and text["data"]["edgesMerged"] == 2
    merged = client.post(
        f"{BASE}/merge-nodes", headers=auth, json={"keep": "B:1", "remove": ["B:2"]}
    ).json()
    assert merged["data"]["id"] == "B:1"
    exported = client.get(f"{BASE}/export?format=json", headers=auth)
    assert exported.status_code == 200
    seed = json.loads(exported.content)
    assert [n["id"] for n in seed["nodes"]] == ["A:1", "B:1"]
    assert seed["links"][0]["evidence"] == ["PMID:1", "PMID:2"]
    cx2 = client.get(f"{BASE}/export?format=cx2", headers=auth)
    assert cx2.status_code == 200
    assert read_graph(cx2.content, "cx2") == seed
    # A graph edited in Cytoscape comes back as CX2: its nodes and links merge into this one.
    again = client.post(
        f"{BASE}/import", headers=auth, json={"content": cx2.text, "format": "cx2"}
    ).json()
    assert again["data"]["nodesMerged"] == 2 and again["data"]["edgesMerged"] == 1
    cleared = client.post(f"{BASE}/clear", headers=auth).json()
    assert cleared["data"]["nodeCount"] == 2
    assert client.get(f"{BASE}/state", headers=auth).json()["data"]["nodes"] == []
    neither = client.post(f"{BASE}/import", headers=auth, json={})
    assert neither.status_code == 422


async def test_events_stream_change_events(live_server: LiveServer) -> None:
    token = live_server.app.state.auth_service.mint(conversation_id="c1")
    headers = {"Authorization": f"Bearer {token}"}
    received: list[dict] = []
    async with (
        httpx.AsyncClient(base_url=live_server.url, headers=headers, timeout=20) as http,
        http.stream("GET", f"{BASE}/events") as stream,
    ):
        lines = stream.aiter_lines()
        while not (await anext(lines)).startswith("event: ready"):
            pass
        for i in range(2):
            response = await http.post(
                f"{BASE}/nodes", json={"id": f"E:{i}", "label": "e", "type": "gene"}
            )
            assert response.status_code == 201
        while len(received) < 2:
            line = await asyncio.wait_for(anext(lines), timeout=10)
            if line.startswith("data:") and '"command"' in line:
                received.append(json.loads(line.removeprefix("data:").strip()))
    assert [(e["version"], e["command"]) for e in received] == [(1, "addNode"), (2, "addNode")]
    assert received[0]["conversationId"] == "c1" and received[0]["actor"].startswith("token:")


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """(event, data) pairs of a server-sent events stream, until the server ends it."""
    name = data = ""
    async for line in lines:
        if line.startswith("event:"):
            name = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            data = line.removeprefix("data:").strip()
        elif not line and name:
            yield name, data
            name = data = ""


async def test_events_stream_ends_once_its_token_is_revoked(live_server: LiveServer) -> None:
    auth_service = live_server.app.state.auth_service
    viewer = auth_service.mint(conversation_id="c1")
    # The writes use their own token, so revoking the viewer's does not stop them.
    writer = {"Authorization": f"Bearer {auth_service.mint(conversation_id='c1')}"}
    async with (
        httpx.AsyncClient(base_url=live_server.url, timeout=20) as http,
        http.stream("GET", f"{BASE}/events", headers={"Authorization": f"Bearer {viewer}"}) as sse,
    ):
        events = sse_events(sse.aiter_lines())
        assert (await anext(events))[0] == "ready"
        node = {"label": "e", "type": "gene"}
        added = await http.post(f"{BASE}/nodes", headers=writer, json={"id": "E:0", **node})
        assert added.status_code == 201
        assert (await asyncio.wait_for(anext(events), timeout=10))[0] == "change"
        auth_service.revoke_token(viewer)
        added = await http.post(f"{BASE}/nodes", headers=writer, json={"id": "E:1", **node})
        assert added.status_code == 201
        async with asyncio.timeout(10):  # the stream must end by itself
            received = [event async for event in events]
    assert [name for name, _ in received] == ["error"]
    assert "revoked or has expired" in json.loads(received[0][1])["message"]


async def test_a_quiet_events_stream_ends_soon_after_its_token_is_revoked(
    live_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph_api, "TOKEN_RECHECK_SECONDS", 0.2)
    auth_service = live_server.app.state.auth_service
    viewer = auth_service.mint(conversation_id="c1")
    async with (
        httpx.AsyncClient(base_url=live_server.url, timeout=20) as http,
        http.stream("GET", f"{BASE}/events", headers={"Authorization": f"Bearer {viewer}"}) as sse,
    ):
        events = sse_events(sse.aiter_lines())
        assert (await anext(events))[0] == "ready"
        await asyncio.sleep(0.5)  # quiet, token valid: the stream stays open
        auth_service.revoke_token(viewer)
        async with asyncio.timeout(10):  # no change comes, yet the stream must end by itself
            received = [event async for event in events]
    assert [name for name, _ in received] == ["error"]
