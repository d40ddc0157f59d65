"""mcpkit: annotations, results with artifacts, GraphwrightError -> tool error, bearer auth."""

from __future__ import annotations

import itertools
import json
from typing import Annotated

import pytest
from mcp import Client
from mcp_types import CallToolResult, EmbeddedResource, TextContent
from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from graphwright import mcp_http, mcpkit
from graphwright.auth.models import Principal
from graphwright.errors import Conflict, NotFound, Unauthorized


class Count(BaseModel):
    letters: int


def demo_server():
    server = mcpkit.new_server("demo", instructions="Counts letters.")

    @mcpkit.tool(server, name="countLetters", annotations=mcpkit.hints(read_only=True))
    def count_letters(word: str) -> Annotated[CallToolResult, Count]:
        """Count the letters of a word.

        Returns the count and a graph artifact.
        """
        if word == "missing":
            raise NotFound("No word 'missing' here")
        graph = {"nodes": [{"id": word, "name": word}], "links": []}
        artifact = mcpkit.Artifact(mcpkit.KNOWLEDGE_GRAPH, "Word graph", graph, metadata={"n": 1})
        return mcpkit.tool_result(
            f"'{word}' has {len(word)} letters.",
            structured=Count(letters=len(word)),
            artifacts=[artifact],
        )

    @mcpkit.tool(
        server,
        name="renameWord",
        annotations=mcpkit.hints(read_only=False, destructive=True, idempotent=True),
    )
    async def rename_word(word: str) -> CallToolResult:
        """Rename a word (always conflicts, for the test)."""
        raise Conflict(f"'{word}' changed meanwhile", current_version=3)

    @mcpkit.tool(server, name="spell", annotations=mcpkit.hints(read_only=True))
    def spell(word: str) -> CallToolResult:
        """Spell a word (through a model with rules of its own, as services have)."""
        return mcpkit.tool_result(Count.model_validate({"letters": word}).model_dump_json())

    @mcpkit.tool(server, name="crash", annotations=mcpkit.hints(read_only=True))
    def crash() -> CallToolResult:
        """Fail unexpectedly."""
        raise RuntimeError("secret internals")

    return server


def test_hints_state_every_hint() -> None:
    read = mcpkit.hints(read_only=True, destructive=True, open_world=True)
    assert (read.read_only_hint, read.destructive_hint, read.idempotent_hint) == (True, False, True)
    assert read.open_world_hint is True
    write = mcpkit.hints(read_only=False, destructive=True)
    assert (write.read_only_hint, write.destructive_hint, write.idempotent_hint) == (
        False,
        True,
        False,
    )


def test_artifact_travels_as_an_embedded_resource() -> None:
    artifact = mcpkit.Artifact(mcpkit.BIBLIOGRAPHY, "Refs", [{"pmid": "1"}])
    resource = artifact.to_resource()
    assert resource.resource.uri == f"graphwright://artifact/{artifact.id}"
    assert resource.resource.mime_type == "application/vnd.bibliography"
    assert json.loads(resource.resource.text) == [{"pmid": "1"}]
    assert resource.resource.meta == {"title": "Refs"}
    assert resource.annotations.audience == ["user"]
    markdown = mcpkit.Artifact(mcpkit.MARKDOWN, "Doc", "# Hi", metadata={"source": "x"})
    assert markdown.to_resource().resource.text == "# Hi"
    assert markdown.to_resource().resource.meta == {"title": "Doc", "metadata": {"source": "x"}}


async def test_tools_through_a_client() -> None:
    async with Client(demo_server()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["countLetters"].description == (
            "Count the letters of a word.\n\nReturns the count and a graph artifact."
        )
        assert tools["countLetters"].output_schema["properties"] == {
            "letters": {"title": "Letters", "type": "integer"}
        }
        assert tools["renameWord"].annotations.destructive_hint is True

        result = await client.call_tool("countLetters", {"word": "kinase"})
        assert not result.is_error
        text, resource = result.content
        assert isinstance(text, TextContent) and text.text == "'kinase' has 6 letters."
        assert isinstance(resource, EmbeddedResource)
        assert resource.resource.mime_type == mcpkit.KNOWLEDGE_GRAPH
        assert result.structured_content == {"letters": 6}

        missing = await client.call_tool("countLetters", {"word": "missing"})
        assert missing.is_error
        assert [block.text for block in missing.content] == ["No word 'missing' here"]

        conflict = await client.call_tool("renameWord", {"word": "x"})
        assert conflict.is_error
        assert conflict.content[0].text == "'x' changed meanwhile"

        # A model the tool builds refuses: the words REST would use, not the SDK's "Error
        # executing tool spell" or pydantic's report.
        spelt = await client.call_tool("spell", {"word": "many"})
        assert spelt.is_error
        assert [block.text for block in spelt.content] == [
            "letters: Input should be a valid integer, unable to parse string as an integer"
        ]

        crash = await client.call_tool("crash", {})
        assert crash.is_error
        assert "secret internals" not in crash.content[0].text
        assert crash.content[0].text == (
            "crash failed on an unexpected error in the server, not on a problem found in the "
            "arguments; the server log has the details"
        )


def test_a_tool_taking_an_unbounded_integer_is_refused_at_registration() -> None:
    server = mcpkit.new_server("demo", instructions="Pages.")

    def page(
        offset: int, sizes: list[Annotated[int, Field(ge=1)]], top: int = Field(0, ge=0, le=9)
    ):
        """Read a page."""

    with pytest.raises(
        TypeError, match=r"Tool page: give offset, sizes\[\] a minimum and a maximum"
    ):
        mcpkit.add_tool(server, page, annotations=mcpkit.hints(read_only=True))


@pytest.mark.parametrize("verdict_is_async", [False, True])
def test_bearer_auth(verdict_is_async: bool) -> None:
    def check(token: str) -> bool:
        return token == "good"

    async def check_async(token: str) -> bool:
        return token == "good"

    async def ok(request):
        return PlainTextResponse("ok")

    guarded = mcp_http.BearerAuth(Route("/", ok), check_async if verdict_is_async else check)
    client = TestClient(Starlette(routes=[Route("/", guarded)]))
    assert client.get("/", headers={"Authorization": "Bearer good"}).text == "ok"
    for headers, message in [
        ({}, "A bearer token is required"),
        ({"Authorization": "Basic good"}, "A bearer token is required"),
        ({"Authorization": "Bearer bad"}, "The bearer token is not valid."),
    ]:
        response = client.get("/", headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"].startswith(message)


def test_bearer_auth_passes_on_unauthorized_messages_and_keeps_the_principal() -> None:
    def authenticate(token: str) -> dict[str, str]:
        if token != "good":
            raise Unauthorized("The bearer token has expired; mint a new one")
        return {"label": "tester"}

    async def whoami(request):
        return PlainTextResponse(request.state.principal["label"])

    guarded = mcp_http.BearerAuth(Route("/", whoami), authenticate)
    client = TestClient(Starlette(routes=[Route("/", guarded)]))
    assert client.get("/", headers={"Authorization": "Bearer good"}).text == "tester"
    expired = client.get("/", headers={"Authorization": "Bearer old"})
    assert expired.status_code == 401
    assert expired.json() == {"error": "The bearer token has expired; mint a new one"}


TOKEN_IDS = {"alice": 1, "bob": 2}


def fresh_principal(token: str) -> Principal | None:
    """A new but equal Principal per request, as graphwright's auth service returns."""
    token_id = TOKEN_IDS.get(token)
    return Principal(token_id, conversation_id=None, label=token) if token_id else None


def session_app(calls: list[str]) -> Starlette:
    """Opens a session (s1, s2, ...) per request without one; echoes the id like the SDK."""
    new_ids = itertools.count(1)

    async def mcp(request):
        session_id = request.headers.get("mcp-session-id") or f"s{next(new_ids)}"
        calls.append(f"{request.method} {session_id}")
        return PlainTextResponse("ok", headers={"mcp-session-id": session_id})

    return Starlette(routes=[Route("/", mcp, methods=["POST", "DELETE"])])


def guarded_sessions(calls: list[str], **options: int) -> tuple[mcp_http.BearerAuth, TestClient]:
    guarded = mcp_http.BearerAuth(session_app(calls), fresh_principal, **options)
    return guarded, TestClient(Starlette(routes=[Route("/", guarded, methods=["POST", "DELETE"])]))


def as_user(token: str, session_id: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}"}
    return headers | ({"mcp-session-id": session_id} if session_id else {})


def test_bearer_auth_binds_a_session_to_the_principal_that_opened_it() -> None:
    calls: list[str] = []
    _, client = guarded_sessions(calls)
    opened = client.post("/", headers=as_user("alice"))
    assert opened.headers["mcp-session-id"] == "s1"

    again = client.post("/", headers=as_user("alice", "s1"))
    assert (again.status_code, again.text) == (200, "ok")

    stolen = client.post("/", headers=as_user("bob", "s1"))
    assert stolen.status_code == 404
    assert stolen.json() == {"error": "Session not found"}
    assert calls == ["POST s1", "POST s1"]

    own = client.post("/", headers=as_user("bob"))
    assert (own.status_code, own.headers["mcp-session-id"]) == (200, "s2")
    assert client.post("/", headers=as_user("alice", "s2")).status_code == 404


def test_bearer_auth_forgets_a_session_once_it_is_deleted() -> None:
    calls: list[str] = []
    _, client = guarded_sessions(calls)
    client.post("/", headers=as_user("alice"))

    assert client.delete("/", headers=as_user("bob", "s1")).status_code == 404
    assert client.post("/", headers=as_user("alice", "s1")).status_code == 200
    assert client.delete("/", headers=as_user("alice", "s1")).status_code == 200
    assert client.post("/", headers=as_user("alice", "s1")).status_code == 404
    assert calls == ["POST s1", "POST s1", "DELETE s1"]


def test_bearer_auth_refuses_a_session_it_no_longer_records_to_everyone() -> None:
    calls: list[str] = []
    _, client = guarded_sessions(calls, max_sessions=2)
    for _ in range(3):
        client.post("/", headers=as_user("alice"))
    assert client.post("/", headers=as_user("alice", "s2")).status_code == 200
    for token in ("alice", "bob"):  # s1 was dropped at the cap: nobody can claim it
        assert client.post("/", headers=as_user(token, "s1")).status_code == 404
    assert client.post("/", headers=as_user("bob", "s3")).status_code == 404
    assert calls == ["POST s1", "POST s2", "POST s3", "POST s2"]


def test_a_principal_past_its_quota_loses_its_own_oldest_session() -> None:
    closed: list[str] = []

    async def close(session_id: str) -> None:
        closed.append(session_id)

    calls: list[str] = []
    guarded = mcp_http.BearerAuth(
        session_app(calls),
        fresh_principal,
        max_sessions=4,
        sessions_per_principal=2,
        close_session=close,
    )
    client = TestClient(Starlette(routes=[Route("/", guarded, methods=["POST", "DELETE"])]))
    for _ in range(3):  # s1, s2, s3: alice keeps her newest two
        client.post("/", headers=as_user("alice"))
    assert closed == ["s1"]
    assert client.post("/", headers=as_user("alice", "s1")).status_code == 404
    assert client.post("/", headers=as_user("alice", "s3")).status_code == 200
    assert client.post("/", headers=as_user("bob")).headers["mcp-session-id"] == "s4"
    assert len(guarded.sessions) == 3


def test_the_global_cap_evicts_from_the_principal_holding_the_most() -> None:
    owners = mcp_http.SessionOwners(limit=4, per_principal=3)
    for session_id in ("a1", "a2", "a3"):
        assert owners.claim(session_id, "alice") == []
    assert owners.claim("b1", "bob") == []
    assert owners.claim("b2", "bob") == ["a1"]  # bob still gets his session
    assert owners.owner("a1") is None and owners.owner("b2") == "bob"
    assert len(owners) == 4
