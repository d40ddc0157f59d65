"""The artifacts MCP server through a real MCP ClientSession, on every database backend.

Over stdio, `graphwright mcp artifacts` stores in the database its environment names and has no
conversation of its own, so calls name theirs with `contextId`. Over streamable HTTP, the server
is mounted in a FastAPI app on uvicorn with a default conversation, which calls then leave out.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp_types import CallToolResult

from graphwright.app import create_app
from graphwright.artifacts.service import ArtifactUpdateInput, GetArtifactInput
from graphwright.artifacts.store import SqlArtifactStore
from graphwright.artifacts.tools import MODEL_TEXT_LIMIT
from graphwright.core.artifacts import Artifact, Part
from graphwright.db import Database
from graphwright.settings import Settings
from tests.mcp.support import http_session, serving, stdio_session, text_of

HINTS = {  # tool: (readOnly, destructive, idempotent)
    "artifact_update": (False, False, False),
    "get_artifact": (True, False, True),
    "list_artifacts": (True, False, True),
    "delete_artifact": (False, True, False),
}


class Conversation:
    """Calls one conversation's tools; `context_id=None` leaves contextId to the server."""

    def __init__(self, session: ClientSession, context_id: str | None) -> None:
        self.session = session
        self.context_id = context_id

    async def call(self, tool: str, **arguments: Any) -> CallToolResult:
        if self.context_id is not None:
            arguments.setdefault("contextId", self.context_id)
        return await self.session.call_tool(tool, arguments)

    async def ok(self, tool: str, **arguments: Any) -> CallToolResult:
        result = await self.call(tool, **arguments)
        assert not result.is_error, f"{tool}: {text_of(result)}"
        return result

    async def fails(self, tool: str, message: str, **arguments: Any) -> None:
        result = await self.call(tool, **arguments)
        assert result.is_error, f"{tool} should have failed: {text_of(result)}"
        assert message in text_of(result), text_of(result)
        assert result.structured_content is None


async def check_tool_list(session: ClientSession) -> None:
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == set(HINTS)
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 80, name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        hints = tool.annotations
        assert hints is not None
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == HINTS[name]
        assert "contextId" in tool.input_schema["properties"], name
        assert "contextId" not in tool.input_schema.get("required", []), name
    update = tools["artifact_update"]
    assert "lastChunk=true" in update.description and "append=true" in update.description
    assert set(update.input_schema["properties"]) == {
        "artifact",
        "append",
        "lastChunk",
        "taskId",
        "contextId",
    }
    assert update.input_schema["required"] == ["artifact"]
    part = update.input_schema["$defs"]["Part"]["properties"]
    assert {"text", "raw", "url", "data", "mediaType"} <= set(part)


async def exercise(chat: Conversation, context_id: str) -> None:
    """Every tool, its results and its errors, in one conversation."""
    created = await chat.ok(
        "artifact_update",
        artifact={"artifactId": "notes", "name": "Notes", "parts": [{"text": "Hello "}]},
        taskId="turn-1",
    )
    assert text_of(created) == "Created artifact 'notes' (version 1)."
    assert created.structured_content == {
        "artifactId": "notes",
        "contextId": context_id,
        "taskId": "turn-1",
        "operation": "create",
        "version": 1,
        "sequence": 1,
        "closed": False,
    }
    closed = await chat.ok(
        "artifact_update",
        artifact={"artifactId": "notes", "parts": [{"text": "World", "mediaType": "text/plain"}]},
        append=True,
        lastChunk=True,
    )
    assert text_of(closed) == (
        "Appended to artifact 'notes' (version 2). It is closed: further appends will be refused."
    )
    assert closed.structured_content["closed"] is True
    await chat.fails(
        "artifact_update",
        "Artifact 'notes' is closed: its last chunk arrived at version 2, so it takes no more "
        "appends. Send append=false to replace its parts",
        artifact={"artifactId": "notes", "parts": [{"text": "!"}]},
        append=True,
    )

    read = await chat.ok("get_artifact", artifactId="notes")
    assert (
        text_of(read) == "Artifact 'Notes' (artifactId 'notes'), version 2, closed.\n\nHello World"
    )
    assert read.structured_content["artifact"] == {
        "artifactId": "notes",
        "name": "Notes",
        "parts": [{"text": "Hello World"}],
    }
    assert (read.structured_content["version"], read.structured_content["closed"]) == (2, True)
    first = await chat.ok("get_artifact", artifactId="notes", version=1)
    assert first.structured_content["artifact"]["parts"] == [{"text": "Hello "}]
    await chat.fails(
        "get_artifact", "no version 5; its versions run from 1 to 2", artifactId="notes", version=5
    )

    table = {"artifactId": "table", "parts": [{"data": {"rows": 1}}, {"text": "caption"}]}
    await chat.ok("artifact_update", artifact=table)
    replaced = await chat.ok(
        "artifact_update",
        artifact={
            "artifactId": "table",
            "parts": [{"data": {"rows": 2}, "mediaType": "application/json"}],
        },
    )
    assert text_of(replaced) == "Replaced parts of artifact 'table' (version 2)."
    table_now = await chat.ok("get_artifact", artifactId="table")
    assert table_now.structured_content["artifact"]["parts"] == [
        {"text": "caption"},
        {"data": {"rows": 2}, "mediaType": "application/json"},
    ]
    assert 'Data (application/json):\n{"rows":2}' in text_of(table_now)

    long_text = "x" * (MODEL_TEXT_LIMIT + 500)
    await chat.ok(
        "artifact_update", artifact={"artifactId": "long", "parts": [{"text": long_text}]}
    )
    long_read = await chat.ok("get_artifact", artifactId="long")
    assert "… (500 more characters; structuredContent holds the whole artifact)" in text_of(
        long_read
    )
    assert long_read.structured_content["artifact"]["parts"][0]["text"] == long_text

    listed = await chat.ok("list_artifacts")
    assert [a["artifactId"] for a in listed.structured_content["artifacts"]] == [
        "notes",
        "table",
        "long",
    ]
    assert listed.structured_content["contextId"] == context_id
    assert text_of(listed).splitlines()[:2] == [
        f"3 artifacts in conversation '{context_id}':",
        "- notes — Notes (text/plain): version 2, closed, task turn-1",
    ]
    by_task = await chat.ok("list_artifacts", taskId="turn-1")
    assert [a["artifactId"] for a in by_task.structured_content["artifacts"]] == ["notes"]

    deleted = await chat.ok("delete_artifact", artifactId="notes")
    assert text_of(deleted) == "Deleted artifact 'notes' and its versions."
    assert deleted.structured_content == {"artifactId": "notes", "deleted": True}
    await chat.fails(
        "delete_artifact", "No artifact 'notes' in this conversation", artifactId="notes"
    )
    await chat.fails("get_artifact", "No artifact 'notes' in this conversation", artifactId="notes")

    await chat.fails("artifact_update", "parts", artifact={"artifactId": "empty", "parts": []})
    await chat.fails(
        "artifact_update",
        "exactly one of text, raw, url or data",
        artifact={"artifactId": "both", "parts": [{"text": "a", "url": "https://example.org"}]},
    )


def stored_events(database_url: str, context_id: str) -> list[dict[str, Any]]:
    database = Database(database_url)
    try:
        return [event.to_json_dict() for event in SqlArtifactStore(database).events(context_id)]
    finally:
        database.dispose()


async def test_artifacts_over_stdio(tmp_path: Path, database_url: str) -> None:
    env = {"GRAPHWRIGHT_HOME": str(tmp_path), "GRAPHWRIGHT_DATABASE_URL": database_url}
    async with stdio_session("artifacts", env) as session:
        await check_tool_list(session)
        await exercise(Conversation(session, "conv-stdio"), "conv-stdio")
        elsewhere = await Conversation(session, "conv-other").ok("list_artifacts")
        assert text_of(elsewhere) == "No artifacts in conversation 'conv-other'."
        await Conversation(session, None).fails(
            "list_artifacts",
            "No conversation selected: pass contextId (the A2A context id of the conversation), "
            "or start the server with GRAPHWRIGHT_CONVERSATION set",
        )
    events = await asyncio.to_thread(stored_events, database_url, "conv-stdio")
    operations = [(e["artifact"]["artifactId"], e["metadata"]["operation"]) for e in events]
    assert operations == [
        ("notes", "create"),
        ("notes", "append"),
        ("table", "create"),
        ("table", "replace"),
        ("long", "create"),
        ("notes", "delete"),
    ]


async def test_artifacts_over_streamable_http(tmp_path: Path, database: Database) -> None:
    settings = Settings(home=tmp_path, database_url=database.url, conversation="conv-http")
    app = create_app(settings, database=database)
    token = app.state.auth_service.mint(label="desktop")
    async with serving(app) as base, http_session(f"{base}/mcp/artifacts", token) as session:
        await check_tool_list(session)
        await exercise(Conversation(session, None), "conv-http")
        other = Conversation(session, "conv-other")
        await other.fails(
            "get_artifact", "No artifact 'table' in this conversation", artifactId="table"
        )
        moved = await other.call(
            "artifact_update", artifact={"artifactId": "table", "parts": [{"text": "mine"}]}
        )
        assert moved.is_error
        assert text_of(moved) == "No artifact 'table' in this conversation"
    assert await asyncio.to_thread(stored_events, database.url, "conv-other") == []


async def test_a_scoped_token_reaches_only_its_own_conversation(
    tmp_path: Path, database: Database
) -> None:
    app = create_app(Settings(home=tmp_path, database_url=database.url), database=database)
    service = app.state.artifact_service
    secret = Artifact(artifact_id="secret", parts=[Part(text="B's notes")])
    service.artifact_update(ArtifactUpdateInput(artifact=secret), context_id="conv-b")
    token = app.state.auth_service.mint(conversation_id="conv-a", label="chat")
    refusal = (
        "This token is limited to conversation 'conv-a' and cannot access conversation 'conv-b'"
    )
    notes = {"artifactId": "notes", "parts": [{"text": "A's notes"}]}

    async with (
        serving(app) as base,
        http_session(f"{base}/mcp/artifacts", token) as session,
        aclosing(service.subscribe("conv-a")) as events,
    ):
        own = Conversation(session, None)
        written = await own.ok("artifact_update", artifact=notes)
        assert written.structured_content["contextId"] == "conv-a"
        assert (await asyncio.wait_for(anext(events), 10)).artifact.artifact_id == "notes"
        listed = await own.ok("list_artifacts")
        assert text_of(listed).startswith("1 artifact in conversation 'conv-a':")
        named = await Conversation(session, "conv-a").ok("get_artifact", artifactId="notes")
        assert "A's notes" in text_of(named)
        # The subscription's replay is over: only the app's own service can deliver this live.
        await own.ok("artifact_update", artifact=notes | {"parts": [{"text": "more"}]}, append=True)
        live = await asyncio.wait_for(anext(events), 10)
        assert (live.artifact.artifact_id, live.append) == ("notes", True)

        other = Conversation(session, "conv-b")
        await other.fails("get_artifact", refusal, artifactId="secret")
        await other.fails("list_artifacts", refusal)
        await other.fails("artifact_update", refusal, artifact={**notes, "artifactId": "secret"})
        await other.fails("delete_artifact", refusal, artifactId="secret")

    kept = service.get_artifact(GetArtifactInput(artifact_id="secret"), context_id="conv-b")
    assert (kept.version, kept.artifact.parts[0].text) == (1, "B's notes")
