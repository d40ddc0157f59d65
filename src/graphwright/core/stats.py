"""Summary figures of a seed graph: counts, categories, the best-connected nodes, evidence."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import orjson

NO_CATEGORY = "(none)"


@dataclass(frozen=True)
class GraphStats:
    nodes: int
    links: int
    evidence_items: int
    distinct_evidence: int
    categories: list[tuple[str, int]]  # most frequent first
    top_nodes: list[tuple[str, str, int]]  # (id, name, degree), highest degree first


def graph_stats(graph: dict[str, Any], top: int = 10) -> GraphStats:
    """Figures for a graph validated by `load_graph`; `top` bounds the top-degree list."""
    nodes = graph["nodes"]
    links = graph["links"]
    categories: Counter[str] = Counter()
    for node in nodes:
        categories.update(_categories(node))
    degree: Counter[str] = Counter()
    evidence: set[Any] = set()
    evidence_items = 0
    for link in links:
        degree[link["source"]] += 1
        degree[link["target"]] += 1
        evidence_items += len(link["evidence"])
        evidence.update(_hashable(item) for item in link["evidence"])
    names = {node["id"]: node.get("name") for node in nodes}
    return GraphStats(
        nodes=len(nodes),
        links=len(links),
        evidence_items=evidence_items,
        distinct_evidence=len(evidence),
        categories=categories.most_common(),
        top_nodes=[
            (node_id, str(names.get(node_id) or ""), count)
            for node_id, count in degree.most_common(top)
        ],
    )


def _categories(node: dict[str, Any]) -> list[str]:
    value = node.get("category") or node.get("entityType")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value:
        return [str(item) for item in value]
    return [NO_CATEGORY]


def _hashable(item: Any) -> Any:
    if isinstance(item, dict | list):
        return orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
    return item
