"""One approval queue: every candidate that waits for a person is a publication request in the
knowledge base's queue, linked to its run, and deciding it through any door resumes the run.
Driven over the real server (uvicorn) and the real `graphwright kb` CLI, with a model that
follows the miner's prompts."""

from __future__ import annotations

import asyncio
import getpass
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.settings import Settings
from tests.mcp.support import serving
from tests.miner.follower import PromptFollower
from tests.miner.other_process import waiting_elsewhere
from tests.miner.scripted import ScriptedModel, enriched_aspirin, say

GRAPHWRIGHT = Path(sys.executable).parent / "graphwright"
ASK = "What does aspirin inhibit?"


def miner_app(settings: Settings, database: Database) -> FastAPI:
    app = create_app(settings, database=database)
    app.state.miner_service.model = PromptFollower(
        candidate=enriched_aspirin(), candidate_path="/candidates/aspirin.jsonld"
    )
    return app


@pytest.fixture
async def live(settings: Settings, database: Database) -> AsyncIterator[tuple[str, dict]]:
    app = miner_app(settings, database)
    token = app.state.auth_service.mint(label="alice")
    async with serving(app) as url:
        yield url, {"Authorization": f"Bearer {token}"}


async def until(client: httpx.AsyncClient, run_id: str, *statuses: str) -> dict[str, Any]:
    """The run once its status is one of `statuses` (within a minute)."""
    for _ in range(600):
        run = (await client.get(f"/api/miner/runs/{run_id}")).json()["data"]
        if run["status"] in statuses:
            return run
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id} is still {run['status']}")


async def waiting_run(client: httpx.AsyncClient) -> dict[str, Any]:
    started = await client.post("/api/miner/runs", json={"query": ASK, "domainTags": ["drugs"]})
    assert started.status_code == 202, started.text
    return await until(client, started.json()["data"]["runId"], "waiting")


async def test_a_candidate_waits_in_the_knowledge_queue_and_its_approval_there_resumes_the_run(
    live: tuple[str, dict],
) -> None:
    url, auth = live
    async with httpx.AsyncClient(base_url=url, headers=auth, timeout=60) as client:
        run = await waiting_run(client)
        [action] = run["pending"]
        queue = (await client.get("/api/knowledge/requests?status=pending")).json()["data"]
        [request] = queue["requests"]
        assert request["id"] == action["requestId"]
        assert request["details"]["runId"] == run["id"] and request["source"] == "knowledge-miner"
        assert request["content"] == action["args"]["jsonld"]  # the document validated

        edited = {**request["content"], "name": "aspirin (edited elsewhere)"}
        refused = await client.post(
            f"/api/knowledge/requests/{request['id']}/approve", json={"content": edited}
        )
        assert refused.status_code == 409 and "validated" in refused.json()["error"]["message"]

        approved = await client.post(f"/api/knowledge/requests/{request['id']}/approve")
        assert approved.status_code == 200, approved.text
        done = await until(client, run["id"], "done")

    [decision] = done["decisions"]
    assert (decision["type"], decision["by"]) == ("approve", "alice")
    assert decision["ual"] == approved.json()["data"]["ual"]
    assert decision["outcome"].startswith(f"Published as {decision['ual']} (approved by alice)")
    [candidate] = done["result"]["candidateAssets"]
    assert candidate["publication"]["ual"] == decision["ual"]
    # The API gives the run's trace: each agent's steps, with what they answered.
    agents = {agent["agent"]: agent for agent in done["result"]["trace"]["agents"]}
    [validate] = [s for s in agents["validation"]["steps"] if s["tool"] == "validate_candidate"]
    assert validate["ok"] and '"documentHash"' in validate["result"]


async def test_a_rejection_in_the_knowledge_queue_resumes_the_run_with_its_reason(
    live: tuple[str, dict],
) -> None:
    url, auth = live
    async with httpx.AsyncClient(base_url=url, headers=auth, timeout=60) as client:
        run = await waiting_run(client)
        request_id = run["pending"][0]["requestId"]
        rejected = await client.post(
            f"/api/knowledge/requests/{request_id}/reject", json={"reason": "Not a COX-1 fact"}
        )
        assert rejected.status_code == 200, rejected.text
        done = await until(client, run["id"], "done")
        twice = await client.post(
            f"/api/miner/runs/{run['id']}/decisions", json={"decisions": [{"type": "approve"}]}
        )
        assert twice.status_code == 409

    [decision] = done["decisions"]
    assert (decision["type"], decision["by"], decision["message"]) == (
        "reject",
        "alice",
        "Not a COX-1 fact",
    )
    assert "Not a COX-1 fact" in decision["outcome"]
    assert done["result"]["candidateAssets"][0]["publication"]["status"] == "rejected"


def cli_env(settings: Settings) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "GRAPHWRIGHT_HOME": str(settings.home),
        "GRAPHWRIGHT_DATABASE_URL": settings.resolved_database_url,
        "GRAPHWRIGHT_KB_SAMPLE_DATA": "false",
    }
    if "PYTHONPATH" in os.environ:  # the code under test, as the tests run it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def kb(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GRAPHWRIGHT), "kb", *args],
        env=cli_env(settings),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_kb_approve_resumes_the_run_and_records_the_approver(
    settings: Settings, database: Database
) -> None:
    run_id = waiting_elsewhere(settings, "drugs", "- Pattern: from another process")

    # No server runs (the embedded store is one process's at a time): the person approves at
    # the terminal, from the knowledge base's queue.
    listed = kb(settings, "requests", "--json")
    assert listed.returncode == 0, listed.stderr
    [request] = orjson.loads(listed.stdout)
    assert request["details"]["runId"] == run_id and request["source"] == "knowledge-miner"
    request_id = request["id"]
    approved = kb(settings, "approve", request_id)
    assert approved.returncode == 0, approved.stderr
    assert f"knowledge-miner run {run_id}" in approved.stdout

    # The server starts, and the run goes on with that decision.
    app = create_app(settings, database=database)
    final = '{"summary": "Published from the terminal.", "candidateAssets": []}'
    app.state.miner_service.model = ScriptedModel(scripts={"orchestrator": [say(text=final)]})
    auth = {"Authorization": f"Bearer {app.state.auth_service.mint(label='alice')}"}
    async with (
        serving(app) as url,
        httpx.AsyncClient(base_url=url, headers=auth, timeout=60) as client,
    ):
        done = await until(client, run_id, "done")

    [decision] = done["decisions"]
    assert decision["type"] == "approve"
    assert decision["by"] == f"cli:{getpass.getuser()}"
    assert decision["outcome"].startswith(f"Published as {decision['ual']}")
    assert done["result"]["summary"] == "Published from the terminal."
