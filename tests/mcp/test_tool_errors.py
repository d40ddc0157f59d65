"""Bad input to a tool is a tool error that names the problem in the REST API's own words.

Each case is sent twice, to the same graph: to the REST API (which answers 4xx) and, through a
real MCP client session, to the graph server, over stdio (`graphwright mcp graph`, embedded
database) and over streamable HTTP (the app's /mcp/graph, which reaches the graph through the
REST API). The tool result must be isError with REST's words for the problem, never the SDK's
bare "Error executing tool ..." (what a crash in a tool turns into) nor a traceback.

Then every server graphwright ships: each tool refuses an unknown argument and a wrongly typed
one by name, and bounds every integer it takes (an unbounded one reaches the database, which
fails past 64 bits, each backend differently).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp_types import CallToolResult

from graphwright import mcp_registry
from graphwright.app import create_app
from graphwright.db import Database
from graphwright.graphmode.schemas import NodeInput
from graphwright.settings import Settings
from tests.mcp.support import http_session, serving, stdio_session, text_of

CONVERSATION = "conv-errors"
BIG = 2**70
INT64_PAST = 2**63


@dataclass(frozen=True)
class Case:
    """One bad call: the tool and its arguments, the REST request that does the same, the
    status REST answers and the words both must use."""

    tool: str
    arguments: dict[str, Any]
    method: str
    path: str
    status: int
    words: str
    body: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)


CASES = [
    # bad ids and values
    Case("addNode", {"label": "x", "type": "gene", "canonicalId": " "}, "POST", "/nodes", 422,
         "A node id must not be blank", body={"id": " ", "label": "x", "type": "gene"}),
    Case("addNode", {"label": "x", "type": "gene", "canonicalId": "C:" + "9" * 600}, "POST",
         "/nodes", 422, "has 602 characters; the limit is 500",
         body={"id": "C:" + "9" * 600, "label": "x", "type": "gene"}),
    Case("addNode", {"label": "x" * 10_001, "type": "gene"}, "POST", "/nodes", 422,
         "label: String should have at most 10000 characters",
         body={"label": "x" * 10_001, "type": "gene"}),
    Case("addNode", {"label": "x", "type": "t" * 201}, "POST", "/nodes", 422,
         "type: String should have at most 200 characters", body={"label": "x", "type": "t" * 201}),
    Case("addNode", {"label": "a\x00b", "type": "gene"}, "POST", "/nodes", 422,
         "contains a NUL character (\\u0000), which cannot be stored",
         body={"label": "a\x00b", "type": "gene"}),
    Case("addNode", {"label": "x", "type": "gene", "data": {"count": BIG}}, "POST", "/nodes", 422,
         "data.count is an integer past 64 bits",
         body={"label": "x", "type": "gene", "data": {"count": BIG}}),
    Case("addEdge", {"source": "A:1", "target": "A:2", "data": {"n": -BIG}}, "POST", "/edges",
         422, "data.n is an integer past 64 bits",
         body={"source": "A:1", "target": "A:2", "data": {"n": -BIG}}),
    # out-of-range values
    Case("getHistory", {"offset": INT64_PAST}, "GET", "/history", 422,
         "offset: Input should be less than or equal to 9223372036854775807",
         params={"offset": INT64_PAST}),
    Case("filterByType", {"type": "gene", "offset": BIG}, "GET", "/state", 422,
         "offset: Input should be less than or equal to 9223372036854775807",
         params={"offset": BIG, "nodeTypes": "gene"}),
    Case("getHistory", {"limit": 0}, "GET", "/history", 422,
         "limit: Input should be greater than or equal to 1", params={"limit": 0}),
    Case("revertToVersion", {"version": 2**31}, "POST", f"/versions/{2**31}/revert", 422,
         "version: Input should be less than or equal to 2147483647"),
    Case("removeNodesByDegree", {"degree": INT64_PAST}, "DELETE", "/nodes/bulk", 422,
         "degree: Input should be less than or equal to 2147483647",
         body={"degree": INT64_PAST, "preview": True}),
    # unknown nodes, edges and versions
    Case("updateNode", {"nodeId": "Z:9", "label": "q"}, "PATCH", "/nodes/Z:9", 404,
         "No node 'Z:9' in this graph", body={"label": "q"}),
    Case("removeNode", {"nodeId": "Z:9"}, "DELETE", "/nodes/Z:9", 404,
         "No node 'Z:9' in this graph"),
    Case("removeEdge", {"edgeId": "edge_nope"}, "DELETE", "/edges/edge_nope", 404,
         "No edge 'edge_nope' in this graph"),
    Case("addEdge", {"source": "A:1", "target": "Z:9"}, "POST", "/edges", 404,
         "Cannot connect 'A:1' -> 'Z:9': no node 'Z:9' in this graph",
         body={"source": "A:1", "target": "Z:9"}),
    Case("mergeNodes", {"keepId": "A:1", "removeIds": ["Z:9"]}, "POST", "/merge-nodes", 404,
         "No node 'Z:9' in this graph", body={"keep": "A:1", "remove": ["Z:9"]}),
    Case("revertToVersion", {"version": 999}, "POST", "/versions/999/revert", 404,
         "Version 999 does not exist"),
    # conflicts
    Case("addNode", {"label": "again", "type": "gene", "canonicalId": "A:1"}, "POST", "/nodes",
         409, "A node with id 'A:1' already exists",
         body={"id": "A:1", "label": "again", "type": "gene"}),
    Case("redo", {}, "POST", "/redo", 409, "Nothing to redo"),
    Case("mergeNodes", {"keepId": "A:1", "removeIds": ["A:1"]}, "POST", "/merge-nodes", 422,
         "cannot be both kept and removed", body={"keep": "A:1", "remove": ["A:1"]}),
    # wrong types
    Case("getHistory", {"offset": "many"}, "GET", "/history", 422,
         "offset: Input should be a valid integer, unable to parse string as an integer",
         params={"offset": "many"}),
    Case("addNode", {"label": 5, "type": "gene"}, "POST", "/nodes", 422,
         "label: Input should be a valid string", body={"label": 5, "type": "gene"}),
    Case("addNode", {"label": "x", "type": "gene", "data": "nope"}, "POST", "/nodes", 422,
         "data: Input should be a valid dictionary",
         body={"label": "x", "type": "gene", "data": "nope"}),
]  # fmt: skip


def clear(result: CallToolResult, words: str) -> str | None:
    """Why `result` is not a clear tool error carrying `words`, or None if it is."""
    text = text_of(result)
    if not result.is_error:
        return f"not an error: {text[:200]}"
    if text.startswith("Error executing tool") or "Traceback" in text:
        return f"opaque: {text[:300]}"
    if words not in text:
        return f"lacks {words!r}: {text[:300]}"
    return None


@asynccontextmanager
async def graph_session(
    transport: str, app: Any, base: str, database: Database, home: Path
) -> AsyncIterator[ClientSession]:
    if transport == "stdio":
        env = {
            "GRAPHWRIGHT_HOME": str(home),
            "GRAPHWRIGHT_DATABASE_URL": database.url,
            "GRAPHWRIGHT_CONVERSATION": CONVERSATION,
            # the code under test, where the venv's editable install points at another checkout
            **{key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ},
        }
        async with stdio_session("graph", env) as session:
            yield session
    else:
        token = app.state.auth_service.mint(conversation_id=CONVERSATION, label="mcp")
        async with http_session(f"{base}/mcp/graph", token) as session:
            yield session


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_graph_tools_refuse_bad_input_in_the_rest_apis_words(
    transport: str, tmp_path: Path, database: Database
) -> None:
    app = create_app(Settings(home=tmp_path, database_url=database.url), database=database)
    service = app.state.graph_service
    service.add_nodes(
        CONVERSATION,
        [NodeInput(id=f"A:{i}", label=f"gene {i}", type="gene") for i in (1, 2)],
        actor="test",
    )
    token = app.state.auth_service.mint(label="rest")
    failures = []
    async with (
        serving(app) as base,
        httpx.AsyncClient(
            base_url=f"{base}/api/graph/{CONVERSATION}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        ) as rest,
        graph_session(transport, app, base, database, tmp_path) as session,
    ):
        for case in CASES:
            answer = await rest.request(
                case.method, case.path, json=case.body, params=case.params or None
            )
            message = answer.json()["error"]["message"]
            if answer.status_code != case.status or case.words not in message:
                failures.append((case.tool, "REST", answer.status_code, message[:200]))
            result = await session.call_tool(case.tool, case.arguments)
            if problem := clear(result, case.words):
                failures.append((case.tool, "MCP", problem))
        unknown = await session.call_tool("detectCommunities", {"bogus": 1})
        if problem := clear(unknown, "bogus: Extra inputs are not permitted"):
            failures.append(("detectCommunities", "MCP", problem))
    assert not failures, "\n".join(map(str, failures))
    assert service.history(CONVERSATION).total == 1  # no bad call changed the graph


# --- every server ------------------------------------------------------------------------------

UNKNOWN = "notAnArgument"


def json_types(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    if "$ref" in schema:
        return json_types(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    kinds = schema.get("type")
    found = {kinds} if isinstance(kinds, str) else set(kinds or ())
    if "properties" in schema:
        found.add("object")
    if "enum" in schema or "const" in schema:
        found.add("string")
    for sub in schema.get("anyOf") or []:
        found |= json_types(sub, defs)
    return found


def wrong_value(kinds: set[str]) -> Any:
    """A value of a JSON type the argument does not take."""
    candidates = [({"nested": True}, "object"), ([[1]], "array"), ("text", "string")]
    return next(value for value, kind in candidates if kind not in kinds)


def bad_calls(schema: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Calls to a tool with one bad argument each, and the words its error must have."""
    defs = schema.get("$defs") or {}
    calls = [({UNKNOWN: 1}, f"{UNKNOWN}: Extra inputs are not permitted")]
    for name, prop in (schema.get("properties") or {}).items():
        if kinds := json_types(prop, defs):  # no type: any JSON value will do
            # a union names its member after the field (`graph.str: ...`), as REST does
            calls.append(({name: wrong_value(kinds)}, f"- {name}"))
        bounded = next((s for s in [prop, *(prop.get("anyOf") or [])] if "maximum" in s), None)
        if bounded is not None:
            calls.append(
                (
                    {name: bounded["maximum"] + 1},
                    f"{name}: Input should be less than or equal to {bounded['maximum']}",
                )
            )
    return calls


def unbounded_integers(schema: Any, defs: dict[str, Any], where: str = "") -> list[str]:
    if not isinstance(schema, dict):
        return []
    found = []
    if "$ref" in schema:
        found += unbounded_integers(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, where)
    if "integer" in json_types({"type": schema.get("type")}, defs) and not (
        "maximum" in schema and "minimum" in schema
    ):
        found.append(where)
    for key, sub in (schema.get("properties") or {}).items():
        found += unbounded_integers(sub, defs, f"{where}.{key}" if where else key)
    for sub in [*(schema.get("anyOf") or []), schema.get("items")]:
        found += unbounded_integers(sub, defs, where)
    return found


@pytest.mark.parametrize("server", mcp_registry.names())
async def test_every_server_names_bad_arguments(
    server: str, tmp_path: Path, database: Database
) -> None:
    settings = Settings(home=tmp_path, database_url=database.url, offline=True)
    app = create_app(settings, database=database)
    token = app.state.auth_service.mint(conversation_id=CONVERSATION, label="mcp")
    failures = []
    async with serving(app) as base, http_session(f"{base}/mcp/{server}", token) as session:
        tools = (await session.list_tools()).tools
        assert tools
        for tool in tools:
            schema = tool.input_schema
            assert schema.get("additionalProperties") is False, tool.name
            if loose := unbounded_integers(schema, schema.get("$defs") or {}):
                failures.append((tool.name, "unbounded integers", loose))
            for arguments, words in bad_calls(schema):
                result = await session.call_tool(tool.name, arguments)
                if problem := clear(result, words):
                    failures.append((tool.name, arguments, problem))
    assert not failures, "\n".join(map(str, failures))
