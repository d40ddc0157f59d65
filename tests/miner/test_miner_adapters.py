"""The miner through its adapters: the `knowledge-miner` MCP tool over a real streamable-HTTP
session on a live server, and the REST API a person and the UI use (decisions, the SSE
progress stream, memory notes, the rate limit, no model)."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.settings import Settings
from tests.mcp.support import http_session, serving, text_of
from tests.miner.scripted import ASPIRIN, ScriptedModel, full_run

SEED_KEYS = [
    "summary",
    "candidateAssets",
    "domainTags",
    "memoryWrites",
    "todos",
    "spawnedSubagents",
    "filesystemFiles",
    "synthesizedReport",
    "runId",
    "pendingApproval",
    "trace",
]


@pytest.fixture
def app(settings: Settings, database: Database) -> FastAPI:
    app = create_app(settings.model_copy(update={"miner_runs_per_window": 1}), database=database)
    app.state.miner_service.model = ScriptedModel(scripts=full_run("drugs"))
    return app


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\r\n\r\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            events.append((fields["event"], orjson.loads(fields["data"])))
    return events


async def test_the_mcp_tool_then_approval_sse_and_memory_over_http(app: FastAPI) -> None:
    token = app.state.auth_service.mint(label="alice")
    scoped = app.state.auth_service.mint(conversation_id="c1", label="chat")
    auth = {"Authorization": f"Bearer {token}"}
    async with serving(app) as url, http_session(f"{url}/mcp/miner", token) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert tools["knowledge-miner"].output_schema is not None
        result = await session.call_tool(
            "knowledge-miner", {"query": "What does aspirin inhibit?", "domainTags": ["drugs"]}
        )
        assert not result.is_error, text_of(result)
        output = orjson.loads(text_of(result))
        assert list(output) == SEED_KEYS
        assert result.structured_content == output
        run_id = output["runId"]
        [action] = output["pendingApproval"]

        again = await session.call_tool("knowledge-miner", {"query": "more", "domainTags": ["x"]})
        assert again.is_error and "Too many knowledge-miner runs" in text_of(again)

        async with httpx.AsyncClient(base_url=url, headers=auth, timeout=60) as client:
            listed = (await client.get("/api/miner/runs")).json()["data"]
            assert [run["id"] for run in listed["runs"]] == [run_id]
            assert listed["runs"][0]["status"] == "waiting"

            refused = await client.post(
                f"/api/miner/runs/{run_id}/decisions",
                headers={"Authorization": f"Bearer {scoped}"},
                json={"decisions": [{"type": "approve"}]},
            )
            assert refused.status_code == 403
            decided = await client.post(
                f"/api/miner/runs/{run_id}/decisions",
                json={"decisions": [{"type": "approve", "actionId": action["id"]}]},
            )
            assert decided.status_code == 200, decided.text
            run = decided.json()["data"]
            assert run["status"] == "done"
            assert run["decisions"][0]["by"] == "alice"
            twice = await client.post(
                f"/api/miner/runs/{run_id}/decisions", json={"decisions": [{"type": "approve"}]}
            )
            assert twice.status_code == 409

            stream = await client.get(f"/api/miner/runs/{run_id}/events")
            kinds = [kind for kind, _ in sse_events(stream.text)]
            for kind in ("todos", "subagent", "tool_call", "file", "memory_write"):
                assert kind in kinds, kind
            assert kinds.count("pending_approval") == 1 and kinds.count("done") == 2

            query = f"ASK {{ GRAPH ?g {{ <{ASPIRIN['@id']}> ?p ?o }} }}"
            json_results = {"Accept": "application/sparql-results+json"}
            asked = await client.get(
                "/api/knowledge/sparql", params={"query": query}, headers=json_results
            )
            assert asked.json()["boolean"] is True

            memory = (await client.get("/api/miner/memory")).json()["data"]
            [drugs] = memory["tags"]
            assert drugs["tag"] == "drugs"
            assert [n["note"] for n in drugs["notes"]] == [
                "discovery-notes",
                "schema-notes",
                "validation-rules",
            ]
            path = "/api/miner/memory/drugs/shapes"
            assert (await client.get(path)).status_code == 404
            written = await client.put(
                path, json={"content": "@prefix sh: <http://www.w3.org/ns/shacl#> ."}
            )
            assert written.status_code == 200, written.text
            assert (await client.get(path)).json()["data"]["content"].startswith("@prefix sh:")
            bad = await client.get("/api/miner/memory/Drugs!/schema-notes")
            assert bad.status_code == 422 and "tag" in bad.json()["error"]["message"]


async def test_without_a_model_the_tool_says_how_to_set_one(
    settings: Settings, database: Database
) -> None:
    app = create_app(settings, database=database)
    token = app.state.auth_service.mint(label="alice")
    async with serving(app) as url, http_session(f"{url}/mcp/miner", token) as session:
        result = await session.call_tool("knowledge-miner", {"query": "anything"})
        assert result.is_error
        assert "GRAPHWRIGHT_MODEL=provider:model" in text_of(result)
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            started = await client.post(
                "/api/miner/runs",
                headers={"Authorization": f"Bearer {token}"},
                json={"query": "anything", "domainTags": ["Bad Tag"]},
            )
            assert started.status_code == 409 and "GRAPHWRIGHT_MODEL" in started.text
            assert started.json()["error"]["code"] == "no_model"
