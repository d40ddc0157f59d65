"""A live notebook GraphView follows a Graph Mode graph on a real server: edits made elsewhere
(over the REST API) are drawn without the notebook asking."""

from __future__ import annotations

import time

import httpx

from graphwright.notebook import GraphView
from tests.graphmode.conftest import LiveServer

BASE = "/api/graph/c1"


def eventually(check: object, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds  # generous: a loaded 2-core machine
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the view was not updated"
        time.sleep(0.05)


def test_a_live_view_redraws_when_the_graph_changes_elsewhere(live_server: LiveServer) -> None:
    token = live_server.app.state.auth_service.mint(conversation_id="c1")
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=live_server.url, headers=auth, timeout=30) as http:
        added = http.post(f"{BASE}/nodes", json={"id": "A:1", "label": "TP53", "type": "gene"})
        assert added.status_code == 201
        view = GraphView.live(live_server.url, token, "c1")
        try:
            assert view.payload["nodeCount"] == 1
            assert view.payload["nodes"]["A:1"]["name"] == "TP53"
            first = view.payload["version"]
            for node in ({"id": "B:1", "label": "MDM2", "type": "gene"},):
                assert http.post(f"{BASE}/nodes", json=node).status_code == 201
            edge = {"source": "A:1", "target": "B:1", "label": "interacts with"}
            assert http.post(f"{BASE}/edges", json=edge).status_code == 201
            eventually(lambda: view.payload["edgeCount"] == 1)
            assert view.payload["nodeCount"] == 2
            assert view.payload["version"] > first
            assert view.payload["edges"][0]["label"] == "interacts with"
        finally:
            view.stop()
