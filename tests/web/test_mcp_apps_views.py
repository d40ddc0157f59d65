"""The MCP Apps views in real Chromium, inside a test host page (mcp_apps_host.html) that plays
the host's side of the bridge and proxies the view's `tools/call` requests to real MCP client
sessions with graphwright's servers (in-memory transport, advertising MCP Apps)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from mcp.client.client import Client
from mcp.client.extension import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.shared.exceptions import MCPError
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from graphwright.core.palette import type_colour
from graphwright.graphmode.tools import graph_server
from graphwright.settings import Settings
from graphwright.sources.tools import kg_server, literature_server
from tests.conftest import free_port, serve_in_thread
from tests.web.browser import click, find, find_all, wait
from tests.web.conftest import SCREENSHOTS

HOST_PAGE = Path(__file__).with_name("mcp_apps_host.html")
APPS = [advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})]


def host_app(settings: Settings) -> Starlette:
    """The test host's server: its page, and POST /mcp/SERVER {method, params} answered by a
    real MCP client session with that graphwright server."""
    clients: dict[str, Client] = {}

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for name, server in (
                ("kg", kg_server(settings=settings)),
                ("literature", literature_server(settings=settings)),
                ("graph", graph_server(settings=settings)),
            ):
                clients[name] = await stack.enter_async_context(Client(server, extensions=APPS))
            yield

    async def proxy(request: Request) -> JSONResponse:
        client = clients[request.path_params["server"]]
        body = await request.json()
        method, params = body["method"], body.get("params") or {}
        try:
            if method == "tools/list":
                result: Any = await client.list_tools()
            elif method == "tools/call":
                result = await client.call_tool(params["name"], params.get("arguments") or {})
            elif method == "resources/read":
                result = await client.read_resource(params["uri"])
            else:
                return JSONResponse({"error": {"message": f"Unsupported: {method}"}})
        except MCPError as exc:
            return JSONResponse({"error": {"message": str(exc)}})
        return JSONResponse(
            {"result": result.model_dump(mode="json", by_alias=True, exclude_none=True)}
        )

    return Starlette(
        routes=[
            Route("/", lambda _request: FileResponse(HOST_PAGE)),
            Route("/mcp/{server}", proxy, methods=["POST"]),
        ],
        lifespan=lifespan,
    )


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("apps-host")
    settings = Settings(
        home=home, database_url=f"sqlite:///{home / 'g.db'}", offline=True,
        conversation="apps-browser",
    )  # fmt: skip
    with serve_in_thread(host_app(settings), free_port()) as url:
        yield url


def open_view(browser: WebDriver, host: str, server: str, tool: str, **arguments: Any) -> None:
    """Load the host page for one tool call and step into the view's iframe."""
    browser.switch_to.default_content()
    query = urlencode({"server": server, "tool": tool, "args": json.dumps(arguments)})
    browser.get(f"{host}/?{query}")
    frame = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="view"]'))
    browser.switch_to.frame(frame[0])


def host_log(browser: WebDriver) -> list[dict[str, Any]]:
    browser.switch_to.default_content()
    try:
        return browser.execute_script("return window.hostLog;")
    finally:
        browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, '[data-testid="view"]'))


def drawn(browser: WebDriver, version: str) -> None:
    wait(browser, lambda d: find(d, "graph-chart").get_attribute("data-drawn-version") == version)


def test_the_graph_view_renders_a_kg_result(browser: WebDriver, host: str) -> None:
    open_view(browser, host, "kg", "queryNeighbors", curieOrName="imatinib")
    drawn(browser, "")
    assert find(browser, "view-title").text == "Knowledge graph: imatinib"
    assert find(browser, "graph-summary").text == "6 nodes · 5 links"
    assert find_all(browser, "graph-chart", "canvas")
    assert not find_all(browser, "graph-actions")[0].is_displayed()  # no undo/redo here

    find(browser, "graph-search").send_keys("imatin")
    [match] = wait(browser, lambda d: find_all(d, "graph-match"))
    click(browser, match)
    details = find(browser, "node-details")
    assert "CHEBI:45783 · Drug" in details.text
    assert "5 links" in details.text
    [evidence] = find_all(browser, "evidence-link")
    assert evidence.text == "PMID:11287972"
    click(browser, evidence)

    def opened(d: WebDriver) -> list[dict[str, Any]]:
        return [m for m in host_log(d) if m.get("method") == "ui/open-link"]

    [link] = wait(browser, opened)
    assert link["params"] == {"url": "https://pubmed.ncbi.nlm.nih.gov/11287972/"}
    log = host_log(browser)
    assert log[0]["method"] == "ui/initialize"
    assert log[0]["params"]["protocolVersion"] == "2026-01-26"
    assert log[1]["method"] == "ui/notifications/initialized"
    sizes = [m["params"] for m in log if m.get("method") == "ui/notifications/size-changed"]
    assert sizes and sizes[-1]["height"] > 400


SEED = [
    ("addNode", {"label": "TP53", "type": "gene", "canonicalId": "NCBIGene:7157"}),
    ("addNode", {"label": "MDM2", "type": "gene", "canonicalId": "NCBIGene:4193"}),
    ("addNode", {"label": "CDKN1A", "type": "gene", "canonicalId": "NCBIGene:1026"}),
    ("addNode", {"label": "Nutlin-3", "type": "drug", "canonicalId": "CHEBI:46742"}),
    ("addEdge", {"source": "CHEBI:46742", "target": "NCBIGene:4193", "label": "inhibits"}),
    ("addEdge", {"source": "NCBIGene:7157", "target": "NCBIGene:1026", "label": "activates"}),
]


def test_graph_mode_undo_and_redo_round_trip_through_the_host(
    browser: WebDriver, host: str
) -> None:
    for tool, arguments in SEED:
        call = {"method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        answer = httpx.post(f"{host}/mcp/graph", json=call, timeout=60).json()
        assert not answer["result"].get("isError"), answer
    open_view(browser, host, "graph", "addEdge",
              source="NCBIGene:4193", target="NCBIGene:7157", label="inhibits")  # fmt: skip
    drawn(browser, "7")
    assert find(browser, "graph-summary").text == "4 nodes · 3 links · version 7"
    # Each type in the one colour the chat page and the editor draw it in (issue 31, point 11).
    colours = browser.execute_script(
        "const series = echarts.getInstanceByDom(arguments[0]).getOption().series[0];"
        "return Object.fromEntries(series.categories.map(c => [c.name, c.itemStyle.color]));",
        find(browser, "graph-chart"),
    )
    assert colours == {"Gene": type_colour("Gene"), "Drug": type_colour("Drug")}
    browser.switch_to.default_content()
    find(browser, "view").screenshot(str(SCREENSHOTS / "mcp-apps-graph-mode.png"))
    browser.switch_to.frame(find(browser, "view"))

    click(browser, find(browser, "undo"))
    drawn(browser, "8")
    assert find(browser, "graph-summary").text == "4 nodes · 2 links · version 8"
    assert find(browser, "view-status").text.startswith("Undid version 7")

    click(browser, find(browser, "redo"))
    drawn(browser, "9")
    assert find(browser, "graph-summary").text == "4 nodes · 3 links · version 9"
    calls = [m["params"] for m in host_log(browser) if m.get("method") == "tools/call"]
    assert calls == [{"name": "undo", "arguments": {}}, {"name": "redo", "arguments": {}}]

    click(browser, find(browser, "redo"))  # nothing left to redo: the tool's error is shown
    wait(browser, lambda d: "error" in (find(d, "view-status").get_attribute("class") or ""))
    assert find(browser, "graph-summary").text == "4 nodes · 3 links · version 9"


def test_the_bibliography_view_sorts_and_exports(browser: WebDriver, host: str) -> None:
    open_view(browser, host, "literature", "getArticles", pmids=["synthetic-0001", "11287972"])
    rows = wait(browser, lambda d: find_all(d, "citation"))
    assert len(rows) == 2
    title = browser.find_element(By.CSS_SELECTOR, '[data-sort="title"]')
    titles = []
    for _ in range(2):
        click(browser, title)
        titles.append(
            [row.find_element(By.TAG_NAME, "td").text for row in find_all(browser, "citation")]
        )
    assert titles[0] == sorted(titles[0], key=str.casefold) and titles[1] == titles[0][::-1]
    click(browser, find(browser, "export-bibtex"))
    exported = find(browser, "export-text").get_attribute("value")
    assert exported.startswith("@article{") and "11287972" in exported
