"""The A2A HTTP+JSON (REST) binding at /a2a/rest, through a2a-sdk's own client on that transport:
the card declares it, a turn runs through it, tasks are read and listed, and it needs a token."""

from __future__ import annotations

import uuid

import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.types import GetTaskRequest, ListTasksRequest, TaskState
from a2a.utils.constants import TransportProtocol

from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from tests.a2a.conftest import Agent, collect, http_client, user_message
from tests.a2a.test_a2a_server import by_media_type, final_task

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_the_rest_binding_serves_a_turn_and_its_tasks(agent: Agent) -> None:
    async with http_client() as http:
        card = (await http.get(f"{agent.url}/.well-known/agent-card.json")).json()
    assert {"url": f"{agent.url}/a2a/rest", "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0"} in card["supportedInterfaces"]  # fmt: skip
    config = ClientConfig(
        streaming=False,
        httpx_client=http_client(agent.token),
        supported_protocol_bindings=[TransportProtocol.HTTP_JSON.value],
    )
    client = await ClientFactory(config).create_from_url(agent.url)
    context_id = str(uuid.uuid4())
    task = final_task(
        await collect(client, user_message("/kg.queryNeighbors TP53", context_id=context_id))
    )
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
    assert "NCBIGene:7157" in {
        n["id"] for n in by_media_type(task)[KNOWLEDGE_GRAPH]["parts"][0]["data"]["nodes"]
    }
    again = await client.get_task(GetTaskRequest(id=task.id))
    assert again.id == task.id and again.context_id == context_id
    listing = await client.list_tasks(ListTasksRequest(context_id=context_id))
    assert [t.id for t in listing.tasks] == [task.id]
    await client.close()


async def test_the_rest_binding_needs_a_token_and_keeps_graphwrights_routes(agent: Agent) -> None:
    async with http_client(**{"A2A-Version": "1.0"}) as http:
        missing = await http.get(f"{agent.url}/a2a/rest/tasks")
        health = await http.get(f"{agent.url}/health")
        api = await http.get(f"{agent.url}/api/conversations")
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert missing.json()["error"]["status"] == "UNAUTHENTICATED"
    assert health.status_code == 200  # not swallowed by the binding's /{tenant} routes
    assert api.status_code == 401 and api.json()["success"] is False
