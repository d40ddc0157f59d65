"""Summary figures of a graph: counts, categories, degrees, evidence."""

from __future__ import annotations

from graphwright.core.graph import load_graph
from graphwright.core.stats import NO_CATEGORY, graph_stats


def test_counts_categories_degrees_and_evidence() -> None:
    graph = load_graph(
        {
            "nodes": [
                {"id": "A:1", "name": "a", "category": "Gene"},
                {"id": "B:2", "name": "b", "entityType": "Disease"},
                {"id": "C:3", "category": ["Gene", "Protein"]},
                {"id": "D:4"},
            ],
            "links": [
                {"source": "A:1", "target": "B:2", "label": "x", "evidence": ["PMID:1", "PMID:2"]},
                {"source": "A:1", "target": "C:3", "label": "y", "evidence": ["PMID:1"]},
                {"source": "C:3", "target": "A:1", "label": "z", "evidence": [{"doi": "10.1/x"}]},
            ],
        }
    )
    stats = graph_stats(graph, top=2)
    assert (stats.nodes, stats.links) == (4, 3)
    assert (stats.evidence_items, stats.distinct_evidence) == (4, 3)
    assert stats.categories == [("Gene", 2), ("Disease", 1), ("Protein", 1), (NO_CATEGORY, 1)]
    assert stats.top_nodes == [("A:1", "a", 3), ("C:3", "", 2)]
