"""graphwright as an A2A agent, through a2a-sdk's own client against a live server."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from a2a.client import A2AClientError
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Part,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import (
    ContentTypeNotSupportedError,
    InvalidParamsError,
    TaskNotCancelableError,
)
from google.protobuf.json_format import MessageToDict

from graphwright.a2a import executor as a2a_executor
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, MARKDOWN
from tests.a2a.conftest import Agent, collect, http_client, user_message

pytestmark = pytest.mark.asyncio(loop_scope="module")

SLASH_TURN = "/kg.queryNeighbors TP53\n/literature.searchPubMed TP53 MDM2"


def final_task(events: list[StreamResponse]) -> Task:
    [event] = events
    assert event.HasField("task"), event
    return event.task


def by_media_type(task: Task) -> dict[str, dict]:
    found = {}
    for artifact in task.artifacts:
        body = MessageToDict(artifact)
        found[body["parts"][0].get("mediaType")] = body
    return found


async def test_the_card_names_the_agent_its_url_skills_and_bearer_auth(agent: Agent) -> None:
    async with http_client() as http:
        response = await http.get(f"{agent.url}/.well-known/agent-card.json")
    assert response.status_code == 200
    assert "max-age" in response.headers["cache-control"]
    card = response.json()
    assert card["name"] == "graphwright" and card["version"] and card["description"]
    assert card["supportedInterfaces"] == [
        {"url": f"{agent.url}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": f"{agent.url}/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]
    assert card["capabilities"] == {"streaming": True, "pushNotifications": False}
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    assert "text/plain" in card["defaultInputModes"]
    assert KNOWLEDGE_GRAPH in card["defaultOutputModes"]
    skills = {skill["id"]: skill for skill in card["skills"]}
    jobs = {"knowledge-graph", "bibliography", "grant", "graph-mode", "knowledge-miner"}
    assert jobs <= skills.keys()
    assert all(skill["examples"] for skill in skills.values())


async def test_a_slash_command_turn_returns_graph_and_bibliography_artifacts(
    agent: Agent,
) -> None:
    client = await agent.client(streaming=False)
    context_id = str(uuid.uuid4())
    task = final_task(await collect(client, user_message(SLASH_TURN, context_id=context_id)))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
    assert task.context_id == context_id
    assert "/kg.queryNeighbors TP53" in task.status.message.parts[0].text
    artifacts = by_media_type(task)
    graph, bibliography = artifacts[KNOWLEDGE_GRAPH], artifacts[BIBLIOGRAPHY]
    assert "NCBIGene:7157" in {node["id"] for node in graph["parts"][0]["data"]["nodes"]}
    assert graph["metadata"]["version"] == 1
    pmids = [c["pmid"] for c in bibliography["parts"][0]["data"] if c.get("pmid")]
    assert len(pmids) == len(set(pmids)) > 0
    assert artifacts[MARKDOWN]["name"] == "Answer"

    # The artifacts are the ones the chat stored, with the same ids.
    stored = agent.chat.get_conversation(context_id)
    assert {a["artifactId"] for a in stored["artifacts"]} >= {
        graph["artifactId"],
        bibliography["artifactId"],
    }

    # A follow-up in the same context continues the conversation: version 2 of the same graph.
    follow = final_task(
        await collect(client, user_message("/kg.queryNeighbors EGFR", context_id=context_id))
    )
    assert follow.id != task.id and follow.context_id == context_id
    graph2 = by_media_type(follow)[KNOWLEDGE_GRAPH]
    assert graph2["artifactId"] == graph["artifactId"]
    assert graph2["metadata"]["version"] == 2
    assert len(graph2["parts"][0]["data"]["nodes"]) > len(graph["parts"][0]["data"]["nodes"])
    messages = agent.chat.get_conversation(context_id)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    await client.close()


def answer_chunks(events: list[StreamResponse]) -> list[dict]:
    return [
        MessageToDict(event.artifact_update)
        for event in events
        if event.HasField("artifact_update")
        and event.artifact_update.artifact.artifact_id.endswith("-answer")
    ]


async def test_a_streaming_turn_sends_status_then_answer_chunks_then_artifacts(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(a2a_executor, "CHUNK_SECONDS", 0.0)  # one chunk per piece of text
    client = await agent.client()
    message = "/kg.queryNeighbors TP53\n/literature.searchPubMed TP53\n/help"
    events = await collect(client, user_message(message))
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds[0] == "task", kinds
    assert events[0].task.status.state == TaskState.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    chunks = answer_chunks(events)
    # /help's text is longer than a chunk, so it is cut in chunks of CHUNK_CHARS.
    assert len(chunks) > 3
    assert [c.get("append", False) for c in chunks] == [False] + [True] * (len(chunks) - 1)
    assert [c.get("lastChunk", False) for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert all(c["artifact"]["parts"][0]["mediaType"] == MARKDOWN for c in chunks)
    text = "".join(c["artifact"]["parts"][0]["text"] for c in chunks)
    assert text.startswith("/kg.queryNeighbors TP53")
    assert chunks[2]["artifact"]["parts"][0]["text"].startswith("Tools you can call")
    # The turn's artifacts come after the answer, before the final status.
    updates = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    media = [MessageToDict(a)["parts"][0].get("mediaType") for a in updates[len(chunks) :]]
    assert media == [BIBLIOGRAPHY, KNOWLEDGE_GRAPH]
    assert kinds[1:-1] == ["artifact_update"] * len(updates) and kinds[-1] == "status_update"

    # The stored task holds the answer's chunks as appended parts, in order.
    task = await client.get_task(GetTaskRequest(id=events[0].task.id))
    answer = next(a for a in task.artifacts if a.artifact_id.endswith("-answer"))
    assert "".join(part.text for part in answer.parts) == text
    await client.close()


async def start_slow_turn(agent: Agent, seconds: float, context_id: str | None = None):
    """A streaming turn that sleeps in a tool: its stream, and its task once it is working."""
    client = await agent.client()
    stream = client.send_message(user_message(f"/flaky.sleep {seconds}", context_id=context_id))
    first = await anext(stream)
    assert first.task.status.state == TaskState.TASK_STATE_WORKING
    return client, stream, first.task


async def test_cancel_stops_the_turn_and_get_and_list_tasks_see_it(agent: Agent) -> None:
    context_id = str(uuid.uuid4())
    client, stream, task = await start_slow_turn(agent, 120, context_id)
    other = await agent.client(streaming=False)
    running = await other.get_task(GetTaskRequest(id=task.id))
    assert running.status.state == TaskState.TASK_STATE_WORKING

    cancelled = await asyncio.wait_for(other.cancel_task(CancelTaskRequest(id=task.id)), 60)
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    rest = [event async for event in stream]  # the stream ends
    assert len(rest) < 10
    stored = await other.get_task(GetTaskRequest(id=task.id))
    assert stored.status.state == TaskState.TASK_STATE_CANCELED
    conversation = agent.chat.get_conversation(context_id)
    assert conversation["messages"][-1]["status"] == "cancelled"
    assert not conversation["running"]
    with pytest.raises(TaskNotCancelableError):
        await other.cancel_task(CancelTaskRequest(id=task.id))

    # ListTasks: filtered by context, paged.
    await collect(other, user_message("/help", context_id=context_id))
    await collect(other, user_message("/help", context_id=context_id))
    first = await other.list_tasks(ListTasksRequest(context_id=context_id, page_size=2))
    assert first.total_size == 3 and len(first.tasks) == 2 and first.next_page_token
    second = await other.list_tasks(
        ListTasksRequest(context_id=context_id, page_size=2, page_token=first.next_page_token)
    )
    assert len(second.tasks) == 1 and not second.next_page_token
    ids = [t.id for t in [*first.tasks, *second.tasks]]
    assert len(set(ids)) == 3 and task.id in ids
    assert all(t.context_id == context_id for t in [*first.tasks, *second.tasks])
    await client.close()
    await other.close()


async def test_subscribe_to_a_running_task_follows_it_to_the_end(agent: Agent) -> None:
    # Long enough for the subscription to attach on a loaded machine before the turn ends.
    client, stream, task = await start_slow_turn(agent, 6)
    watcher = await agent.client()
    seen = [event async for event in watcher.subscribe(SubscribeToTaskRequest(id=task.id))]
    assert seen[0].HasField("task") and seen[0].task.id == task.id
    assert seen[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    [event async for event in stream]
    await client.close()
    await watcher.close()


async def test_graph_mode_imports_a_graph_part_and_reports_graph_versions(agent: Agent) -> None:
    client = await agent.client()
    context_id = str(uuid.uuid4())
    graph_mode = {"mode": "graph_mode"}
    first = await collect(
        client, user_message("/graph.getGraphState", context_id=context_id, metadata=graph_mode)
    )
    assert first[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    kg = {
        "nodes": [{"id": "NCBIGene:7157", "name": "TP53"}, {"id": "NCBIGene:4193", "name": "MDM2"}],
        "links": [{"source": "NCBIGene:4193", "target": "NCBIGene:7157", "label": "regulates"}],
    }
    data_part = Part(media_type=KNOWLEDGE_GRAPH)
    data_part.data.struct_value.update(kg)
    events = await collect(
        client,
        user_message(
            context_id=context_id,
            parts=[Part(text="/graph.addNode BRCA1 gene canonicalId=NCBIGene:672"), data_part],
        ),
    )
    versions = [
        MessageToDict(e.status_update)["metadata"]["graphVersion"]
        for e in events
        if e.HasField("status_update")
        and "graphVersion" in MessageToDict(e.status_update).get("metadata", {})
    ]
    assert len(versions) >= 3 and versions == sorted(versions) and versions[0] >= 1
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    state = agent.live.app.state.graph_service.version(context_id)
    assert versions[-1] == state
    # Graph Mode makes no artifacts beyond the answer: the graph is the conversation's.
    names = {e.artifact_update.artifact.name for e in events if e.HasField("artifact_update")}
    assert names == {"Answer"}
    await client.close()


async def test_a_graph_part_outside_graph_mode_fails_the_task_and_says_why(agent: Agent) -> None:
    client = await agent.client(streaming=False)
    context_id = str(uuid.uuid4())
    await collect(client, user_message("/help", context_id=context_id))
    data_part = Part(media_type=KNOWLEDGE_GRAPH)
    data_part.data.struct_value.update({"nodes": [{"id": "X:1", "name": "x"}], "links": []})
    task = final_task(await collect(client, user_message(context_id=context_id, parts=[data_part])))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "not in Graph Mode" in task.status.message.parts[0].text
    await client.close()


async def test_no_token_is_401_and_a_token_for_another_conversation_is_403(agent: Agent) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "ListTasks",
        "params": {},
    }
    async with http_client(**{"A2A-Version": "1.0"}) as http:
        missing = await http.post(f"{agent.url}/a2a", json=body)
        wrong = await http.post(
            f"{agent.url}/a2a", json=body, headers={"Authorization": "Bearer gw_nope"}
        )
    for response in (missing, wrong):
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        error = response.json()
        assert error["jsonrpc"] == "2.0" and error["error"]["message"]
        assert error["error"]["data"][0]["reason"] == "UNAUTHENTICATED"
    with pytest.raises(A2AClientError) as unauthenticated:
        client = await agent.client(token=None)
        await collect(client, user_message("/help"))
    assert "401" in str(unauthenticated.value)

    mine, theirs = str(uuid.uuid4()), str(uuid.uuid4())
    admin = await agent.client(streaming=False)
    their_task = final_task(await collect(admin, user_message("/help", context_id=theirs)))
    scoped = await agent.client(token=agent.mint(conversation_id=mine), streaming=False)
    # Without a context the scoped token works in its own conversation.
    own = final_task(await collect(scoped, user_message("/help")))
    assert own.context_id == mine and own.status.state == TaskState.TASK_STATE_COMPLETED
    for call in (
        collect(scoped, user_message("/help", context_id=theirs)),
        scoped.get_task(GetTaskRequest(id=their_task.id)),
        scoped.cancel_task(CancelTaskRequest(id=their_task.id)),
        scoped.list_tasks(ListTasksRequest(context_id=theirs)),
    ):
        with pytest.raises(A2AClientError) as forbidden:
            await call
        assert "403" in str(forbidden.value)
    body = {"jsonrpc": "2.0", "id": 9, "method": "GetTask", "params": {"id": their_task.id}}
    async with http_client(agent.mint(conversation_id=mine), **{"A2A-Version": "1.0"}) as http:
        raw = await http.post(f"{agent.url}/a2a", json=body)
    assert raw.status_code == 403 and raw.json()["id"] == 9
    assert raw.json()["error"]["data"][0]["reason"] == "PERMISSION_DENIED"
    assert mine in raw.json()["error"]["message"]
    listing = await scoped.list_tasks(ListTasksRequest())
    assert [t.id for t in listing.tasks] == [own.id]
    await scoped.close()
    await admin.close()


async def test_parts_and_context_ids_graphwright_cannot_take_are_refused(agent: Agent) -> None:
    client = await agent.client(streaming=False)
    raw = Part(raw=b"%PDF", media_type="application/pdf")
    with pytest.raises(ContentTypeNotSupportedError, match="application/pdf"):
        await collect(client, user_message(parts=[raw]))
    with pytest.raises(InvalidParamsError, match="contextId"):
        await collect(client, user_message("/help", context_id="not a conversation id!"))
    with pytest.raises(InvalidParamsError, match=r"metadata\.mode"):
        await collect(client, user_message("/help", metadata={"mode": "turbo"}))
    listing = await client.list_tasks(ListTasksRequest(context_id="not a conversation id!"))
    assert list(listing.tasks) == []
    await client.close()


@pytest.mark.parametrize(
    "body",
    [
        b"\x8d{\xff",
        # Valid UTF-8, but its NUL bytes make json.loads guess UTF-16 (schemathesis found it).
        b'{\x00"\x00a\x00"\x00(',
    ],
    ids=["invalid-utf8", "read-as-utf16"],
)
async def test_a_body_that_is_not_utf8_is_a_parse_error(agent: Agent, body: bytes) -> None:
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    async with http_client(agent.token, **headers) as http:
        response = await http.post(f"{agent.url}/a2a", content=body)
    assert response.status_code == 200
    error = response.json()["error"]
    assert error["code"] == -32700 and "not UTF-8" in error["message"]


@pytest.mark.parametrize("path", ["/a2a", "/a2a/"])
async def test_the_json_rpc_endpoint_answers_with_or_without_a_trailing_slash(
    agent: Agent, path: str
) -> None:
    # Clients that join the card's URL and "/" (the A2A TCK's 1.0 line does) get an answer, not
    # a redirect that a POST does not follow.
    request = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "no-such-task"}}
    headers = {"A2A-Version": "1.0"}
    async with http_client(agent.token, **headers) as http:
        response = await http.post(f"{agent.url}{path}", json=request)
        anonymous = await http.post(
            f"{agent.url}{path}", json=request, headers={"Authorization": ""}
        )
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32001
    assert anonymous.status_code == 401
