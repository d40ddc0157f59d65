"""Cytoscape.js elements JSON (the `.cyjs` shape Cytoscape desktop also reads); write only.

Every node and link property goes into its element's `data`. Cytoscape.js gives `id`, `source`
and `target` in edge data, and `parent` in node data, a meaning of its own, so properties with
those names are escaped as `graphwright:<name>`.
"""

from __future__ import annotations

from typing import Any

import orjson

from graphwright.core.formats.common import escaped, link_keys

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
