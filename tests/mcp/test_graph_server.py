"""The graph MCP server through a real MCP ClientSession.

Over stdio, `graphwright mcp graph` uses the embedded database named by its environment. Over
streamable HTTP, the server is mounted in the real app on uvicorn, and every call carries seed
004's `databaseContext`, which points back at that app's REST API with a minted token.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.settings import Settings
from tests.mcp.support import http_session, serving, text_of

GRAPHWRIGHT = Path(sys.executable).parent / "graphwright"
READ_TOOLS = {
    "getGraphState",
    "searchNodes",
    "filterByType",
    "getNeighbors",
    "findPath",
    "getHistory",
    "analyzeStructure",
    "findCentrality",
    "detectCommunities",
}
DESTRUCTIVE_TOOLS = {
    "removeNode",
    "removeEdge",
    "bulkRemoveNodes",
    "bulkRemoveEdges",
    "removeNodesByDegree",
    "removeNodesByType",
    "mergeNodes",
    "revertToVersion",
    "undo",
    "redo",
}
WRITE_TOOLS = {
    "addNode",
    "addEdge",
    "updateNode",
    "updateEdge",
    "addMultipleNodes",
    "addMultipleEdges",
    "importFromJSON",
    "applyLayout",
}
ALL_TOOLS = READ_TOOLS | DESTRUCTIVE_TOOLS | WRITE_TOOLS

Call = Callable[[str, dict[str, Any]], Awaitable[CallToolResult]]


async def ok(call: Call, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
    result = await call(name, arguments or {})
    assert not result.is_error, f"{name}: {text_of(result)}"
    return result


async def fails(call: Call, name: str, arguments: dict[str, Any], message: str) -> None:
    result = await call(name, arguments)
    assert result.is_error, f"{name} should have failed: {text_of(result)}"
    assert message in text_of(result), text_of(result)


async def check_tool_list(session: ClientSession) -> None:
    tools = (await session.list_tools()).tools
    assert {tool.name for tool in tools} == ALL_TOOLS
    for tool in tools:
        assert tool.description and len(tool.description) > 40, tool.name
        assert "databaseContext" not in json.dumps(tool.input_schema), tool.name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is (tool.name in READ_TOOLS), tool.name
        assert hints.destructive_hint is (tool.name in DESTRUCTIVE_TOOLS), tool.name
    add_node = next(tool for tool in tools if tool.name == "addNode")
    assert set(add_node.input_schema["properties"]) == {
        "label",
        "type",
        "data",
        "position",
        "canonicalId",
    }
    assert add_node.input_schema["required"] == ["label", "type"]
    templates = (await session.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["graph://{conversationId}"]


async def build_and_edit(call: Call) -> None:
    """Every editing tool, with the seed's wording and errors that name the problem."""
    added = await ok(
        call, "addNode", {"label": "TP53", "type": "gene", "canonicalId": "NCBIGene:7157"}
    )
    assert text_of(added).startswith("Added node 'TP53' (Gene) with id 'NCBIGene:7157'")
    assert added.structured_content["node"]["id"] == "NCBIGene:7157"
    await ok(
        call,
        "addNode",
        {
            "label": "Type 2 Diabetes",
            "type": "disease",
            "canonicalId": "MONDO:0005148",
            "data": {"description": "metabolic disease"},
            "position": {"x": 10, "y": 20},
        },
    )
    await fails(
        call,
        "addNode",
        {"label": "again", "type": "gene", "canonicalId": "NCBIGene:7157"},
        "A node with id 'NCBIGene:7157' already exists",
    )
    await fails(call, "addNode", {"label": "", "type": "gene"}, "label")

    edge = await ok(
        call,
        "addEdge",
        {"source": "NCBIGene:7157", "target": "MONDO:0005148", "label": "associated_with"},
    )
    assert text_of(edge).startswith(
        "Added edge from 'TP53' to 'Type 2 Diabetes' with label 'associated_with'."
    )
    edge_id = edge.structured_content["edge"]["id"]
    await fails(
        call, "addEdge", {"source": "NCBIGene:7157", "target": "XYZ"}, "no node 'XYZ' in this graph"
    )

    renamed = await ok(call, "updateNode", {"nodeId": "NCBIGene:7157", "label": "TP53 (p53)"})
    assert "Updated node 'TP53 (p53)' (label;" in text_of(renamed)
    await fails(call, "updateNode", {"nodeId": "NCBIGene:7157"}, "Give at least one of")
    await fails(call, "updateNode", {"nodeId": "XYZ", "label": "x"}, "No node 'XYZ' in this graph")
    relabelled = await ok(call, "updateEdge", {"edgeId": edge_id, "label": "causes"})
    assert relabelled.structured_content["edge"]["label"] == "causes"

    many = await ok(
        call,
        "addMultipleNodes",
        {
            "nodes": [
                {"label": "MDM2", "type": "gene", "canonicalId": "NCBIGene:4193"},
                {"label": "nutlin-3", "type": "drug", "canonicalId": "CHEBI:46742"},
                {"label": "lonely", "type": "other", "canonicalId": "X:1"},
                {"label": "orphan", "type": "other", "canonicalId": "X:2"},
            ]
        },
    )
    assert many.structured_content["count"] == 4
    assert text_of(many).startswith("Added 4 nodes: 'MDM2', 'nutlin-3', 'lonely', 'orphan'")
    edges = await ok(
        call,
        "addMultipleEdges",
        {
            "edges": [
                {"source": "CHEBI:46742", "target": "NCBIGene:4193", "label": "inhibits"},
                {"source": "NCBIGene:4193", "target": "NCBIGene:7157", "label": "regulates"},
                {"source": "X:1", "target": "X:2", "label": "near"},
            ]
        },
    )
    assert edges.structured_content["count"] == 3
    await fails(
        call,
        "addMultipleEdges",
        {"edges": [{"source": "X:1", "target": "NOPE:1"}]},
        "no node 'NOPE:1' in this graph",
    )

    imported = await ok(
        call,
        "importFromJSON",
        {
            "graph": {
                "nodes": [
                    {"id": "NCBIGene:7157", "name": "TP53", "category": "gene"},
                    {"id": "MONDO:0005148", "name": "Type 2 Diabetes", "category": "disease"},
                    {"id": "HP:0001513", "name": "obesity", "category": "phenotype"},
                ],
                "links": [
                    {
                        "source": "HP:0001513",
                        "target": "MONDO:0005148",
                        "label": "risk_for",
                        "evidence": ["PMID:1"],
                    }
                ],
            }
        },
    )
    report = imported.structured_content["report"]
    assert (report["nodesAdded"], report["nodesMerged"], report["edgesAdded"]) == (1, 2, 1)


async def read_and_analyse(call: Call) -> None:
    state = await ok(call, "getGraphState")
    assert text_of(state).startswith("Current graph has 7 nodes and 5 edges")
    assert state.structured_content["nodeTypes"]["Gene"] == 2
    assert state.structured_content["nextCursor"] is None

    found = await ok(call, "searchNodes", {"query": "tp53"})
    assert found.structured_content["nodes"][0]["id"] == "NCBIGene:7157"
    by_property = await ok(
        call, "searchNodes", {"properties": {"description": "metabolic disease"}}
    )
    assert [n["id"] for n in by_property.structured_content["nodes"]] == ["MONDO:0005148"]
    await fails(call, "searchNodes", {}, "Give a query, properties or a type")
    # A broken argument is worded one line per field, not as pydantic's report.
    await fails(
        call, "getGraphState", {"tokenBudget": 3}, "Invalid arguments for getGraphState:\n- "
    )
    wrong = await call("filterByType", {"type": "", "limit": "many"})
    assert "pydantic.dev" not in text_of(wrong) and "validation error" not in text_of(wrong)
    assert len(text_of(wrong).splitlines()) == 3, text_of(wrong)

    genes = await ok(call, "filterByType", {"type": "Gene"})
    assert {n["id"] for n in genes.structured_content["nodes"]} == {
        "NCBIGene:7157",
        "NCBIGene:4193",
    }
    assert text_of(genes).startswith("2 nodes of type 'Gene'")

    near = await ok(call, "getNeighbors", {"nodeId": "ncbigene:4193"})
    assert {n["id"] for n in near.structured_content["neighbors"]} == {
        "CHEBI:46742",
        "NCBIGene:7157",
    }
    outward = await ok(call, "getNeighbors", {"nodeId": "NCBIGene:4193", "direction": "out"})
    assert [n["id"] for n in outward.structured_content["neighbors"]] == ["NCBIGene:7157"]
    await fails(call, "getNeighbors", {"nodeId": "XYZ"}, "No node 'XYZ' in this graph")

    route = await ok(call, "findPath", {"source": "CHEBI:46742", "target": "HP:0001513"})
    assert [n["id"] for n in route.structured_content["nodes"]] == [
        "CHEBI:46742",
        "NCBIGene:4193",
        "NCBIGene:7157",
        "MONDO:0005148",
        "HP:0001513",
    ]
    assert text_of(route).startswith("Shortest path (4 steps): nutlin-3 -[inhibits]- MDM2")
    await fails(call, "findPath", {"source": "X:1", "target": "CHEBI:46742"}, "No path from")

    shape = await ok(call, "analyzeStructure")
    assert shape.structured_content["components"]["count"] == 2
    assert shape.structured_content["diameter"]["value"] == 4
    assert "2 connected components" in text_of(shape)
    central = await ok(call, "findCentrality", {"measure": "betweenness", "top": 2})
    assert central.structured_content["top"][0]["id"] in {"NCBIGene:7157", "MONDO:0005148"}
    await fails(call, "findCentrality", {"measure": "fame"}, "measure")
    groups = await ok(call, "detectCommunities")
    assert groups.structured_content["count"] >= 2
    assert sum(c["size"] for c in groups.structured_content["communities"]) == 7


async def layout_history_and_removal(call: Call, read_graph: Callable[[], Awaitable[dict]]) -> None:
    laid = await ok(call, "applyLayout", {"layout": "hierarchical"})
    assert laid.structured_content["nodeCount"] == 7
    graph = await read_graph()
    positions = {n["id"]: n.get("position") for n in graph["nodes"]}
    assert all(position is not None for position in positions.values())
    assert positions["CHEBI:46742"]["y"] < positions["NCBIGene:4193"]["y"]
    layout_version = laid.structured_content["version"]

    undone = await ok(call, "undo")
    assert text_of(undone) == (
        f"Undid version {layout_version}; the graph is now at version {layout_version + 1}."
    )
    restored = {n["id"]: n.get("position") for n in (await read_graph())["nodes"]}
    assert restored["MONDO:0005148"] == {"x": 10.0, "y": 20.0}
    await ok(call, "redo")
    await fails(call, "redo", {}, "Nothing to redo")
    for kind in ("circular", "force"):
        await ok(call, "applyLayout", {"layout": kind})

    history = await ok(call, "getHistory", {"limit": 5})
    assert history.structured_content["items"][0]["command"] == "batch"
    assert text_of(history).startswith("The graph is at version")
    assert " moved 7 nodes, by " in text_of(history).splitlines()[1]  # the layout, in words

    preview = await ok(call, "removeNodesByType", {"types": ["other"], "preview": True})
    assert text_of(preview).startswith("Preview: this would remove 2 nodes")
    assert preview.structured_content["nodeCount"] == 2
    before = (await ok(call, "getGraphState")).structured_content
    assert before["nodeCount"] == 7
    await fails(call, "removeNodesByType", {}, "Give types to remove")

    isolated = await ok(call, "removeNodesByDegree", {"degree": 0, "preview": True})
    assert isolated.structured_content["nodeCount"] == 0
    await fails(call, "removeNodesByDegree", {}, "Select nodes by exactly one of")
    await fails(call, "removeNodesByDegree", {"degree": 2**63}, "less than or equal to 2147483647")
    await fails(call, "removeNodesByDegree", {"degre": 0}, "degre: Extra inputs are not permitted")
    gone = await ok(call, "removeNodesByType", {"types": ["other"]})
    assert gone.structured_content["edgeCount"] == 1
    assert (await ok(call, "getGraphState")).structured_content["nodeCount"] == 5

    merged = await ok(
        call, "mergeNodes", {"keepId": "NCBIGene:7157", "removeIds": ["NCBIGene:4193"]}
    )
    assert "into 'TP53 (p53)'" in text_of(merged)
    after_merge = (await ok(call, "getGraphState")).structured_content
    assert after_merge["nodeCount"] == 4

    edges = {e["label"]: e["id"] for e in after_merge["edges"]}
    removed_edge = await ok(call, "removeEdge", {"edgeId": edges["causes"]})
    assert text_of(removed_edge).startswith(
        "Removed edge connecting 'TP53 (p53)' to 'Type 2 Diabetes'"
    )
    await fails(call, "removeEdge", {"edgeId": "edge_nope"}, "No edge 'edge_nope' in this graph")
    await ok(call, "bulkRemoveEdges", {"edgeIds": [edges["inhibits"]]})
    removed = await ok(call, "removeNode", {"nodeId": "HP:0001513"})
    assert text_of(removed).startswith("Removed node 'obesity' and its 1 connected edge")
    await fails(call, "removeNode", {"nodeId": "XYZ"}, "No node 'XYZ' in this graph")
    bulk = await ok(call, "bulkRemoveNodes", {"nodeIds": ["CHEBI:46742"]})
    assert bulk.structured_content["nodeIds"] == ["CHEBI:46742"]

    version = history.structured_content["version"]
    reverted = await ok(call, "revertToVersion", {"version": 2})
    assert text_of(reverted).startswith("Reverted the graph to version 2")
    assert reverted.structured_content["version"] > version
    state = (await ok(call, "getGraphState")).structured_content
    assert (state["nodeCount"], state["edgeCount"]) == (2, 0)
    await fails(call, "revertToVersion", {"version": 9999}, "Version 9999 does not exist")


async def page_a_bigger_graph(call: Call) -> None:
    nodes = [{"label": f"gene {i}", "type": "gene", "canonicalId": f"G:{i}"} for i in range(400)]
    await ok(call, "addMultipleNodes", {"nodes": nodes})
    first = (await ok(call, "getGraphState", {"tokenBudget": 1000})).structured_content
    assert first["nextCursor"] and len(first["nodes"]) < 400
    seen = [n["id"] for n in first["nodes"]]
    cursor = first["nextCursor"]
    while cursor:
        page = await ok(call, "getGraphState", {"tokenBudget": 1000, "cursor": cursor})
        assert len(text_of(page)) / 4 < 1000
        seen += [n["id"] for n in page.structured_content["nodes"]]
        cursor = page.structured_content["nextCursor"]
    assert len(seen) == len(set(seen)) == first["nodeCount"]
    genes = await ok(call, "filterByType", {"type": "GENE", "offset": 0, "limit": 50})
    assert genes.structured_content["count"] == 401
    assert len(genes.structured_content["nodes"]) == 50 and genes.structured_content["truncated"]
    last = await ok(call, "filterByType", {"type": "gene", "offset": 400, "limit": 50})
    assert len(last.structured_content["nodes"]) == 1 and not last.structured_content["truncated"]
    none = await ok(call, "filterByType", {"type": "pathway"})
    assert text_of(none) == "0 nodes of type 'pathway' (showing none)."
    await fails(call, "getGraphState", {"cursor": "garbage"}, "is not one that getGraphState")
    await fails(call, "getGraphState", {"tokenBudget": 50}, "tokenBudget")


async def run_everything(session: ClientSession, call: Call, conversation: str) -> None:
    await check_tool_list(session)

    async def read_graph() -> dict:
        contents = (await session.read_resource(f"graph://{conversation}")).contents
        return json.loads(contents[0].text)

    await build_and_edit(call)
    await read_and_analyse(call)
    await layout_history_and_removal(call, read_graph)
    await page_a_bigger_graph(call)


# --- stdio -----------------------------------------------------------------------------------


def stdio_params(home: Path, database_url: str, conversation: str | None) -> StdioServerParameters:
    env = {"GRAPHWRIGHT_HOME": str(home), "GRAPHWRIGHT_DATABASE_URL": database_url}
    if conversation:
        env["GRAPHWRIGHT_CONVERSATION"] = conversation
    return StdioServerParameters(command=str(GRAPHWRIGHT), args=["mcp", "graph"], env=env)


async def test_graph_server_over_stdio(tmp_path: Path, database_url: str) -> None:
    params = stdio_params(tmp_path, database_url, "conv-1")
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await run_everything(session, session.call_tool, "conv-1")

        other = await session.call_tool(
            "getGraphState", {"databaseContext": {"conversationId": "conv-2"}}
        )
        assert text_of(other).startswith("Current graph has 0 nodes and 0 edges (version 0).")
        await ok(
            session.call_tool,
            "addNode",
            {"label": "elsewhere", "type": "gene", "databaseContext": {"conversationId": "conv-2"}},
        )
        mine = (await ok(session.call_tool, "getGraphState")).structured_content
        assert "elsewhere" not in json.dumps(mine)
        await fails(
            session.call_tool,
            "getGraphState",
            {"databaseContext": {"conversationId": " "}},
            "databaseContext.conversationId must be a non-empty string",
        )
        await fails(
            session.call_tool,
            "getGraphState",
            {"databaseContext": {"conversationId": "c", "apiBaseUrl": "file:///etc"}},
            "apiBaseUrl must be an http or https URL",
        )
        await fails(
            session.call_tool,
            "getGraphState",
            {"databaseContext": {"conversationId": "c", "apiBaseUrl": "http://127.0.0.1:9"}},
            "Cannot reach the graph API at http://127.0.0.1:9",
        )

    database = Database(database_url)
    try:
        service_graph = graph_resolver_service(database).to_graph("conv-2")
    finally:
        database.dispose()
    assert [n["name"] for n in service_graph["nodes"]] == ["elsewhere"]


def graph_resolver_service(database: Database) -> Any:
    from graphwright.graphmode.events import create_graph_events
    from graphwright.graphmode.service import GraphService

    return GraphService(database, create_graph_events(database))


async def test_no_conversation_is_a_clear_tool_error(tmp_path: Path) -> None:
    params = stdio_params(tmp_path, f"sqlite:///{tmp_path / 'g.db'}", None)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("addNode", {"label": "TP53", "type": "gene"})
    assert result.is_error
    assert text_of(result).startswith("No conversation selected")


# --- streamable HTTP, databaseContext pointing at the app's REST API ---------------------------


async def test_graph_server_over_http_with_database_context(
    tmp_path: Path, database: Database
) -> None:
    app = create_app(Settings(home=tmp_path, database_url=database.url), database=database)
    auth = app.state.auth_service
    token = auth.mint(conversation_id="conv-http", label="chat")
    other_token = auth.mint(conversation_id="someone-else")

    async with serving(app) as base:
        context = {"conversationId": "conv-http", "apiBaseUrl": base, "accessToken": token}
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            streamable_http_client(f"{base}/mcp/graph", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()

            async def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
                return await session.call_tool(name, {**arguments, "databaseContext": context})

            await check_tool_list(session)

            async def read_graph() -> dict:
                response = await http.get(
                    f"{base}/api/graph/conv-http/export", params={"format": "json"}
                )
                return response.json()

            await build_and_edit(call)
            await read_and_analyse(call)
            await layout_history_and_removal(call, read_graph)
            await page_a_bigger_graph(call)

            history = await http.get(f"{base}/api/graph/conv-http/history")
            assert {item["actor"] for item in history.json()["data"]["items"]} == {"chat"}

            forbidden = await session.call_tool(
                "getGraphState",
                {"databaseContext": {**context, "accessToken": other_token}},
            )
            assert forbidden.is_error
            assert "limited to conversation 'someone-else'" in text_of(forbidden)
            bad_token = await session.call_tool(
                "addNode",
                {"label": "x", "type": "gene", "databaseContext": {**context, "accessToken": "x"}},
            )
            assert bad_token.is_error and "bearer token is not valid" in text_of(bad_token)
            elsewhere = await session.call_tool(
                "getGraphState",
                {"databaseContext": {**context, "apiBaseUrl": "http://10.0.0.1:8000"}},
            )
            assert elsewhere.is_error
            assert "reaches only its own graph API" in text_of(elsewhere)
            same_server = base.replace("127.0.0.1", "localhost")
            by_name = await call(
                "getGraphState", {"databaseContext": {**context, "apiBaseUrl": same_server}}
            )
            assert not by_name.is_error, text_of(by_name)
            # No token in the databaseContext: the MCP caller's own (scoped) token is used.
            scoped = await session.call_tool(
                "addNode",
                {"label": "x", "type": "gene", "databaseContext": {"conversationId": "other"}},
            )
            assert scoped.is_error
            assert "limited to conversation 'conv-http'" in text_of(scoped)
            own = await session.read_resource("graph://conv-http")
            assert json.loads(own.contents[0].text)["nodes"]
            with pytest.raises(MCPError, match="limited to conversation 'conv-http'"):
                await session.read_resource("graph://other")
            # No databaseContext at all: the conversation the caller's token is scoped to.
            unnamed = await session.call_tool("getGraphState", {})
            assert not unnamed.is_error, text_of(unnamed)
            named = await call("getGraphState", {})
            assert unnamed.structured_content == named.structured_content
            assert unnamed.structured_content["nodeCount"] > 0

        async with http_session(f"{base}/mcp/graph", auth.mint(label="any")) as unscoped:
            nowhere = await unscoped.call_tool("getGraphState", {})
        assert nowhere.is_error and text_of(nowhere).startswith("No conversation selected")


async def test_stdio_server_uses_the_api_named_by_its_environment(
    tmp_path: Path, database: Database
) -> None:
    app = create_app(Settings(home=tmp_path, database_url=database.url), database=database)
    token = app.state.auth_service.mint(conversation_id="conv-env", label="desktop")
    async with serving(app) as base:
        params = StdioServerParameters(
            command=str(GRAPHWRIGHT),
            args=["mcp", "graph"],
            env={
                "GRAPHWRIGHT_HOME": str(tmp_path / "elsewhere"),
                "GRAPHWRIGHT_API_URL": base,
                "GRAPHWRIGHT_TOKEN": token,
                "GRAPHWRIGHT_CONVERSATION": "conv-env",
            },
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await ok(session.call_tool, "addNode", {"label": "TP53", "type": "gene"})
            other = await session.call_tool(
                "getGraphState", {"databaseContext": {"conversationId": "conv-other"}}
            )
    assert other.is_error and "limited to conversation 'conv-env'" in text_of(other)
    history = app.state.graph_service.history("conv-env")
    assert [(item.command, item.actor) for item in history.items] == [("addNode", "desktop")]
    assert not (tmp_path / "elsewhere" / "graphwright.db").exists()


@pytest.fixture(autouse=True)
def _no_ambient_graph_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GRAPHWRIGHT_API_URL", "GRAPHWRIGHT_TOKEN", "GRAPHWRIGHT_CONVERSATION"):
        monkeypatch.delenv(key, raising=False)
