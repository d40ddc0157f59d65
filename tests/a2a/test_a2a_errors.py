"""The errors A2A defines, on both bindings, against a live server: scope (403), the spec's HTTP
statuses, content types, the `A2A-Version` query parameter, body limits, client mistakes that
are client errors (never -32603 or 500), and NUL in any text or id, refused alike on SQLite and
PostgreSQL, in every string field the A2A request types have."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import Part, TaskState
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.json_format import MessageToDict

from graphwright.a2a.executor import CHUNK_CHARS
from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from tests.a2a.conftest import Agent, collect, http_client, user_message
from tests.a2a.test_a2a_server import final_task

pytestmark = pytest.mark.asyncio(loop_scope="module")

VERSION = {"A2A-Version": "1.0"}
REST = "/a2a/rest"
INTERNAL_ERROR = -32603
INVALID_PARAMS = -32602


def rpc(method: str, params: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def send_params(text: str = "/help", **message: Any) -> dict[str, Any]:
    body = {"role": "ROLE_USER", "messageId": uuid.uuid4().hex, "parts": [{"text": text}]}
    return {"message": {**body, **message}}


def reason(response: httpx.Response) -> str:
    return response.json()["error"]["details"][0]["reason"]


def no_internals(response: httpx.Response) -> None:
    """What a client is told names no SQL, no driver and no traceback."""
    for leak in ("SELECT", "INSERT", "[SQL", "psycopg", "asyncpg", "sqlite3", "Traceback"):
        assert leak not in response.text, response.text


async def finished_task(agent: Agent, context_id: str) -> str:
    client = await agent.client(streaming=False)
    task = final_task(await collect(client, user_message("/help", context_id=context_id)))
    await client.close()
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    return task.id


async def test_a_token_for_another_context_is_403_on_every_rest_endpoint(agent: Agent) -> None:
    mine, theirs = str(uuid.uuid4()), str(uuid.uuid4())
    task_id = await finished_task(agent, theirs)
    message = send_params(contextId=theirs)
    routes = [
        ("POST", "/message:send", message),
        ("POST", "/message:stream", message),
        ("GET", f"/tasks/{task_id}", None),
        ("POST", f"/tasks/{task_id}:cancel", None),
        ("GET", f"/tasks/{task_id}:subscribe", None),
        ("POST", f"/tasks/{task_id}:subscribe", None),
        ("GET", f"/tasks?contextId={theirs}", None),
        ("GET", f"/graphwright/tasks/{task_id}", None),  # the binding's tenant routes
    ]
    async with http_client(agent.mint(conversation_id=mine), **VERSION) as http:
        for method, path, body in routes:
            response = await http.request(method, f"{agent.url}{REST}{path}", json=body)
            assert response.status_code == 403, (method, path, response.text)
            error = response.json()["error"]
            assert error["status"] == "PERMISSION_DENIED" and mine in error["message"]
            assert reason(response) == "PERMISSION_DENIED"


async def test_rest_errors_have_the_http_status_of_the_a2a_error_table(agent: Agent) -> None:
    task_id = await finished_task(agent, str(uuid.uuid4()))
    pdf = send_params()
    pdf["message"]["parts"] = [{"raw": "JVBERg==", "mediaType": "application/pdf"}]
    async with http_client(agent.token, **VERSION) as http:
        not_cancelable = await http.post(f"{agent.url}{REST}/tasks/{task_id}:cancel")
        unsupported = await http.post(f"{agent.url}{REST}/message:send", json=pdf)
        missing = await http.get(f"{agent.url}{REST}/tasks/no-such-task")
    assert not_cancelable.status_code == 409 and reason(not_cancelable) == "TASK_NOT_CANCELABLE"
    assert unsupported.status_code == 415 and reason(unsupported) == "CONTENT_TYPE_NOT_SUPPORTED"
    assert "application/pdf" in unsupported.json()["error"]["message"]
    assert missing.status_code == 404 and reason(missing) == "TASK_NOT_FOUND"


async def test_a_body_that_is_not_json_is_refused_with_415(agent: Agent) -> None:
    before = await count_tasks(agent)
    plain = {"Content-Type": "text/plain"}
    body = json.dumps(send_params()).encode()
    async with http_client(agent.token, **VERSION) as http:
        rest = await http.post(f"{agent.url}{REST}/message:send", content=body, headers=plain)
        rpc_call = json.dumps(rpc("SendMessage", send_params())).encode()
        json_rpc = await http.post(f"{agent.url}/a2a", content=rpc_call, headers=plain)
        a2a_json = {"Content-Type": "application/a2a+json; charset=utf-8"}
        accepted = await http.post(
            f"{agent.url}{REST}/message:send", content=body, headers=a2a_json
        )
    assert rest.status_code == 415 and reason(rest) == "CONTENT_TYPE_NOT_SUPPORTED"
    assert "text/plain" in rest.json()["error"]["message"]
    assert json_rpc.status_code == 415 and json_rpc.json()["error"]["code"] == -32005
    assert accepted.status_code == 200, accepted.text
    assert await count_tasks(agent) == before + 1  # only the JSON one ran


async def count_tasks(agent: Agent) -> int:
    async with http_client(agent.token, **VERSION) as http:
        listing = await http.get(f"{agent.url}{REST}/tasks", params={"pageSize": 1})
    return listing.json()["totalSize"]


async def test_the_a2a_version_query_parameter_counts_as_the_header(agent: Agent) -> None:
    task_id = await finished_task(agent, str(uuid.uuid4()))
    get_task = rpc("GetTask", {"id": task_id})
    async with http_client(agent.token) as http:  # no A2A-Version header
        rest = await http.get(f"{agent.url}{REST}/tasks/{task_id}?A2A-Version=1.0")
        json_rpc = await http.post(f"{agent.url}/a2a?A2A-Version=1.0", json=get_task)
        future = await http.get(f"{agent.url}{REST}/tasks/{task_id}?A2A-Version=9.0")
        future_rpc = await http.post(f"{agent.url}/a2a?A2A-Version=9.0", json=get_task)
        bare = await http.get(f"{agent.url}{REST}/tasks/{task_id}")  # none: 0.3
    assert rest.status_code == 200 and rest.json()["id"] == task_id
    assert json_rpc.json()["result"]["id"] == task_id
    assert future.status_code == 400 and reason(future) == "VERSION_NOT_SUPPORTED"
    assert "9.0" in future.json()["error"]["message"]
    assert future_rpc.json()["error"]["code"] == -32009
    assert bare.status_code == 400 and reason(bare) == "VERSION_NOT_SUPPORTED"


async def test_a_body_over_the_limit_is_413_on_both_bindings(agent: Agent) -> None:
    limit = agent.live.app.state.settings.max_body_bytes
    chunk = b" " * (1 << 20)

    async def oversized() -> AsyncIterator[bytes]:  # chunked: no Content-Length to refuse by
        yield b'{"message": {"parts": [{"text": "'
        for _ in range(limit // len(chunk) + 1):
            yield chunk

    json_type = {"Content-Type": "application/json"}
    async with http_client(agent.token, **VERSION) as http:
        rest = await http.post(
            f"{agent.url}{REST}/message:send", content=oversized(), headers=json_type
        )
        json_rpc = await http.post(f"{agent.url}/a2a", content=oversized(), headers=json_type)
    assert rest.status_code == 413, rest.text
    assert rest.json()["error"]["code"] == 413 and str(limit) in rest.json()["error"]["message"]
    assert json_rpc.status_code == 413, json_rpc.text
    assert json_rpc.json()["error"]["code"] == -32600


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def with_metadata(raw: str) -> str:
    """SendMessage's params as JSON text, with `raw` (JSON text) as a metadata value."""
    return json.dumps(send_params(metadata={"n": "RAW"})).replace('"RAW"', raw)


MISTAKES = {
    # name: (the params of SendMessage as JSON text, what the error says)
    "agent-role": (json.dumps(send_params(role="ROLE_AGENT")), "ROLE_USER"),
    "long-text": (json.dumps(send_params("x" * 100_001)), "100000 characters"),
    "deep-nesting": (with_metadata(nested(20_000)), "depth"),
    "huge-integer": (with_metadata("9" * 5000), "digits"),
    "infinite-number": (with_metadata("1e400"), "Infinity"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
async def test_client_mistakes_are_client_errors_on_both_bindings(
    agent: Agent, mistake: str
) -> None:
    params, says = MISTAKES[mistake]
    rpc_body = f'{{"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {params}}}'
    json_type = {"Content-Type": "application/json"}
    async with http_client(agent.token, **VERSION) as http:
        json_rpc = await http.post(f"{agent.url}/a2a", content=rpc_body, headers=json_type)
        rest = await http.post(f"{agent.url}{REST}/message:send", content=params, headers=json_type)
    error = json_rpc.json()["error"]
    assert error["code"] in (INVALID_PARAMS, -32700), error
    assert says.lower() in json.dumps(error).lower(), error
    assert rest.status_code == 400, rest.text
    assert rest.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert says.lower() in rest.text.lower(), rest.text
    no_internals(json_rpc)
    no_internals(rest)


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


# NUL in every text and id: the fields come from a2a-sdk's protobuf descriptors, so a field added
# to the A2A types is covered without a change here.

SERVED = ["SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask",
          "SubscribeToTask"]  # fmt: skip
JSON_VALUE_TYPES = {"google.protobuf.Struct", "google.protobuf.Value"}
NUL_TEXT = "a\x00b"


def string_fields(
    descriptor: Descriptor, seen: frozenset[str] = frozenset()
) -> Iterator[list[FieldDescriptor | str]]:
    """Paths to every string a request of this type can carry: its string fields, and the keys
    and string values of its JSON (Struct, Value) fields, through nested messages."""
    for field in descriptor.fields:
        if field.type == FieldDescriptor.TYPE_STRING:
            yield [field]
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            name = field.message_type.full_name
            if name in JSON_VALUE_TYPES:
                yield [field, "value"]
                if name == "google.protobuf.Struct":
                    yield [field, "key"]
            elif name not in seen and not name.startswith("google.protobuf."):
                for path in string_fields(field.message_type, seen | {descriptor.full_name}):
                    yield [field, *path]


def with_nul(base: dict[str, Any], path: list[FieldDescriptor | str]) -> dict[str, Any]:
    """`base` (a valid request as JSON) with NUL in the string at `path`."""
    body = json.loads(json.dumps(base))
    fields = [step for step in path if isinstance(step, FieldDescriptor)]
    in_json = path[-1] if isinstance(path[-1], str) else None
    node = body
    for field in fields:
        if field.containing_oneof is not None:  # one member of a oneof at a time
            for sibling in field.containing_oneof.fields:
                node.pop(sibling.json_name, None)
        if field is fields[-1]:
            break
        child = node.get(field.json_name) or ([{}] if field.is_repeated else {})
        node[field.json_name] = child
        node = child[0] if field.is_repeated else child
    leaf = fields[-1]
    value: Any = {"key": {NUL_TEXT: "v"}, "value": {"k": NUL_TEXT}}.get(in_json or "", NUL_TEXT)
    node[leaf.json_name] = [value] if leaf.is_repeated and in_json is None else value
    return body


def field_name(path: list[FieldDescriptor | str]) -> str:
    return ".".join(step.json_name for step in path if isinstance(step, FieldDescriptor))


def nul_cases() -> Iterator[tuple[str, list[FieldDescriptor | str]]]:
    for method in SERVED:
        for path in string_fields(JsonRpcDispatcher.METHOD_TO_MODEL[method].DESCRIPTOR):
            yield method, path


NUL_CASES = list(nul_cases())


def test_the_nul_cases_cover_the_text_and_ids_of_every_request() -> None:
    names = {f"{method}:{field_name(path)}:{path[-1] if isinstance(path[-1], str) else ''}"
             for method, path in NUL_CASES}  # fmt: skip
    for expected in ("SendMessage:message.parts.text:", "SendMessage:message.messageId:",
                     "SendMessage:message.contextId:", "SendMessage:metadata:key",
                     "SendMessage:message.parts.data:value", "GetTask:id:",
                     "ListTasks:contextId:", "CancelTask:metadata:value"):  # fmt: skip
        assert expected in names
    assert len(NUL_CASES) > 40


async def test_nul_in_any_text_or_id_is_refused_alike_on_every_backend(agent: Agent) -> None:
    task_id = await finished_task(agent, str(uuid.uuid4()))
    bases = {
        "SendMessage": send_params(),
        "SendStreamingMessage": send_params(),
        "GetTask": {"id": task_id},
        "ListTasks": {},
        "CancelTask": {"id": task_id},
        "SubscribeToTask": {"id": task_id},
    }
    async with http_client(agent.token, **VERSION) as http:
        for number, (method, path) in enumerate(NUL_CASES):
            params = with_nul(bases[method], path)
            response = await http.post(f"{agent.url}/a2a", json=rpc(method, params, number))
            error = response.json().get("error")
            assert error is not None, (method, field_name(path), response.text)
            assert error["code"] == INVALID_PARAMS, (method, field_name(path), error)
            assert "NUL" in error["message"], error
            no_internals(response)
        # The HTTP+JSON binding: a message body, ids in the path, the listing's query.
        for path in string_fields(JsonRpcDispatcher.METHOD_TO_MODEL["SendMessage"].DESCRIPTOR):
            body = with_nul(send_params(), path)
            response = await http.post(f"{agent.url}{REST}/message:send", json=body)
            assert response.status_code == 400, (field_name(path), response.text)
            assert "NUL" in response.json()["error"]["message"]
            no_internals(response)
        for method, url in [
            ("GET", f"{REST}/tasks/a%00b"),
            ("POST", f"{REST}/tasks/a%00b:cancel"),
            ("GET", f"{REST}/tasks/a%00b:subscribe"),
            ("GET", f"{REST}/tasks?contextId=a%00b"),
            ("GET", f"{REST}/tasks?pageToken=a%00b"),
        ]:
            response = await http.request(method, f"{agent.url}{url}")
            assert response.status_code == 400, (url, response.text)
            assert "NUL" in response.json()["error"]["message"]
            no_internals(response)
