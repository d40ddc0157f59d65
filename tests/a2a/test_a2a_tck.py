"""What the A2A TCK checks at its MUST level, through a2a-sdk's client, against graphwright's real
A2A mount (same routes, same DatabaseTaskStore) serving the TCK's test executor with auth off."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
import pytest
import pytest_asyncio
from a2a.client import Client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Part,
    Role,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    ContentTypeNotSupportedError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from fastapi import FastAPI
from google.protobuf.json_format import MessageToDict

from graphwright.a2a import api as a2a_api
from graphwright.db import Database
from graphwright.settings import Settings
from tests.a2a.conftest import (
    LiveServer,
    a2a_client,
    collect,
    http_client,
    serve,
    user_message,
)
from tests.a2a.tck_executor import TckExecutor
from tests.conftest import free_port

pytestmark = pytest.mark.asyncio(loop_scope="module")


def tck_id(name: str) -> str:
    return f"tck-{name}-{uuid.uuid4().hex[:8]}"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tck(module_database_url: str, tmp_path_factory: pytest.TempPathFactory):
    port = free_port()
    database = Database(module_database_url)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield

    app = FastAPI(lifespan=lifespan)
    app.state.settings = Settings(
        home=tmp_path_factory.mktemp("tck"), port=port, api_url=f"http://127.0.0.1:{port}"
    )
    app.state.database = database
    a2a_api.mount(app, executor=TckExecutor(), auth=False)
    live = await serve(app, port)
    try:
        yield live
    finally:
        await live.stop()
        database.dispose()


@pytest_asyncio.fixture(loop_scope="module")
async def client(tck: LiveServer) -> AsyncIterator[Client]:
    client = await a2a_client(tck.url, None)
    yield client
    await client.close()


@pytest_asyncio.fixture(loop_scope="module")
async def blocking(tck: LiveServer) -> AsyncIterator[Client]:
    client = await a2a_client(tck.url, None, streaming=False)
    yield client
    await client.close()


async def rpc(url: str, method: str, params: dict[str, Any], **headers: str) -> dict[str, Any]:
    """One raw JSON-RPC call, for what a2a-sdk's client will not send."""
    headers = {"A2A-Version": "1.0", **headers}
    async with http_client() as http:
        body = {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}
        response = await http.post(f"{url}/a2a", json=body, headers=headers)
    assert response.status_code == 200
    return response.json()


def message(name: str, **fields: Any) -> dict[str, Any]:
    return {"role": "ROLE_USER", "parts": [{"text": "hi"}], "messageId": tck_id(name), **fields}


# --- the card ------------------------------------------------------------------------------------


async def test_card_has_the_required_fields_and_revalidates_with_its_etag(tck: LiveServer) -> None:
    async with http_client() as http:
        response = await http.get(f"{tck.url}/.well-known/agent-card.json")
        card = response.json()
        again = await http.get(
            f"{tck.url}/.well-known/agent-card.json",
            headers={"If-None-Match": response.headers["etag"]},
        )
    assert response.status_code == 200 and response.headers["cache-control"]
    assert response.headers["content-type"].startswith("application/json")
    assert again.status_code == 304
    for field in ("name", "description", "version", "capabilities", "skills"):
        assert card[field], field
    assert card["defaultInputModes"] and card["defaultOutputModes"]
    interfaces = {i["protocolBinding"]: i for i in card["supportedInterfaces"]}
    assert interfaces.keys() == {"JSONRPC", "HTTP+JSON"}
    assert interfaces["JSONRPC"]["url"] == f"{tck.url}/a2a"
    assert interfaces["HTTP+JSON"]["url"] == f"{tck.url}/a2a/rest"
    assert all(i["protocolVersion"] == "1.0" for i in interfaces.values())
    for skill in card["skills"]:
        assert skill["id"] and skill["name"] and skill["description"] and skill["tags"]


# --- SendMessage -------------------------------------------------------------------------------


async def test_complete_task_returns_a_completed_task_with_new_ids(blocking: Client) -> None:
    [first] = await collect(blocking, user_message("hi", message_id=tck_id("complete-task")))
    [second] = await collect(blocking, user_message("hi", message_id=tck_id("complete-task")))
    for event in (first, second):
        assert event.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert event.task.context_id and event.task.id
        assert event.task.status.message.parts[0].text == "Hello from TCK"
    assert first.task.id != second.task.id
    assert first.task.context_id != second.task.context_id
    client_context = str(uuid.uuid4())
    [kept] = await collect(
        blocking,
        user_message("hi", message_id=tck_id("complete-task"), context_id=client_context),
    )
    assert kept.task.context_id == client_context
    assert [m.role for m in kept.task.history] == [Role.ROLE_USER]


async def test_message_response_is_a_message_not_a_task(blocking: Client) -> None:
    [event] = await collect(blocking, user_message("hi", message_id=tck_id("message-response")))
    assert event.HasField("message") and not event.HasField("task")
    assert event.message.role == Role.ROLE_AGENT and event.message.context_id


async def test_input_required_then_a_follow_up_by_task_id_completes(blocking: Client) -> None:
    [waiting] = await collect(blocking, user_message("hi", message_id=tck_id("input-required")))
    task = waiting.task
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    follow = user_message("more", message_id=tck_id("complete-task"))
    follow.message.task_id = task.id  # no contextId: inferred from the task
    [done] = await collect(blocking, follow)
    assert done.task.id == task.id and done.task.context_id == task.context_id
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert len(done.task.history) >= 2

    # Terminal now: another message to it is refused.
    again = user_message("again", message_id=tck_id("complete-task"))
    again.message.task_id = task.id
    with pytest.raises(UnsupportedOperationError):
        await collect(blocking, again)


async def test_follow_ups_by_task_id_alone_stay_in_the_tasks_context(blocking: Client) -> None:
    """The spec's 'infer contextId from the task if only taskId is provided' holds for the
    executor too: several follow-ups naming only the task all run in its context."""
    [waiting] = await collect(blocking, user_message("hi", message_id=tck_id("input-required")))
    task = waiting.task
    for name in ("input-required", "input-required", "complete-task"):
        follow = user_message(name, message_id=tck_id(name))
        follow.message.task_id = task.id
        [event] = await collect(blocking, follow)
        assert event.task.id == task.id and event.task.context_id == task.context_id
        assert event.task.status.message.context_id == task.context_id
    assert event.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [m.parts[0].text for m in event.task.history if m.role == Role.ROLE_USER] == [
        "hi",
        "input-required",
        "input-required",
        "complete-task",
    ]


async def test_mismatching_context_and_task_and_unknown_task_are_refused(blocking: Client) -> None:
    [waiting] = await collect(blocking, user_message("hi", message_id=tck_id("input-required")))
    wrong = user_message("x", message_id=tck_id("complete-task"), context_id="another-context")
    wrong.message.task_id = waiting.task.id
    with pytest.raises(InvalidParamsError):
        await collect(blocking, wrong)
    unknown = user_message("x", message_id=tck_id("multi-004"))
    unknown.message.task_id = tck_id("nonexistent")
    with pytest.raises(TaskNotFoundError):
        await collect(blocking, unknown)


async def test_unsupported_content_type_is_refused(blocking: Client) -> None:
    part = Part(raw=b"tck", media_type="application/x-unsupported-tck-type")
    with pytest.raises(ContentTypeNotSupportedError):
        await collect(blocking, user_message(parts=[part], message_id=tck_id("send-003")))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("artifact-text", {"text": "Generated text content"}),
        ("artifact-file", {"raw": "dGNr", "mediaType": "text/plain", "filename": "output.txt"}),
        (
            "artifact-file-url",
            {
                "url": "https://example.com/output.txt",
                "mediaType": "text/plain",
                "filename": "output.txt",
            },
        ),
        ("artifact-data", {"data": {"key": "value", "count": 42.0}}),
    ],
)
async def test_artifacts_of_each_part_kind(
    blocking: Client, name: str, expected: dict[str, Any]
) -> None:
    [event] = await collect(blocking, user_message("hi", message_id=tck_id(name)))
    assert event.task.status.state == TaskState.TASK_STATE_COMPLETED
    [artifact] = event.task.artifacts
    assert artifact.artifact_id
    assert MessageToDict(artifact)["parts"] == [expected]


# --- streaming ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["stream-001", "stream-003", "stream-ordering-001"])
async def test_a_task_stream_starts_with_the_task_and_ends_at_its_terminal_state(
    client: Client, name: str
) -> None:
    events = await collect(client, user_message("hi", message_id=tck_id(name)))
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds == ["task", "status_update", "artifact_update", "status_update"]
    task_id = events[0].task.id
    assert events[1].status_update.status.state == TaskState.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert {events[1].status_update.task_id, events[2].artifact_update.task_id} == {task_id}


async def test_a_message_stream_holds_exactly_one_message(client: Client) -> None:
    events = await collect(client, user_message("hi", message_id=tck_id("stream-002")))
    assert [event.WhichOneof("payload") for event in events] == ["message"]


async def test_a_chunked_artifact_streams_append_and_last_chunk(client: Client) -> None:
    events = await collect(client, user_message("hi", message_id=tck_id("stream-artifact-chunked")))
    chunks = [MessageToDict(e.artifact_update) for e in events if e.HasField("artifact_update")]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == ["chunk-1 ", "chunk-2"]
    assert [c.get("append", False) for c in chunks] == [False, True]
    assert [c.get("lastChunk", False) for c in chunks] == [False, True]
    assert len({c["artifact"]["artifactId"] for c in chunks}) == 1


async def test_sse_events_arrive_in_order_with_the_request_id(tck: LiveServer) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "SendStreamingMessage",
        "params": {"message": message("stream-ordering-001")},
    }
    results = []
    async with (
        http_client(**{"A2A-Version": "1.0"}) as http,
        http.stream("POST", f"{tck.url}/a2a", json=body) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                payload = orjson.loads(line.removeprefix("data:"))
                assert payload["jsonrpc"] == "2.0" and payload["id"] == 7
                results.append(payload["result"])
    assert [next(iter(result)) for result in results] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


# --- GetTask, CancelTask, SubscribeToTask ------------------------------------------------------


async def test_unknown_tasks_are_not_found_and_terminal_ones_not_cancelable(
    blocking: Client, client: Client
) -> None:
    missing = tck_id("nonexistent")
    with pytest.raises(TaskNotFoundError):
        await blocking.get_task(GetTaskRequest(id=missing))
    with pytest.raises(TaskNotFoundError):
        await blocking.cancel_task(CancelTaskRequest(id=missing))
    with pytest.raises(TaskNotFoundError):
        [event async for event in client.subscribe(SubscribeToTaskRequest(id=missing))]
    [done] = await collect(blocking, user_message("hi", message_id=tck_id("complete-task")))
    got = await blocking.get_task(GetTaskRequest(id=done.task.id))
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    with pytest.raises(TaskNotCancelableError):
        await blocking.cancel_task(CancelTaskRequest(id=done.task.id))
    with pytest.raises(UnsupportedOperationError):
        [event async for event in client.subscribe(SubscribeToTaskRequest(id=done.task.id))]


async def test_cancel_an_interrupted_task(blocking: Client) -> None:
    [waiting] = await collect(blocking, user_message("hi", message_id=tck_id("input-required")))
    cancelled = await blocking.cancel_task(CancelTaskRequest(id=waiting.task.id))
    assert cancelled.id == waiting.task.id
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    stored = await blocking.get_task(GetTaskRequest(id=waiting.task.id))
    assert stored.status.state == TaskState.TASK_STATE_CANCELED


# --- ListTasks ----------------------------------------------------------------------------------


async def test_list_tasks_pages_by_cursor_newest_first_without_artifacts(
    blocking: Client, tck: LiveServer
) -> None:
    context_id = str(uuid.uuid4())
    made = []
    for _ in range(5):
        [event] = await collect(
            blocking,
            user_message("hi", message_id=tck_id("artifact-text"), context_id=context_id),
        )
        made.append(event.task.id)
    pages, token = [], ""
    for _ in range(5):  # bounded: 3 pages expected
        page = await blocking.list_tasks(
            ListTasksRequest(context_id=context_id, page_size=2, page_token=token)
        )
        pages.append(page)
        token = page.next_page_token
        if not token:
            break
    assert [len(page.tasks) for page in pages] == [2, 2, 1]
    assert all(page.total_size == 5 for page in pages)
    listed = [task for page in pages for task in page.tasks]
    assert [task.id for task in listed] == list(reversed(made))
    stamps = [task.status.timestamp.ToDatetime() for task in listed]
    assert stamps == sorted(stamps, reverse=True)

    raw = await rpc(tck.url, "ListTasks", {"contextId": context_id, "pageSize": 100})
    result = raw["result"]
    assert result["nextPageToken"] == ""
    assert all("artifacts" not in task for task in result["tasks"])
    with_artifacts = await rpc(
        tck.url, "ListTasks", {"contextId": context_id, "includeArtifacts": True}
    )
    assert all(task["artifacts"] for task in with_artifacts["result"]["tasks"])
    other = await blocking.list_tasks(ListTasksRequest(context_id=str(uuid.uuid4())))
    assert list(other.tasks) == []


# --- errors and versions ------------------------------------------------------------------------


async def test_unsupported_operations_say_so(blocking: Client, tck: LiveServer) -> None:
    with pytest.raises(PushNotificationNotSupportedError):
        await blocking.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id="t", url="https://example.com/hook")
        )
    # a2a-sdk's client answers this one from the card it has; ask the server itself.
    extended = await rpc(tck.url, "GetExtendedAgentCard", {})
    assert extended["error"]["code"] == -32004
    unknown = await rpc(tck.url, "NoSuchMethod", {})
    assert unknown["error"]["code"] == -32601
    invalid = await rpc(tck.url, "GetTask", {"id": 5, "historyLength": "many"})
    assert invalid["error"]["code"] == -32602
    for error in (unknown["error"], invalid["error"]):
        assert error["message"]


async def test_a2a_version_header(tck: LiveServer) -> None:
    params = {"message": message("complete-task")}
    ok = await rpc(tck.url, "SendMessage", params)
    assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    patch = await rpc(
        tck.url, "SendMessage", {"message": message("complete-task")}, **{"A2A-Version": "1.0.7"}
    )
    assert "result" in patch
    for version in ("2.0", "0.3", ""):
        refused = await rpc(tck.url, "GetTask", {"id": "x"}, **{"A2A-Version": version})
        assert refused["error"]["code"] == -32009, version
    not_found = await rpc(tck.url, "GetTask", {"id": tck_id("nonexistent")})
    assert not_found["error"]["code"] == -32001
