"""One canonical form of a merged graph, for comparing two merges of the same inputs.

Nodes are compared by id and links by (source, label, target) and all their fields; lists
anywhere (evidence, provenance, conflicts, list properties) compare as multisets, since the two
merges may meet the same values in a different order. Node and link order do not count.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        items = [_canonical(item) for item in value]
        return sorted(items, key=lambda item: orjson.dumps(item, option=orjson.OPT_SORT_KEYS))
    return value


def _text(value: Any) -> bytes:
    return orjson.dumps(_canonical(value), option=orjson.OPT_SORT_KEYS)


def canonical_graph(graph: dict[str, Any]) -> tuple[dict[str, bytes], Counter[bytes]]:
    """(node id -> the node's canonical JSON, multiset of the links' canonical JSON)."""
    nodes = {node["id"]: _text(node) for node in graph["nodes"]}
    assert len(nodes) == len(graph["nodes"]), "a node id appears twice"
    return nodes, Counter(_text(link) for link in graph["links"])
