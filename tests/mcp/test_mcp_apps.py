"""MCP Apps over real MCP client sessions: the `ui://` views are listed and read with their MIME
type and CSP, the tools link them, and linked results carry the view's data only for clients
that negotiated the extension (the browser side is tests/web/test_mcp_apps_views.py)."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from mcp.client.extension import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from graphwright import mcp_apps
from graphwright.graphmode.tools import graph_server
from graphwright.mcp_apps import payloads
from graphwright.settings import Settings
from graphwright.sources.tools import kg_server, literature_server
from tests.mcp.support import text_of

APPS = [advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})]
KG, BIB, GRAPH_MODE = (
    mcp_apps.KNOWLEDGE_GRAPH_VIEW.uri,
    mcp_apps.BIBLIOGRAPHY_VIEW.uri,
    mcp_apps.GRAPH_MODE_VIEW.uri,
)
LINKS = {
    "kg": {"queryNeighbors": KG, "findPaths": KG, "resolveName": None},
    "literature": {"searchPubMed": BIB, "getArticles": BIB},
    "graph": {
        "getGraphState": KG,
        "addNode": GRAPH_MODE,
        "addEdge": GRAPH_MODE,
        "removeNode": GRAPH_MODE,
        "addMultipleNodes": GRAPH_MODE,
        "mergeNodes": GRAPH_MODE,
        "undo": GRAPH_MODE,
        "redo": GRAPH_MODE,
        "revertToVersion": GRAPH_MODE,
        "applyLayout": GRAPH_MODE,
        "getHistory": None,
        "searchNodes": None,
        "findCentrality": None,
    },
}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        home=tmp_path, database_url=f"sqlite:///{tmp_path / 'g.db'}", offline=True,
        conversation="apps-test",
    )  # fmt: skip


def servers(settings: Settings) -> dict[str, Any]:
    return {
        "kg": kg_server(settings=settings),
        "literature": literature_server(settings=settings),
        "graph": graph_server(settings=settings),
    }


def view_data(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    return result.meta[mcp_apps.VIEW_META]


def script_hashes(document: str) -> set[str]:
    scripts = re.findall(r'<script type="module">(.*?)</script>', document, re.DOTALL)
    return {
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in scripts
    }


async def test_views_are_listed_and_read_as_self_contained_mcp_apps(settings: Settings) -> None:
    for name, server in servers(settings).items():
        async with Client(server, extensions=APPS) as client:
            assert EXTENSION_ID in (client.server_capabilities.extensions or {})
            listed = {r.uri: r for r in (await client.list_resources()).resources}
            expected = {uri for uri in LINKS[name].values() if uri}
            assert expected <= set(listed)
            for uri in expected:
                assert listed[uri].mime_type == APP_MIME_TYPE
                [content] = (await client.read_resource(uri)).contents
                assert content.mime_type == APP_MIME_TYPE
                assert content.meta["ui"] == {
                    "csp": {
                        "connectDomains": [],
                        "resourceDomains": [],
                        "frameDomains": [],
                        "baseUriDomains": [],
                    },
                    "prefersBorder": True,
                }
                document = content.text
                assert document.startswith("<!DOCTYPE html>")
                # Nothing is loaded: every script is inline, and the markup names no file.
                markup = re.sub(r"<script[^>]*>.*?</script>", "", document, flags=re.DOTALL)
                assert not re.search(r"\b(src|href)=", markup)
                assert document.count("<script") == document.count('<script type="module">')
                policy = re.search(
                    r'http-equiv="Content-Security-Policy" content="([^"]+)"', document
                )
                assert policy is not None
                text = html.unescape(policy.group(1))
                directives = dict(d.strip().split(" ", 1) for d in text.split(";"))
                assert directives["default-src"] == "'none'"
                assert directives["connect-src"] == "'none'"
                assert set(directives["script-src"].split()) == script_hashes(document)
                charts = uri != BIB
                assert ("globalThis.echarts" in document) is charts
                assert "ui/initialize" in document and "ui/notifications/size-changed" in document


async def test_tools_link_their_views(settings: Settings) -> None:
    for name, server in servers(settings).items():
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for tool_name, uri in LINKS[name].items():
                meta = tools[tool_name].meta or {}
                assert meta.get("ui", {}).get("resourceUri") == uri, tool_name


async def test_knowledge_graph_result_carries_its_drawing_for_apps_clients_only(
    settings: Settings,
) -> None:
    arguments = {"curieOrName": "imatinib"}
    async with Client(kg_server(settings=settings), extensions=APPS) as client:
        with_apps = await client.call_tool("queryNeighbors", arguments)
        missing = await client.call_tool("queryNeighbors", {"curieOrName": "no-such-thing-xyz"})
    async with Client(kg_server(settings=settings)) as client:
        plain = await client.call_tool("queryNeighbors", arguments)

    data = view_data(with_apps)
    assert data["view"] == "graph" and data["title"] == "Knowledge graph: imatinib"
    assert data["nodeCount"] == len(data["nodes"]) == 6
    series = data["option"]["series"][0]
    assert series["type"] == "graph" and series["roam"] is True
    assert {item["id"] for item in series["data"]} == set(data["nodes"])
    assert all(isinstance(item["x"], float) for item in series["data"])
    assert data["option"]["legend"][0]["data"] == [c["name"] for c in series["categories"]]
    treats = next(e for e in data["edges"] if e["target"] == "MONDO:0011996")
    assert treats["evidence"] == [
        {"text": "PMID:11287972", "url": "https://pubmed.ncbi.nlm.nih.gov/11287972/"}
    ]
    assert data["linkIds"] == [e["id"] for e in data["edges"]]
    # Hosts without MCP Apps get the same content and no view data.
    assert mcp_apps.VIEW_META not in (plain.meta or {})
    assert plain.content[0].model_dump() == with_apps.content[0].model_dump()
    assert mcp_apps.VIEW_META not in (missing.meta or {})


async def test_bibliography_result_carries_rows_and_exports(settings: Settings) -> None:
    async with Client(literature_server(settings=settings), extensions=APPS) as client:
        result = await client.call_tool("getArticles", {"pmids": ["11287972", "synthetic-0001"]})
    data = view_data(result)
    assert data["view"] == "bibliography"
    first, second = data["citations"]
    assert second["synthetic"] is True and not first["synthetic"]
    assert first["pmid"] == "11287972"
    assert first["pubmed"] == "https://pubmed.ncbi.nlm.nih.gov/11287972/"
    assert first["authors"].startswith("Druker BJ")
    assert data["exports"]["bibtex"]["text"].startswith("@article{")
    assert "11287972" in data["exports"]["bibtex"]["text"]
    assert "TY  - JOUR" in data["exports"]["ris"]["text"]


async def test_graph_mode_results_draw_the_whole_graph(
    settings: Settings,
) -> None:
    async with Client(graph_server(settings=settings), extensions=APPS) as client:

        async def call(tool: str, **arguments: Any) -> dict[str, Any]:
            return view_data(await client.call_tool(tool, arguments))

        await call("addNode", label="TP53", type="gene", canonicalId="NCBIGene:7157")
        await call("addNode", label="MDM2", type="gene", canonicalId="NCBIGene:4193")
        before = await call("addEdge", source="NCBIGene:4193", target="NCBIGene:7157",
                            label="inhibits", data={"evidence": ["PMID:9153395"]})  # fmt: skip
        assert (before["nodeCount"], before["edgeCount"], before["version"]) == (2, 1, 3)
        assert before["conversationId"] == "apps-test"
        assert before["edges"][0]["evidence"][0]["text"] == "PMID:9153395"
        after = await call("addNode", label="Nutlin-3", type="drug", canonicalId="CHEBI:46742")
        state = await call("getGraphState")
        undone = await call("undo")
        failed = await client.call_tool("removeNode", {"nodeId": "NCBIGene:0"})
        history = await client.call_tool("getHistory", {})

    def positions(data: dict[str, Any]) -> dict[str, tuple[float, float]]:
        return {n["id"]: (n["x"], n["y"]) for n in data["option"]["series"][0]["data"]}

    assert after["version"] == 4 and after["nodeCount"] == 3
    assert state["version"] == 4 and state["nodeCount"] == 3
    assert positions(state) == positions(after)  # the same graph is drawn the same way
    assert len(set(positions(after).values())) == 3
    assert undone["version"] == 5 and undone["nodeCount"] == 2
    assert failed.is_error and mcp_apps.VIEW_META not in (failed.meta or {})
    assert mcp_apps.VIEW_META not in (history.meta or {})


async def test_a_graph_too_large_to_draw_gets_its_counts_only(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(payloads, "MAX_DRAWN_NODES", 1)
    async with Client(graph_server(settings=settings), extensions=APPS) as client:
        await client.call_tool("addNode", {"label": "A", "type": "gene"})
        data = view_data(await client.call_tool("addNode", {"label": "B", "type": "gene"}))
    assert data["tooLarge"] is True and data["nodeCount"] == 2
    assert "option" not in data and "web UI" in data["note"]


async def test_a_larger_graph_keeps_where_its_nodes_were_drawn(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(payloads, "FRESH_LAYOUT_UP_TO", 2)
    async with Client(graph_server(settings=settings), extensions=APPS) as client:

        async def positions(tool: str, **arguments: Any) -> dict[str, tuple[float, float]]:
            data = view_data(await client.call_tool(tool, arguments))
            return {n["id"]: (n["x"], n["y"]) for n in data["option"]["series"][0]["data"]}

        for name in ("A", "B"):
            await positions("addNode", label=name, type="gene", canonicalId=f"X:{name}")
        three = await positions("addNode", label="C", type="gene", canonicalId="X:C")
        joined = await positions("addEdge", source="X:A", target="X:C")
    assert joined == three  # an edit of a graph above the fresh-layout size moves nothing
