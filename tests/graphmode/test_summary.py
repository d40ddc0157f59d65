"""The token-budgeted graph summary: within budget, and its cursor pages through everything."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.errors import InvalidInput
from graphwright.graphmode import summary


def graph(
    node_count: int, edge_count: int, *, label_length: int = 8, seed: int = 0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    nodes = [
        {
            "id": f"NCBIGene:{i}",
            "label": f"G{i}".ljust(label_length, "x"),
            "type": rng.choice(["gene", "disease", "drug"]),
            "data": {"description": "not shown in summaries " * 20},
        }
        for i in range(node_count)
    ]
    edges = [
        {
            "id": f"edge_{k}",
            "source": f"NCBIGene:{rng.randrange(node_count)}",
            "target": f"NCBIGene:{rng.randrange(node_count)}",
            "label": rng.choice(["interacts_with", "treats", "associated_with"]),
        }
        for k in range(edge_count)
    ]
    return nodes, edges


def page_through(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], budget: int
) -> tuple[list[str], list[str], list[summary.Summary]]:
    seen_nodes: list[str] = []
    seen_edges: list[str] = []
    pages: list[summary.Summary] = []
    cursor = None
    while True:
        page = summary.summarize(nodes, edges, version=3, token_budget=budget, cursor=cursor)
        pages.append(page)
        seen_nodes += [n["id"] for n in page.data["nodes"]]
        seen_edges += [e["id"] for e in page.data["edges"]]
        cursor = page.data["nextCursor"]
        if cursor is None:
            return seen_nodes, seen_edges, pages
        assert len(pages) < 10_000


def test_small_graph_fits_on_one_page() -> None:
    nodes = [
        {"id": "NCBIGene:7157", "label": "TP53", "type": "gene"},
        {"id": "MONDO:0005148", "label": "Type 2 Diabetes", "type": "disease"},
    ]
    edges = [
        {
            "id": "e1",
            "source": "NCBIGene:7157",
            "target": "MONDO:0005148",
            "label": "associated_with",
        }
    ]
    told = summary.summarize(nodes, edges, version=3)
    assert told.data["nextCursor"] is None
    assert told.data["nodeTypes"] == {"gene": 1, "disease": 1}
    assert told.data["edgeLabels"] == {"associated_with": 1}
    assert told.text.startswith("Current graph has 2 nodes and 1 edge (version 3).")
    assert "- TP53 [NCBIGene:7157] (gene)" in told.text
    assert "- TP53 -> Type 2 Diabetes (associated_with) [e1]" in told.text
    assert "More:" not in told.text


def test_empty_graph() -> None:
    told = summary.summarize([], [], version=0)
    assert told.text == "Current graph has 0 nodes and 0 edges (version 0)."
    assert told.data["nodes"] == [] and told.data["nextCursor"] is None


def test_top_nodes_are_the_best_connected() -> None:
    nodes, _ = graph(20, 0)
    edges = [
        {"id": f"e{i}", "source": "NCBIGene:5", "target": f"NCBIGene:{i}", "label": "x"}
        for i in range(6, 12)
    ] + [{"id": "f", "source": "NCBIGene:7", "target": "NCBIGene:8", "label": "x"}]
    top = summary.summarize(nodes, edges, top=3).data["topNodes"]
    assert [(n["id"], n["degree"]) for n in top] == [
        ("NCBIGene:5", 6),
        ("NCBIGene:7", 2),
        ("NCBIGene:8", 2),
    ]


@pytest.mark.parametrize("budget", [1_000, 4_000, 20_000])
def test_a_large_graph_stays_within_budget_and_pages_cover_everything(budget: int) -> None:
    nodes, edges = graph(3_000, 6_000)
    seen_nodes, seen_edges, pages = page_through(nodes, edges, budget)
    assert sorted(seen_nodes) == sorted(n["id"] for n in nodes)
    assert sorted(seen_edges) == sorted(e["id"] for e in edges)
    assert all(page.tokens <= budget for page in pages)
    assert all(page.data["nodes"] or page.data["edges"] for page in pages)
    first = pages[0]
    assert first.data["nodeCount"] == 3_000 and first.data["edgeCount"] == 6_000
    assert "Most connected:" in first.text
    assert f'cursor "{first.data["nextCursor"]}"' in first.text
    assert "nodeTypes" not in pages[1].data  # later pages carry only the counts


def test_the_default_budget_is_4000_tokens() -> None:
    told = summary.summarize(*graph(2_000, 4_000))
    assert 3_000 < told.tokens <= 4_000


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 300),
    st.integers(0, 600),
    st.integers(1, 400),
    st.integers(summary.MIN_TOKEN_BUDGET, 6_000),
)
def test_every_page_fits_its_budget(
    node_count: int, edge_count: int, label_length: int, budget: int
) -> None:
    nodes, edges = graph(max(node_count, 1), edge_count, label_length=label_length)
    seen_nodes, seen_edges, pages = page_through(nodes, edges, budget)
    assert all(page.tokens <= budget for page in pages)
    assert len(seen_nodes) == len(set(seen_nodes)) == len(nodes)
    assert len(seen_edges) == len(set(seen_edges)) == len(edges)


def test_a_cursor_from_an_older_version_says_so() -> None:
    nodes, edges = graph(500, 1_000)
    first = summary.summarize(nodes, edges, version=3, token_budget=1_000)
    later = summary.summarize(
        nodes, edges, version=5, token_budget=1_000, cursor=first.data["nextCursor"]
    )
    assert "changed since this cursor was issued (version 3 -> 5)" in later.text
    assert later.data["nodeRange"][0] == first.data["nodeRange"][1]


@pytest.mark.parametrize("cursor", ["not a cursor", "WzEsMl0", "Wy0xLDAsMV0"])
def test_a_foreign_cursor_is_refused(cursor: str) -> None:
    with pytest.raises(InvalidInput, match="is not one that getGraphState returned"):
        summary.summarize(*graph(10, 10), cursor=cursor)


@pytest.mark.parametrize("budget", [999, 20_001])
def test_the_budget_has_bounds(budget: int) -> None:
    with pytest.raises(InvalidInput, match="tokenBudget must be between 1000 and 20000"):
        summary.summarize([], [], token_budget=budget)


def test_long_labels_are_shortened() -> None:
    nodes = [{"id": "X:1", "label": "L" * 500, "type": "gene"}]
    told = summary.summarize(nodes, [])
    assert len(told.data["nodes"][0]["label"]) == summary.TEXT_LIMIT
    assert told.data["nodes"][0]["label"].endswith("…")
