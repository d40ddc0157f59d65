"""Artifacts and graphs show themselves in Jupyter: with the notebook widgets when they are
installed, as an HTML summary when not."""

from __future__ import annotations

import importlib.util

import orjson
import pytest

from graphwright.client import display
from graphwright.client.objects import Bibliography, KnowledgeGraph

GRAPH = {
    "nodes": [{"id": "NCBIGene:7157", "name": "TP53", "category": "Gene"}],
    "links": [{"source": "NCBIGene:7157", "target": "NCBIGene:7157", "label": "regulates"}],
}
CITATIONS = [{"pmid": "1", "title": "A <b>title</b>", "year": "2020", "authors": ["A B"]}]


def kg() -> KnowledgeGraph:
    return KnowledgeGraph(
        "a1", "application/vnd.knowledge-graph", "KG", orjson.dumps(GRAPH).decode()
    )


def test_without_the_widgets_a_graph_shows_a_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(display, "widgets", lambda: None)
    bundle = kg()._repr_mimebundle_()
    assert bundle["text/plain"] == "KG: 1 nodes, 1 edges"
    assert "TP53" in bundle["text/html"]


def test_without_the_widgets_a_bibliography_shows_an_escaped_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(display, "widgets", lambda: None)
    bib = Bibliography(
        "b1", "application/vnd.bibliography", "Refs", orjson.dumps(CITATIONS).decode()
    )
    bundle = bib._repr_mimebundle_()
    assert "&lt;b&gt;title&lt;/b&gt;" in bundle["text/html"]
    assert bundle["text/plain"] == "Refs: 1 citations"


@pytest.mark.skipif(
    importlib.util.find_spec("graphwright.notebook") is None,
    reason="graphwright.notebook.widgets is not merged yet",
)
def test_with_the_widgets_a_graph_is_a_graph_view() -> None:
    bundle = kg()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
