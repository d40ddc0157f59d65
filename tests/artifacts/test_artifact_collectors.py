"""The collector against every result shape of seeds 003 and 004, and MCP-native results."""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, ConfigDict

from graphwright.artifacts.collectors import collect
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, MARKDOWN
from tests.artifacts.support import fixture


def test_pubmed_bibliography_field_becomes_one_artifact_and_text_goes_to_the_model() -> None:
    payload = fixture("seed003_pubmed_bibliography.json")
    collected = collect(payload, tool="pubmed-search", call_id="call-1")
    assert collected.errors == []
    assert collected.model_content == payload["content"]
    [draft] = collected.drafts
    assert draft.origin.call_id == "call-1"
    part = draft.artifact.parts[0]
    assert (draft.artifact.name, part.media_type) == ("Article References", BIBLIOGRAPHY)
    assert part.data == payload["bibliography"]


def test_grant_markdown_becomes_a_markdown_artifact_with_its_metadata() -> None:
    payload = fixture("seed003_grant_markdown.json")
    collected = collect(payload, tool="grant-fetch", call_id="call-2")
    [draft] = collected.drafts
    assert draft.artifact.name == "NIH Grant Details"
    assert draft.artifact.parts[0].text == payload["grantMarkdown"]["content"]
    assert draft.artifact.parts[0].media_type == MARKDOWN
    assert draft.artifact.metadata == {
        **payload["grantMarkdown"]["metadata"],
        "language": "markdown",
    }
    assert collected.model_content == payload["content"]


def test_medik_knowledge_graph_string_content_is_parsed() -> None:
    payload = fixture("seed003_medik_knowledge_graph.json")
    collected = collect(payload, tool="medik", call_id="call-3")
    [draft] = collected.drafts
    assert draft.artifact.parts[0].media_type == KNOWLEDGE_GRAPH
    assert draft.artifact.parts[0].data == json.loads(payload["artifacts"][0]["content"])
    assert collected.model_content == payload["content"]


def test_object_content_is_taken_as_it_is() -> None:
    graph = {"nodes": [{"id": "HGNC:11998", "name": "TP53"}], "links": []}
    payload = {
        "content": [{"type": "text", "text": "1 node"}],
        "artifacts": [{"type": KNOWLEDGE_GRAPH, "title": "KG", "content": graph}],
    }
    [draft] = collect(payload, tool="t", call_id="c").drafts
    assert draft.artifact.parts[0].data == graph


def test_seed004_graph_mode_results_carry_no_artifacts() -> None:
    for name in ("seed004_add_node.json", "seed004_get_graph_state.json"):
        payload = fixture(name)
        collected = collect(payload, tool="addNode", call_id="c")
        assert (collected.drafts, collected.errors) == ([], [])
        assert collected.model_content == payload["content"]
        assert not collected.is_error


def test_seed004_error_result_goes_to_the_model_only() -> None:
    payload = fixture("seed004_error.json")
    payload["artifacts"] = [{"type": "text/plain", "title": "ignored", "content": "x"}]
    collected = collect(payload, tool="removeNode", call_id="c")
    assert collected.is_error
    assert collected.drafts == []
    assert collected.model_content == payload["content"]


def test_malformed_artifacts_become_error_notes_and_the_rest_proceeds() -> None:
    payload = fixture("seed003_medik_knowledge_graph.json")
    payload["artifacts"] = [
        {"type": KNOWLEDGE_GRAPH, "title": "Broken", "content": "{not json"},
        payload["artifacts"][0],
        {"type": "image/png", "title": "Plot", "content": "%%%"},
        {"title": "no type", "content": "x"},
    ]
    payload["bibliography"] = {"pmid": "1"}
    collected = collect(payload, tool="medik", call_id="call-9")
    assert [d.artifact.parts[0].media_type for d in collected.drafts] == [KNOWLEDGE_GRAPH]
    messages = [e.message for e in collected.errors]
    assert len(messages) == 4
    assert all(m.startswith("Tool call call-9 (medik): ") for m in messages)
    assert any("bibliography" in m and "list of citation objects" in m for m in messages)
    assert any("'Broken'" in m and "not valid JSON" in m for m in messages)
    assert any("'Plot'" in m and "base64" in m for m in messages)
    assert any("MIME `type`" in m for m in messages)


def test_binary_output_becomes_a_raw_part() -> None:
    png = b"\x89PNG\r\n"
    payload = {
        "content": [{"type": "text", "text": "plotted"}],
        "binaryOutput": {
            "type": "image/png",
            "data": base64.b64encode(png).decode(),
            "metadata": {"size": len(png)},
        },
    }
    [draft] = collect(payload, tool="python", call_id="c").drafts
    part = draft.artifact.parts[0]
    assert (part.raw, part.media_type) == (png, "image/png")
    assert draft.artifact.metadata == {"size": len(png)}


def test_native_result_built_with_sdk_types() -> None:
    graph = {"nodes": [{"id": "NCBIGene:7157", "name": "TP53"}], "links": []}
    result = types.CallToolResult(
        content=[
            types.TextContent(text="one gene"),
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="kg://medik/tp53", mime_type=KNOWLEDGE_GRAPH, text=json.dumps(graph)
                )
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="file:///plots/tp53.png",
                    mime_type="image/png",
                    blob="iVBORw==",
                    _meta={"title": "TP53 plot", "metadata": {"source": "plotter", "dpi": 72}},
                )
            ),
            types.EmbeddedResource(
                resource=types.TextResourceContents(uri="memo://no-type", text="for the model")
            ),
            types.ResourceLink(
                uri="https://example.org/paper.pdf",
                name="paper",
                title="The paper",
                mime_type="application/pdf",
            ),
        ]
    )
    collected = collect(result, tool="native", call_id="c1")
    assert collected.errors == []
    kg, png, link = (d.artifact for d in collected.drafts)
    assert kg.parts[0].data == graph
    assert kg.metadata == {"source": "kg://medik/tp53"}
    assert (png.parts[0].raw, png.parts[0].filename) == (b"\x89PNG", "tp53.png")
    assert (png.name, png.metadata) == ("TP53 plot", {"source": "plotter", "dpi": 72})
    assert (link.name, link.parts[0].url) == ("The paper", "https://example.org/paper.pdf")
    assert link.parts[0].media_type == "application/pdf"
    # The model sees its text, short pointers instead of payloads, and the untyped resource.
    model_text = json.dumps(collected.model_content)
    assert "NCBIGene:7157" not in model_text
    assert "is shown to the user as an artifact" in model_text
    assert "for the model" in model_text
    assert collected.model_content[-1]["type"] == "resource_link"


def test_native_malformed_graph_resource_is_an_error_note() -> None:
    result = types.CallToolResult(
        content=[
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="kg://x", mime_type=KNOWLEDGE_GRAPH, text='{"links": []}'
                )
            )
        ]
    )
    collected = collect(result, tool="native", call_id="c2")
    assert collected.drafts == []
    [error] = collected.errors
    assert "embedded resource 0" in error.message and "`nodes` list" in error.message


class KnowledgeGraphOutput(BaseModel):
    model_config = ConfigDict(json_schema_extra={"contentMediaType": KNOWLEDGE_GRAPH})

    nodes: list[dict[str, Any]]
    links: list[dict[str, Any]]


class Counts(BaseModel):
    """Structured, but with no media type: a machine-readable copy of the text, not an artifact."""

    genes: int


class Table(BaseModel):
    model_config = ConfigDict(json_schema_extra={"contentMediaType": "application/json"})

    rows: list[list[int]]


def native_server() -> MCPServer:
    server = MCPServer("native-artifacts")

    @server.tool()
    def graph() -> KnowledgeGraphOutput:
        return KnowledgeGraphOutput(nodes=[{"id": "MONDO:0005148", "name": "T2D"}], links=[])

    @server.tool()
    def counts() -> Counts:
        return Counts(genes=3)

    @server.tool()
    def table() -> Table:
        return Table(rows=[[1, 2]])

    @server.tool()
    def plain() -> str:
        return "no schema"

    return server


async def test_structured_content_through_a_real_client_session() -> None:
    async with Client(native_server()) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        names = ("graph", "table", "counts", "plain")
        results = {name: await client.call_tool(name, {}) for name in names}
    graph = collect(results["graph"], tool="graph", call_id="1", output_schema=schemas["graph"])
    [kg] = graph.drafts
    assert kg.artifact.name == "Knowledge Graph"
    assert kg.artifact.parts[0].media_type == KNOWLEDGE_GRAPH
    assert kg.artifact.parts[0].data["nodes"][0]["id"] == "MONDO:0005148"
    table = collect(results["table"], tool="table", call_id="2", output_schema=schemas["table"])
    [data] = table.drafts
    assert (data.artifact.name, data.artifact.parts[0].data) == ("Table", {"rows": [[1, 2]]})
    for name in ("counts", "plain"):
        assert schemas[name] is not None
        result = collect(results[name], tool=name, call_id="3", output_schema=schemas[name])
        assert result.drafts == []
        assert (
            result.model_content
            == results[name].model_dump(by_alias=True, exclude_none=True)["content"]
        )
