"""The token-budgeted graph summary: within budget, and its cursor pages through everything."""

from __future__ import annotations

import random
from collections import Counter
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


def overview_of(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], version: int | None = 3
) -> summary.Overview:
    return summary.Overview(
        node_count=len(nodes),
        edge_count=len(edges),
        version=version,
        node_types=Counter(n["type"] for n in nodes),
        edge_labels=Counter(e["label"] for e in edges),
        top_nodes=summary.top_by_degree(nodes, edges, 10),
    )


def page(
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    *,
    budget: int = summary.DEFAULT_TOKEN_BUDGET,
    cursor: str | None = None,
    overview: summary.Overview | None = None,
) -> summary.Summary:
    """One page as GraphService.state would serve its window: nodes by id, edges by source."""
    nodes = sorted(nodes, key=lambda n: n["id"])
    start = summary.start(cursor).node_index
    size = summary.window_size(budget)
    window = nodes[start : start + size]
    ids = {n["id"] for n in window}
    window_edges = sorted(
        (e for e in edges if e["source"] in ids), key=lambda e: (e["source"], e["id"])
    )
    return summary.summarize(
        overview or overview_of(nodes, edges),
        window,
        window_edges,
        cursor=cursor,
        more_after_window=start + size < len(nodes),
        token_budget=budget,
    )


def page_through(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], budget: int
) -> tuple[list[str], list[str], list[summary.Summary]]:
    overview = overview_of(nodes, edges)
    seen_nodes: list[str] = []
    seen_edges: list[str] = []
    pages: list[summary.Summary] = []
    cursor = None
    while True:
        told = page(nodes, edges, budget=budget, cursor=cursor, overview=overview)
        pages.append(told)
        seen_nodes += [n["id"] for n in told.data["nodes"]]
        seen_edges += [e["id"] for e in told.data["edges"]]
        cursor = told.data["nextCursor"]
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
    told = page(nodes, edges)
    assert told.data["nextCursor"] is None
    assert told.data["nodeTypes"] == {"gene": 1, "disease": 1}
    assert told.data["edgeLabels"] == {"associated_with": 1}
    assert told.text.startswith("Current graph has 2 nodes and 1 edge (version 3).")
    assert "- TP53 [NCBIGene:7157] (gene)" in told.text
    assert "- TP53 -> Type 2 Diabetes (associated_with) [e1]" in told.text
    assert "More:" not in told.text


def test_empty_graph() -> None:
    told = summary.summarize(summary.Overview(0, 0, 0, top_nodes=[]), [], [])
    assert told.text == "Current graph has 0 nodes and 0 edges (version 0)."
    assert told.data["nodes"] == [] and told.data["nextCursor"] is None


def test_top_nodes_are_the_best_connected() -> None:
    nodes, _ = graph(20, 0)
    edges = [
        {"id": f"e{i}", "source": "NCBIGene:5", "target": f"NCBIGene:{i}", "label": "x"}
        for i in range(6, 12)
    ] + [{"id": "f", "source": "NCBIGene:7", "target": "NCBIGene:8", "label": "x"}]
    top = summary.top_by_degree(nodes, edges, 3)
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
    told = page(*graph(2_000, 4_000))
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
    first = page(nodes, edges, budget=1_000)
    later = page(
        nodes,
        edges,
        budget=1_000,
        cursor=first.data["nextCursor"],
        overview=overview_of(nodes, edges, version=5),
    )
    assert "changed since this cursor was issued (version 3 -> 5)" in later.text


def test_a_hub_whose_edges_span_pages_is_listed_once() -> None:
    nodes, _ = graph(3, 0)
    edges = [
        {"id": f"e{k:04}", "source": "NCBIGene:0", "target": "NCBIGene:1", "label": "x"}
        for k in range(500)
    ]
    seen_nodes, seen_edges, pages = page_through(nodes, edges, 1_000)
    assert seen_nodes == ["NCBIGene:0", "NCBIGene:1", "NCBIGene:2"]
    assert seen_edges == [e["id"] for e in edges]
    assert len(pages) > 3
    assert pages[1].data["nodes"] == []  # the hub's edges continue


def test_large_graphs_without_a_ranking_say_where_to_find_one() -> None:
    nodes, edges = graph(50, 50)
    overview = summary.Overview(len(nodes), len(edges), 1, {"gene": 50}, {"x": 50})
    told = page(nodes, edges, overview=overview)
    assert "topNodes" not in told.data
    assert told.data["note"] == summary.UNRANKED
    assert "findCentrality with measure=degree" in told.text


@pytest.mark.parametrize("cursor", ["not a cursor", "WzEsMl0", "Wy0xLDAsMV0"])
def test_a_foreign_cursor_is_refused(cursor: str) -> None:
    with pytest.raises(InvalidInput, match="is not one that getGraphState returned"):
        page(*graph(10, 10), cursor=cursor)


@pytest.mark.parametrize("budget", [999, 20_001])
def test_the_budget_has_bounds(budget: int) -> None:
    with pytest.raises(InvalidInput, match="tokenBudget must be between 1000 and 20000"):
        summary.summarize(summary.Overview(0, 0, 0), [], [], token_budget=budget)


def test_long_labels_are_shortened() -> None:
    nodes = [{"id": "X:1", "label": "L" * 500, "type": "gene"}]
    told = page(nodes, [])
    assert len(told.data["nodes"][0]["label"]) == summary.TEXT_LIMIT
    assert told.data["nodes"][0]["label"].endswith("…")
