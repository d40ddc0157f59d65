"""The notebook widgets' front ends (their `_esm`) in real Chromium, inside a test page that
implements anywidget's model interface: GraphView draws a real graph and redraws on a new
payload; BibliographyView sorts its table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.remote.webdriver import WebDriver
from starlette.applications import Starlette
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from graphwright.notebook import BibliographyView, GraphView
from graphwright.notebook.widgets import view_payload
from tests.conftest import serve_in_thread
from tests.web.browser import wait

HOST_PAGE = Path(__file__).with_name("widget_host.html")
GRAPH = {
    "nodes": [
        {"id": "NCBIGene:7157", "name": "TP53", "category": "Gene"},
        {"id": "MONDO:0005148", "name": "type 2 diabetes", "category": "Disease"},
        {"id": "CHEBI:6801", "name": "metformin", "category": "Drug"},
    ],
    "links": [
        {
            "source": "NCBIGene:7157",
            "target": "MONDO:0005148",
            "label": "associated with",
            "evidence": ["PMID:111"],
        },
        {"source": "CHEBI:6801", "target": "MONDO:0005148", "label": "treats", "evidence": []},
    ],
}


CITATIONS = [
    {"pmid": "222", "title": "Beta study", "journal": "Nature", "year": 2019},
    {"pmid": "111", "title": "alpha trial", "journal": "Cell", "year": 2021, "doi": "10.1/x"},
    {"pmid": "333", "title": "Gamma review", "journal": "Science", "year": 2001},
]


@pytest.fixture(scope="module")
def widget_host() -> Iterator[str]:
    views = {"graph": GraphView(GRAPH), "bibliography": BibliographyView(CITATIONS)}

    def esm(request: Any) -> Response:
        return Response(views[request.path_params["name"]]._esm, media_type="text/javascript")

    def state(request: Any) -> JSONResponse:
        return JSONResponse({"payload": views[request.path_params["name"]].payload})

    app = Starlette(
        routes=[
            Route("/", lambda _r: FileResponse(HOST_PAGE)),
            Route("/esm/{name}", esm),
            Route("/state/{name}", state),
        ]
    )
    with serve_in_thread(app) as url:
        yield url


def shadow(browser: WebDriver, script: str) -> Any:
    """Run `script` with `root`, the widget's shadow root."""
    return browser.execute_script(
        f"const root = document.getElementById('widget').shadowRoot; {script}"
    )


def test_the_widget_draws_the_graph_and_redraws_on_a_new_payload(
    browser: WebDriver, widget_host: str
) -> None:
    browser.get(f"{widget_host}/?widget=graph")
    wait(browser, lambda d: d.execute_script("return window.rendered === true"))
    chart = "root.querySelector('[data-testid=graph-chart]')"
    wait(browser, lambda d: shadow(d, f"return {chart}.dataset.drawnVersion === ''"))
    assert shadow(browser, f"return {chart}.querySelectorAll('canvas').length") >= 1
    text = "return root.querySelector('[data-testid={}]').textContent"
    assert shadow(browser, text.format("graph-summary")) == "3 nodes · 2 links"
    assert shadow(browser, text.format("view-title")) == "Knowledge graph"
    # Undo and redo belong to MCP hosts; a notebook edits through Python.
    assert shadow(browser, "return root.querySelector('[data-testid=graph-actions]').hidden")
    # The view's search and node details work inside the notebook too.
    shadow(
        browser,
        "const box = root.querySelector('[data-testid=graph-search]');"
        "box.value = 'metf'; box.dispatchEvent(new Event('input'));",
    )
    wait(
        browser,
        lambda d: (
            shadow(d, "return root.querySelectorAll('[data-testid=graph-match]').length") == 1
        ),
    )
    shadow(browser, "root.querySelector('[data-testid=graph-match]').click()")
    details = wait(browser, lambda d: shadow(d, text.format("node-details")))
    assert "CHEBI:6801 · Drug" in details
    # The view's stylesheet stays inside the widget: the page's body is not restyled.
    assert (
        browser.execute_script("return getComputedStyle(document.body).padding") != "8px 12px 12px"
    )

    bigger = {
        "nodes": [*GRAPH["nodes"], {"id": "HGNC:6973", "name": "MDM2", "category": "Gene"}],
        "links": GRAPH["links"],
    }
    browser.execute_script(
        "window.testModel.set('payload', arguments[0]);", view_payload(bigger, "Knowledge graph")
    )
    wait(browser, lambda d: shadow(d, text.format("graph-summary")) == "4 nodes · 2 links")


def test_the_bibliography_widget_sorts_its_table(browser: WebDriver, widget_host: str) -> None:
    browser.get(f"{widget_host}/?widget=bibliography")
    wait(browser, lambda d: d.execute_script("return window.rendered === true"))
    titles = "return [...root.querySelectorAll('[data-testid=citation] td:first-child')]"
    titles += ".map((cell) => cell.textContent)"
    assert shadow(browser, titles) == ["Beta study", "alpha trial", "Gamma review"]
    summary = "return root.querySelector('[data-testid=bibliography-summary]').textContent"
    assert shadow(browser, summary) == "3 references"
    shadow(browser, "root.querySelector('[data-sort=title]').click()")
    assert shadow(browser, titles) == ["alpha trial", "Beta study", "Gamma review"]
    shadow(browser, "root.querySelector('[data-sort=year]').click()")
    assert shadow(browser, titles) == ["Gamma review", "Beta study", "alpha trial"]
    shadow(browser, "root.querySelector('[data-sort=year]').click()")
    assert shadow(browser, titles) == ["alpha trial", "Beta study", "Gamma review"]
    shadow(browser, "root.querySelector('[data-testid=export-bibtex]').click()")
    exported = shadow(browser, "return root.querySelector('[data-testid=export-text]').value")
    assert "@article" in exported and "Beta study" in exported
