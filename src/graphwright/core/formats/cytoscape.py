"""Cytoscape.js elements JSON (the `.cyjs` shape Cytoscape desktop also reads).

Every node and link property goes into its element's `data`. Cytoscape.js gives `id`, `source`
and `target` in edge data, and `parent` in node data, a meaning of its own, so properties with
those names are escaped as `graphwright:<name>`.
"""

from __future__ import annotations

from typing import Any

import orjson

from graphwright.core.formats.common import escaped, is_auto_link_key, link_keys, split_escaped
from graphwright.core.graph import GraphFormatError, parse_json

NODE_RESERVED = frozenset({"id", "parent"})
EDGE_RESERVED = frozenset({"id", "source", "target"})


def write(graph: dict[str, Any]) -> str:
    links = graph["links"]
    document = {
        "format_version": "1.0",
        "generated_by": "graphwright",
        "target_cytoscapejs_version": "~3",
        "data": {key: value for key, value in graph.items() if key not in ("nodes", "links")},
        "elements": {
            "nodes": [{"data": _node_data(node)} for node in graph["nodes"]],
            "edges": [
                {"data": _edge_data(link, key, own)}
                for link, (key, own) in zip(links, link_keys(links), strict=True)
            ],
        },
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


def _node_data(node: dict[str, Any]) -> dict[str, Any]:
    data = {"id": node["id"]}
    for key, value in node.items():
        if key != "id":
            data[escaped(key, NODE_RESERVED)] = value
    return data


def _edge_data(link: dict[str, Any], key: str, own_id: bool) -> dict[str, Any]:
    data = {"id": key, "source": link["source"], "target": link["target"]}
    for name, value in link.items():
        if name not in ("source", "target") and not (name == "id" and own_id):
            data[escaped(name, EDGE_RESERVED)] = value
    return data


def read(data: str | bytes) -> dict[str, Any]:
    """Cytoscape.js JSON: `elements` as {"nodes": [...], "edges": [...]} (what `write` and
    Cytoscape desktop give) or as one list with `group` on each element."""
    document = parse_json(data)
    elements = document.get("elements") if isinstance(document, dict) else document
    if isinstance(elements, dict):
        node_elements, edge_elements = elements.get("nodes") or [], elements.get("edges") or []
    elif isinstance(elements, list):
        node_elements = [e for e in elements if _group(e) == "nodes"]
        edge_elements = [e for e in elements if _group(e) == "edges"]
    else:
        raise GraphFormatError("Cytoscape JSON needs `elements` (an object or a list)")
    graph: dict[str, Any] = {}
    if isinstance(document, dict) and isinstance(document.get("data"), dict):
        graph.update(document["data"])
    graph["nodes"] = [_node(_data(e, "node", i)) for i, e in enumerate(node_elements)]
    graph["links"] = [_link(_data(e, "edge", i)) for i, e in enumerate(edge_elements)]
    return graph


def _group(element: Any) -> str:
    if not isinstance(element, dict):
        return ""
    group = element.get("group")
    if group is None:
        data = element.get("data")
        group = "edges" if isinstance(data, dict) and "source" in data else "nodes"
    return str(group)


def _data(element: Any, kind: str, index: int) -> dict[str, Any]:
    data = element.get("data") if isinstance(element, dict) else None
    if not isinstance(data, dict):
        raise GraphFormatError(f"Cytoscape {kind} {index} has no `data` object")
    return data


def _node(data: dict[str, Any]) -> dict[str, Any]:
    plain, restored = split_escaped(data)
    return {**plain, **restored}


def _link(data: dict[str, Any]) -> dict[str, Any]:
    plain, restored = split_escaped(data)
    key = plain.pop("id", None)
    link = {**plain, **restored}
    if isinstance(key, str) and not is_auto_link_key(key):
        link["id"] = key
    return link
