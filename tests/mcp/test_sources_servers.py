"""The literature, grants and kg MCP servers through a real MCP ClientSession.

Each server runs as `graphwright mcp NAME` over stdio and at /mcp/NAME in the app (`create_app`)
served by uvicorn (streamable HTTP with bearer auth). Both use the bundled sample data.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, EmbeddedResource
from typer.testing import CliRunner

from graphwright import mcpkit
from graphwright.app import create_app
from graphwright.cli import app as cli
from graphwright.settings import Settings
from tests.mcp.support import GRAPHWRIGHT, http_session, serving, text_of
from tests.sources.support import GrantSite, serve_locally

SERVERS = ("literature", "grants", "kg")
TOOLS = {
    "literature": {"searchPubMed", "getArticles"},
    "grants": {"searchGrants", "fetchGrant"},
    "kg": {"queryNeighbors", "findPaths", "resolveName"},
}

Checker = Callable[[ClientSession, int], Awaitable[None]]


@pytest.fixture(scope="module")
def site_port() -> Iterator[int]:
    with serve_locally(GrantSite) as port:
        yield port


def server_env(home: Path) -> dict[str, str]:
    return {
        "GRAPHWRIGHT_HOME": str(home),
        "GRAPHWRIGHT_OFFLINE": "1",
        "GRAPHWRIGHT_FETCH_ALLOW_HOSTS": '["127.0.0.1"]',
    }


def artifacts_of(result: CallToolResult) -> list[EmbeddedResource]:
    return [block for block in result.content if isinstance(block, EmbeddedResource)]


async def check_tool_list(session: ClientSession, name: str) -> None:
    tools = (await session.list_tools()).tools
    assert {tool.name for tool in tools} == TOOLS[name]
    for tool in tools:
        assert tool.description and len(tool.description) > 40
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.annotations.idempotent_hint is True
        assert "databaseContext" not in tool.input_schema["properties"]


async def check_literature(session: ClientSession, site_port: int) -> None:
    await check_tool_list(session, "literature")
    found = await session.call_tool("searchPubMed", {"query": "imatinib leukemia", "maxResults": 3})
    assert not found.is_error, text_of(found)
    assert "PMID: 11287972" in text_of(found)
    [bibliography] = artifacts_of(found)
    assert bibliography.resource.mime_type == mcpkit.BIBLIOGRAPHY
    assert bibliography.resource.uri.startswith("graphwright://artifact/")
    assert bibliography.resource.meta["title"] == "Article References"
    citations = json.loads(bibliography.resource.text)
    assert "11287972" in [c["pmid"] for c in citations]
    assert set(citations[0]) >= {"pmid", "title", "authors", "journal", "year"}
    structured = found.structured_content["citations"]
    assert [c["pmid"] for c in structured] == [c["pmid"] for c in citations]

    articles = await session.call_tool("getArticles", {"pmids": ["11287972", "synthetic-0001"]})
    assert not articles.is_error, text_of(articles)
    cited = json.loads(artifacts_of(articles)[0].resource.text)
    assert [c["pmid"] for c in cited] == ["11287972", "synthetic-0001"]
    assert cited[1]["synthetic"] is True and cited[1]["abstract"]

    bad = await session.call_tool("getArticles", {"pmids": ["not-a-pmid"]})
    assert bad.is_error
    assert text_of(bad) == "'not-a-pmid' is not a PubMed id (expected digits, e.g. 11287972)"
    assert not artifacts_of(bad)

    too_many = await session.call_tool("searchPubMed", {"query": "x", "maxResults": 1000})
    assert too_many.is_error
    assert "maxResults" in text_of(too_many)


async def check_grants(session: ClientSession, site_port: int) -> None:
    await check_tool_list(session, "grants")
    found = await session.call_tool("searchGrants", {"query": "Parkinson", "limit": 5})
    assert not found.is_error, text_of(found)
    assert found.structured_content["total"] == 1
    [grant] = found.structured_content["grants"]
    assert grant["synthetic"] is True
    assert "synthetic sample record" in text_of(found)

    page_url = f"http://127.0.0.1:{site_port}/project/1"
    fetched = await session.call_tool("fetchGrant", {"url": page_url})
    assert not fetched.is_error, text_of(fetched)
    [document] = artifacts_of(fetched)
    assert document.resource.mime_type == mcpkit.MARKDOWN
    assert document.resource.meta["title"] == "Fixture Grant: Kinase Inhibitor Networks"
    metadata = document.resource.meta["metadata"]
    assert metadata["source"] == page_url
    assert metadata["contentType"] == "text/html"
    assert metadata["convertedAt"]
    assert "| Principal investigator | Ada Example |" in document.resource.text
    assert "alert" not in document.resource.text
    assert "| Award | $512,345 |" in text_of(fetched)

    for url, reason in [
        (f"http://localhost:{site_port}/", "localhost (127.0.0.1) is a blocked address (loopback)"),
        ("http://169.254.169.254/latest/meta-data/", "blocked address (cloud metadata)"),
        ("http://10.0.0.1/", "10.0.0.1 is a blocked address (private)"),
        ("file:///etc/passwd", "Only http and https URLs can be fetched"),
    ]:
        refused = await session.call_tool("fetchGrant", {"url": url})
        assert refused.is_error
        assert reason in text_of(refused)
        assert not artifacts_of(refused)


async def check_kg(session: ClientSession, site_port: int) -> None:
    await check_tool_list(session, "kg")
    near = await session.call_tool(
        "queryNeighbors", {"curieOrName": "imatinib", "predicate": "biolink:treats"}
    )
    assert not near.is_error, text_of(near)
    assert "chronic myelogenous leukemia (MONDO:0011996) [PMID:11287972]" in text_of(near)
    [artifact] = artifacts_of(near)
    assert artifact.resource.mime_type == mcpkit.KNOWLEDGE_GRAPH
    graph = json.loads(artifact.resource.text)
    assert {link["target"] for link in graph["links"]} == {"MONDO:0011996", "MONDO:0011719"}
    cml = next(link for link in graph["links"] if link["target"] == "MONDO:0011996")
    assert cml["evidence"] == ["PMID:11287972"]
    assert near.structured_content["entity"]["id"] == "CHEBI:45783"

    paths = await session.call_tool(
        "findPaths", {"source": "imatinib", "target": "NCBIGene:3815", "maxHops": 2}
    )
    assert not paths.is_error, text_of(paths)
    assert paths.structured_content["paths"][0] == ["CHEBI:45783", "NCBIGene:3815"]
    assert "imatinib -[physically interacts with]-> KIT" in text_of(paths)
    assert artifacts_of(paths)[0].resource.mime_type == mcpkit.KNOWLEDGE_GRAPH

    names = await session.call_tool("resolveName", {"name": "Gleevec"})
    assert names.structured_content["matches"][0]["id"] == "CHEBI:45783"

    unknown = await session.call_tool("queryNeighbors", {"curieOrName": "unobtainium"})
    assert unknown.is_error
    assert text_of(unknown).startswith("No entity named 'unobtainium' is known.")
    hops = await session.call_tool("findPaths", {"source": "TP53", "target": "MDM2", "maxHops": 9})
    assert hops.is_error
    assert "maxHops" in text_of(hops)


CHECKS: dict[str, Checker] = {
    "literature": check_literature,
    "grants": check_grants,
    "kg": check_kg,
}


@pytest.mark.parametrize("name", SERVERS)
async def test_server_over_stdio(name: str, tmp_path: Path, site_port: int) -> None:
    params = StdioServerParameters(
        command=str(GRAPHWRIGHT), args=["mcp", name], env=server_env(tmp_path)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await CHECKS[name](session, site_port)


async def test_servers_over_streamable_http_in_the_app(tmp_path: Path, site_port: int) -> None:
    settings = Settings(home=tmp_path, offline=True, fetch_allow_hosts=["127.0.0.1"])
    app = create_app(settings)
    token = app.state.auth_service.mint(label="sources")
    async with serving(app) as base:
        for name in SERVERS:
            async with http_session(f"{base}/mcp/{name}", token) as session:
                await CHECKS[name](session, site_port)

        async with httpx.AsyncClient() as plain:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            missing = await plain.post(f"{base}/mcp/kg", json=body)
            wrong = await plain.post(
                f"{base}/mcp/kg", json=body, headers={"Authorization": "Bearer nope"}
            )
    for response in (missing, wrong):
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert "bearer token" in response.json()["error"].lower()


def test_cli_lists_servers_and_names_unknown_ones() -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["mcp", "list"])
    assert listed.exit_code == 0
    assert set(SERVERS) <= set(listed.output.split())
    unknown = runner.invoke(cli, ["mcp", "nope"])
    assert unknown.exit_code == 2
    assert "No MCP server named 'nope'. Known servers:" in unknown.output
