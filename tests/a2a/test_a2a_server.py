"""graphwright as an A2A agent, through a2a-sdk's own client against a live server."""

from __future__ import annotations

import asyncio
import random
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from a2a.client import Client
from a2a.server.agent_execution.active_task_registry import ActiveTaskRegistry
from a2a.server.tasks.database_task_store import DatabaseTaskStore
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
    TaskNotCancelableError,
)
from google.protobuf.json_format import MessageToDict

from graphwright.a2a import executor as a2a_executor
from graphwright.a2a.executor import CHUNK_CHARS
from graphwright.app import create_app
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, MARKDOWN
from graphwright.errors import NotFound
from tests.a2a.conftest import (
    Agent,
    a2a_client,
    collect,
    graphwright_settings,
    http_client,
    serve,
    user_message,
)
from tests.conftest import free_port

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
    texts = [c["artifact"]["parts"][0]["text"] for c in chunks]
    assert all(len(t) <= a2a_executor.CHUNK_CHARS for t in texts)
    # Each piece of text starts a chunk of its own: /help's answer is not glued to the search's.
    assert any(t.startswith("Tools you can call") for t in texts)
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


async def test_a_turns_artifacts_become_a2a_artifacts_off_the_event_loop(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """protobuf's converter takes a second for a 20,000-node graph (every request of every user
    waited): the turn's artifacts are converted in a worker thread."""
    on_loop: list[bool] = []
    loop_thread = threading.get_ident()
    convert = a2a_executor.chat_to_proto

    def recorded(*args: Any, **kwargs: Any) -> Any:
        on_loop.append(threading.get_ident() == loop_thread)
        return convert(*args, **kwargs)

    monkeypatch.setattr(a2a_executor, "chat_to_proto", recorded)
    client = await agent.client()
    events = await collect(client, user_message("/flaky.chain A,B,C"))
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    updates = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    graphs = [
        a for a in updates if MessageToDict(a)["parts"][0].get("mediaType") == KNOWLEDGE_GRAPH
    ]
    assert len(graphs) == 1 and on_loop == [False]
    await client.close()


async def test_getting_a_task_reads_it_from_the_store_once(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scope check reads the task's context alone, not the whole task with its artifacts (a
    large graph takes protobuf's converter a second): GetTask converts the task once."""
    client = await agent.client()
    events = await collect(client, user_message("/flaky.chain A,B"))
    task_id = events[0].task.id
    converted: list[str] = []
    convert = DatabaseTaskStore._from_orm

    def counted(store: DatabaseTaskStore, row: Any) -> Any:
        converted.append(row.id)
        return convert(store, row)

    monkeypatch.setattr(DatabaseTaskStore, "_from_orm", counted)
    task = await client.get_task(GetTaskRequest(id=task_id))
    assert task.id == task_id and len(task.artifacts) > 1
    assert converted == [task_id]
    await client.close()


async def test_a_cancel_that_finds_the_task_ended_leaves_its_outcome_alone(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CancelTask reads the task working, and the task completes before the cancel looks for it
    among the running ones: the cancel must not write CANCELED over the COMPLETED the task's
    stream delivered (it did, 1 run in 4 of the 50 random cancellations below)."""
    ended, look_up = asyncio.Event(), ActiveTaskRegistry.get

    async def late_look_up(registry: ActiveTaskRegistry, task_id: str) -> Any:
        await ended.wait()
        while await look_up(registry, task_id) is not None:  # until the ended task is let go
            await asyncio.sleep(0.01)
        return None

    monkeypatch.setattr(ActiveTaskRegistry, "get", late_look_up)
    client, stream, task = await start_slow_turn(agent, 0.3)
    other = await agent.client(streaming=False)
    cancelling = asyncio.ensure_future(other.cancel_task(CancelTaskRequest(id=task.id)))
    events = [event async for event in stream]
    ended.set()
    with pytest.raises(TaskNotCancelableError):
        await cancelling
    assert final_state(events) == TaskState.TASK_STATE_COMPLETED
    stored = await other.get_task(GetTaskRequest(id=task.id))
    assert stored.status.state == TaskState.TASK_STATE_COMPLETED
    await client.close()
    await other.close()


async def test_a_cancel_through_another_server_is_the_outcome_everywhere(
    agent: Agent, module_database_url: str, tmp_path: Path
) -> None:
    """Two servers on one database: a task running on the first, cancelled through the second.
    The second records CANCELED; the first stops the turn (it checks each second), does not
    complete over the cancel, and its stream and stored conversation end cancelled."""
    port = free_port()
    second = await serve(
        create_app(graphwright_settings(tmp_path, port, module_database_url)), port
    )
    try:
        client, stream, task = await start_slow_turn(agent, 30)
        rest = asyncio.ensure_future(collect_rest(stream))
        other = await a2a_client(second.url, agent.token, streaming=False)
        cancelled = await other.cancel_task(CancelTaskRequest(id=task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        events = await asyncio.wait_for(rest, 10)  # well before the tool's 30 s
        assert final_state(events) == TaskState.TASK_STATE_CANCELED
        for server in (agent.url, second.url):
            reader = await a2a_client(server, agent.token, streaming=False)
            stored = await reader.get_task(GetTaskRequest(id=task.id))
            assert stored.status.state == TaskState.TASK_STATE_CANCELED, server
            await reader.close()
        [*_, answer] = agent.chat.get_conversation(task.context_id)["messages"]
        assert answer["status"] == "cancelled", answer
        await client.close()
        await other.close()
    finally:
        await second.stop()


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


async def test_a_graph_part_to_a_new_context_makes_the_conversation(agent: Agent) -> None:
    client = await agent.client(streaming=False)
    graph = Part(media_type=KNOWLEDGE_GRAPH)
    graph.data.struct_value.update({"nodes": [{"id": "X:1", "name": "x"}], "links": []})
    context_id = str(uuid.uuid4())
    in_graph_mode = user_message(
        context_id=context_id, parts=[graph], metadata={"mode": "graph_mode"}
    )
    task = final_task(await collect(client, in_graph_mode))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
    assert agent.chat.get_conversation(context_id)["mode"] == "graph_mode"
    assert agent.live.app.state.graph_service.version(context_id) == 1

    plain = str(uuid.uuid4())
    task = final_task(await collect(client, user_message(context_id=plain, parts=[graph])))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "not in Graph Mode" in task.status.message.parts[0].text
    assert agent.chat.get_conversation(plain)["mode"] == "normal"
    await client.close()


async def test_help_streams_in_chunks_of_at_most_2000_characters(agent: Agent) -> None:
    client = await agent.client()
    events = await collect(client, user_message("/help"))
    chunks = [
        MessageToDict(e.artifact_update)
        for e in events
        if e.HasField("artifact_update")
        and e.artifact_update.artifact.artifact_id.endswith("-answer")
    ]
    texts = [chunk["artifact"]["parts"][0]["text"] for chunk in chunks]
    assert len("".join(texts)) > 2 * CHUNK_CHARS
    assert all(0 < len(text) <= CHUNK_CHARS for text in texts), [len(t) for t in texts]
    assert [c.get("lastChunk", False) for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert "".join(texts).startswith("Tools you can call")
    await client.close()


# Cancelling at random points: the task's own stream, CancelTask, GetTask and the stored
# conversation always tell the same outcome.
TRIES = 50
AT_ONCE = 10
# A turn of a tool call of a second and a long answer, ten at once. The cancels land anywhere
# from the task's first event to after its end (a request takes some tenths of a second here
# under load), so that most find the turn running, and some storing or finished.
TURN = "/flaky.sleep 1\n/help"
LATEST_CANCEL_SECONDS = 1.5
TERMINAL = {TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED}
STORED_STATUS = {
    TaskState.TASK_STATE_COMPLETED: "complete",
    TaskState.TASK_STATE_CANCELED: "cancelled",
}


def final_state(events: list[StreamResponse]) -> TaskState:
    """The terminal state the stream ended with; the stream must end with one."""
    last = events[-1]
    state = last.status_update.status.state if last.HasField("status_update") else None
    assert state in TERMINAL, f"the stream closed without a final status: {last}"
    return state


async def cancel_at(agent: Agent, streaming: Client, other: Client, delay: float) -> TaskState:
    context_id = str(uuid.uuid4())
    stream = streaming.send_message(user_message(TURN, context_id=context_id))
    first = await anext(stream)
    task_id = first.task.id
    rest = asyncio.ensure_future(collect_rest(stream))
    await asyncio.sleep(delay)
    try:
        cancelled = await other.cancel_task(CancelTaskRequest(id=task_id))
    except TaskNotCancelableError:
        cancelled = None  # it had ended already
    events = [first, *await asyncio.wait_for(rest, 60)]
    streamed = final_state(events)
    stored = (await other.get_task(GetTaskRequest(id=task_id))).status.state
    assert streamed == stored, (delay, streamed, stored)
    if cancelled is not None:
        assert cancelled.status.state == stored, (delay, cancelled.status.state, stored)
    else:
        assert stored == TaskState.TASK_STATE_COMPLETED
    try:
        last = agent.chat.get_conversation(context_id)["messages"][-1]
    except NotFound:  # cancelled before its turn started: nothing was stored
        assert stored == TaskState.TASK_STATE_CANCELED
    else:
        assert last["role"] == "assistant" and last["status"] == STORED_STATUS[stored], last
    return stored


async def collect_rest(stream) -> list[StreamResponse]:
    return [event async for event in stream]


async def test_the_stream_cancel_and_get_agree_on_every_cancellation(agent: Agent) -> None:
    rng = random.Random(29)
    delays = [rng.uniform(0, LATEST_CANCEL_SECONDS) for _ in range(TRIES)]
    streaming, other = await agent.client(), await agent.client(streaming=False)
    outcomes: list[TaskState] = []
    for start in range(0, TRIES, AT_ONCE):
        batch = delays[start : start + AT_ONCE]
        outcomes += await asyncio.gather(*(cancel_at(agent, streaming, other, d) for d in batch))
    await streaming.close()
    await other.close()
    assert len(outcomes) == TRIES
    assert TaskState.TASK_STATE_CANCELED in outcomes
