"""The graph tools' REST backend reads a whole graph page by page, whatever its shape."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.graphmode import client_rest
from graphwright.graphmode.client_rest import RestGraphBackend
from graphwright.graphmode.schemas import EdgeInput, NodeInput
from graphwright.settings import Settings
from tests.conftest import serve_in_thread


def test_a_graph_with_more_links_than_nodes_is_read_whole(
    database: Database, database_url: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of 3: 4 nodes and 10 links take 4 pages; the offset used to stop at the nodes
    read, so the reader asked for the same page forever."""
    monkeypatch.setattr(client_rest, "STATE_PAGE", 3)
    app = create_app(Settings(home=tmp_path / "home", database_url=database_url), database=database)
    graphs = app.state.graph_service
    for n in range(4):
        graphs.add_node("paged", NodeInput(id=f"N:{n}", label=f"n{n}", type="Gene"), actor="t")
    for e in range(10):
        link = EdgeInput(id=f"e{e}", source=f"N:{e % 4}", target=f"N:{(e + 1) % 4}", label="l")
        graphs.add_edge("paged", link, actor="t")
    token = app.state.auth_service.mint()

    async def read(url: str) -> client_rest.GraphRows:
        async with httpx.AsyncClient(base_url=url) as client:
            return await asyncio.wait_for(RestGraphBackend(client, "paged", token).rows(), 60)

    with serve_in_thread(app) as url:
        rows = asyncio.run(read(url))
    assert sorted(n["id"] for n in rows.nodes) == [f"N:{n}" for n in range(4)]
    assert sorted(e["id"] for e in rows.edges) == sorted(f"e{e}" for e in range(10))
