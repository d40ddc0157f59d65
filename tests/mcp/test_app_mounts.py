"""`create_app` serves every registered MCP server at /mcp/NAME, only to a valid bearer token."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from mcp_types import LATEST_PROTOCOL_VERSION

from graphwright import mcp_registry, mcpkit
from graphwright.app import create_app
from graphwright.db import Database
from graphwright.errors import NotFound
from graphwright.settings import Settings
from tests.mcp.support import http_session, serving

A_TOOL_OF = {
    "literature": "searchPubMed",
    "grants": "searchGrants",
    "kg": "resolveName",
    "graph": "addNode",
    "artifacts": "artifact_update",
    "knowledge": "dkg-sparql-query",
    "miner": "knowledge-miner",
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": LATEST_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def test_the_app_serves_every_server_to_a_token_holder_only(
    tmp_path: Path, database: Database
) -> None:
    assert sorted(A_TOOL_OF) == mcp_registry.names()
    settings = Settings(home=tmp_path, database_url=database.url, offline=True)
    app = create_app(settings, database=database)
    token = app.state.auth_service.mint(label="client")

    async with serving(app) as base:
        for name, tool in A_TOOL_OF.items():
            async with http_session(f"{base}/mcp/{name}", token) as session:
                assert session.server_info is not None and session.server_info.name == name
                assert tool in {listed.name for listed in (await session.list_tools()).tools}

        async with httpx.AsyncClient(base_url=base) as plain:
            refused = {
                name: [
                    await plain.post(f"/mcp/{name}", json=LIST_TOOLS),
                    await plain.post(
                        f"/mcp/{name}", json=LIST_TOOLS, headers={"Authorization": "Bearer nope"}
                    ),
                ]
                for name in A_TOOL_OF
            }
    for name, (missing, wrong) in refused.items():
        assert (missing.status_code, wrong.status_code) == (401, 401), name
        assert missing.headers["www-authenticate"] == "Bearer"
        assert missing.json()["error"].startswith("A bearer token is required")
        assert wrong.json()["error"].startswith("The bearer token is not valid: no such token")


async def test_a_session_answers_only_the_token_that_opened_it(
    tmp_path: Path, database: Database
) -> None:
    settings = Settings(home=tmp_path, database_url=database.url, offline=True)
    app = create_app(settings, database=database)
    owner = app.state.auth_service.mint(label="owner")
    other = app.state.auth_service.mint(label="other")
    streamable = {"Accept": "application/json, text/event-stream"}

    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=30) as http:
        opened = await http.post(
            "/mcp/graph", json=INITIALIZE, headers=streamable | {"Authorization": f"Bearer {owner}"}
        )
        session = {
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": sse_result(opened.text)["protocolVersion"],
        } | streamable

        def as_token(token: str) -> dict[str, str]:
            return session | {"Authorization": f"Bearer {token}"}

        ready = await http.post("/mcp/graph", json=INITIALIZED, headers=as_token(owner))
        stolen = await http.post("/mcp/graph", json=LIST_TOOLS, headers=as_token(other))
        own = await http.post("/mcp/graph", json=LIST_TOOLS, headers=as_token(owner))
    assert ready.status_code == 202
    assert (stolen.status_code, stolen.json()) == (404, {"error": "Session not found"})
    assert own.status_code == 200
    assert "addNode" in {tool["name"] for tool in sse_result(own.text)["tools"]}


async def test_one_token_cannot_exhaust_the_sessions_of_a_server(
    tmp_path: Path, database: Database
) -> None:
    settings = Settings(
        home=tmp_path,
        database_url=database.url,
        offline=True,
        mcp_sessions_per_token=3,
        mcp_sessions_max=5,
    )
    app = create_app(settings, database=database)
    tokens = [app.state.auth_service.mint(label=f"flooder{n}") for n in range(2)]
    other = app.state.auth_service.mint(label="other")
    streamable = {"Accept": "application/json, text/event-stream"}
    manager = next(
        route.endpoint.app.session_manager
        for route in app.router.routes
        if getattr(route, "path", "") == "/mcp/graph"
    )

    async def open_session(http: httpx.AsyncClient, token: str) -> httpx.Response:
        return await http.post(
            "/mcp/graph", json=INITIALIZE, headers=streamable | {"Authorization": f"Bearer {token}"}
        )

    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=30) as http:
        first = await open_session(http, tokens[0])
        flood = [await open_session(http, token) for token in tokens for _ in range(20)]
        open_count = len(manager._server_instances)
        mine = await open_session(http, other)
        evicted = await http.post(
            "/mcp/graph",
            json=LIST_TOOLS,
            headers=streamable
            | {
                "Authorization": f"Bearer {tokens[0]}",
                "mcp-session-id": first.headers["mcp-session-id"],
                "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
            },
        )
    assert {response.status_code for response in flood} == {200}
    assert open_count <= 5  # the server closed the evicted sessions, not only forgot them
    assert mine.status_code == 200 and mine.headers["mcp-session-id"]
    assert evicted.status_code == 404  # the flooder's oldest session went first


def sse_result(body: str) -> dict[str, Any]:
    """The JSON-RPC result carried by the one `data:` line of a streamable-HTTP answer."""
    data = next(line for line in body.splitlines() if line.startswith("data:"))
    return json.loads(data.removeprefix("data:"))["result"]


def test_mount_all_refuses_a_server_it_does_not_know() -> None:
    with pytest.raises(NotFound, match=r"No MCP server named \['nope'\]"):
        stray = mcpkit.new_server("nope", instructions="Not a graphwright server.")
        mcp_registry.mount_all(FastAPI(), verify_token=None, servers={"nope": stray})
