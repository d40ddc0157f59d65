"""A2A's two bindings against a live server: the HTTP+JSON binding serves a turn and its tasks;
the errors A2A defines, alike on both bindings: tokens and scope (401, 403), the spec's HTTP
statuses, content types, the `A2A-Version` request parameter, body limits, client mistakes that
are client errors (never -32603 or 500), and NUL in any text or id of every A2A request type,
refused alike on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a.client import A2AClientError, ClientConfig, ClientFactory
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import CancelTaskRequest, GetTaskRequest, ListTasksRequest, Part, TaskState
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError
from sqlalchemy.exc import DataError

from graphwright.a2a.errors import INTERNAL_MESSAGE
from graphwright.a2a.tasks import GraphwrightTaskStore
from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from tests.a2a.conftest import Agent, collect, http_client, user_message
from tests.a2a.request_fields import NUL_CASES, field_name, string_fields, with_nul
from tests.a2a.test_a2a_server import by_media_type, final_task

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


async def test_the_nul_cases_cover_the_text_and_ids_of_every_request() -> None:
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


async def test_an_internal_error_names_nothing_inside_the_server(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing_read(*_args: Any) -> None:
        statement = "SELECT a2a_tasks.id FROM a2a_tasks WHERE a2a_tasks.id = $1"
        raise DataError(statement, ("x",), Exception("invalid byte sequence for encoding"))

    monkeypatch.setattr(GraphwrightTaskStore, "get", failing_read)
    async with http_client(agent.token, **VERSION) as http:
        json_rpc = await http.post(f"{agent.url}/a2a", json=rpc("GetTask", {"id": "t-1"}))
        rest = await http.get(f"{agent.url}{REST}/tasks/t-1")
    error = json_rpc.json()["error"]
    assert error["code"] == INTERNAL_ERROR and error["message"] == INTERNAL_MESSAGE
    assert rest.status_code == 500 and rest.json()["error"]["message"] == INTERNAL_MESSAGE
    no_internals(json_rpc)
    no_internals(rest)
