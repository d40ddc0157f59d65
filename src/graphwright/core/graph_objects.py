"""Graphs as the scientist's own tools hold them: a networkx MultiDiGraph, pandas or polars frames.

Both graph shapes convert here, without I/O:
- a knowledge graph artifact (`{"nodes": [{"id", "name", "category", ...}], "links": [{"source",
  "target", "label", ...}]}`);
- a Graph Mode graph's rows as the REST API sends them (`{"id", "label", "type", "data"}` nodes and
  `{"id", "source", "target", "label", "type", "data"}` edges).

A Graph Mode node's `data` keys become attributes beside `label` and `type` (which win on a clash),
so `from_networkx` reads them back. pandas and polars are imported only when asked for (the
`notebook` extra).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import networkx as nx

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

Row = Mapping[str, Any]
# The fields of a Graph Mode row that are not part of its `data`.
NODE_FIELDS = ("id", "label", "type")
EDGE_FIELDS = ("id", "source", "target", "label", "type")
DEFAULT_NODE_TYPE = "NamedThing"


def rows_to_networkx(nodes: Iterable[Row], edges: Iterable[Row]) -> nx.MultiDiGraph:
    """A Graph Mode graph's rows as a MultiDiGraph keyed by edge id.

    >>> g = rows_to_networkx([{"id": "a", "label": "A", "type": "Gene", "data": {"x": 1}}],
    ...                      [{"id": "e1", "source": "a", "target": "a", "label": "r", "data": {}}])
    >>> g.nodes["a"], list(g.edges(keys=True))
    ({'x': 1, 'label': 'A', 'type': 'Gene'}, [('a', 'a', 'e1')])
    """
    graph = nx.MultiDiGraph()
    add_rows(graph, nodes, edges)
    return graph


def add_rows(graph: nx.MultiDiGraph, nodes: Iterable[Row], edges: Iterable[Row]) -> None:
    """Add Graph Mode rows to `graph`, one pass each (a page at a time, so a large graph's rows
    need not all be held at once); a node first met as an edge's end gets its attributes when
    its own row comes."""
    graph.add_nodes_from(
        (n["id"], {**(n.get("data") or {}), "label": n["label"], "type": n["type"]}) for n in nodes
    )
    graph.add_edges_from(
        (
            e["source"],
            e["target"],
            e["id"],
            {**(e.get("data") or {}), "label": e.get("label"), "type": e.get("type")},
        )
        for e in edges
    )


def networkx_to_rows(graph: nx.Graph) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Graph Mode node and edge inputs from any networkx graph: `label` and `type` attributes
    name the node (its id and `NamedThing` when absent), every other attribute goes to `data`;
    a MultiDiGraph's string edge keys become edge ids."""
    nodes = []
    for node_id, attrs in graph.nodes(data=True):
        data = {k: v for k, v in attrs.items() if k not in NODE_FIELDS}
        nodes.append(
            {
                "id": str(node_id),
                "label": str(attrs.get("label") or node_id),
                "type": str(attrs.get("type") or DEFAULT_NODE_TYPE),
                "data": data,
            }
        )
    edges = []
    for source, target, key, attrs in _edges(graph):
        edge: dict[str, Any] = {"source": str(source), "target": str(target)}
        if isinstance(key, str):
            edge["id"] = key
        for field in ("label", "type"):
            if attrs.get(field) is not None:
                edge[field] = str(attrs[field])
        edge["data"] = {k: v for k, v in attrs.items() if k not in EDGE_FIELDS}
        edges.append(edge)
    return nodes, edges


def _edges(graph: nx.Graph) -> Iterable[tuple[Any, Any, Any, dict[str, Any]]]:
    if graph.is_multigraph():
        return graph.edges(keys=True, data=True)
    return ((s, t, None, a) for s, t, a in graph.edges(data=True))


def kg_to_networkx(content: Mapping[str, Any]) -> nx.MultiDiGraph:
    """A knowledge graph artifact as a MultiDiGraph: every node field but `id` is an attribute,
    edges are keyed by their label (one edge per source, target and predicate)."""
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(
        (n["id"], {k: v for k, v in n.items() if k != "id"}) for n in content.get("nodes", [])
    )
    graph.add_edges_from(
        (
            link["source"],
            link["target"],
            link.get("label"),
            {k: v for k, v in link.items() if k not in ("source", "target")},
        )
        for link in content.get("links", [])
    )
    return graph


def networkx_to_kg(graph: nx.Graph) -> dict[str, Any]:
    """Knowledge graph JSON (the artifact's content, and what Graph Mode imports) from a
    networkx graph made by `kg_to_networkx` or `rows_to_networkx`: a node's `name` (else its
    `label`, else its id) and `category` (else its `type`, else NamedThing); every other
    attribute is kept."""
    nodes = []
    for node_id, attrs in graph.nodes(data=True):
        rest = {k: v for k, v in attrs.items() if k not in ("name", "category", *NODE_FIELDS)}
        name = attrs.get("name") or attrs.get("label") or node_id
        category = attrs.get("category") or attrs.get("type") or DEFAULT_NODE_TYPE
        nodes.append({**rest, "id": str(node_id), "name": str(name), "category": category})
    links = []
    for source, target, key, attrs in _edges(graph):
        label = attrs.get("label") or (key if isinstance(key, str) else None)
        links.append({**attrs, "source": str(source), "target": str(target), "label": label})
    return {"nodes": nodes, "links": links}


def flat_rows(rows: Iterable[Row], fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows with their `data` spread into columns beside `fields` (which win on a clash)."""
    return [
        {**(row.get("data") or {}), **{f: row.get(f) for f in fields}}
        | {k: v for k, v in row.items() if k not in (*fields, "data")}
        for row in rows
    ]


def frames_pandas(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Node and edge frames (pandas), the fields first."""
    import pandas as pd

    return pd.DataFrame(_fields_first(nodes, NODE_FIELDS)), pd.DataFrame(
        _fields_first(edges, EDGE_FIELDS)
    )


def frames_polars(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Node and edge frames (polars); columns of mixed values are kept as objects' text."""
    import polars as pl

    def frame(rows: list[dict[str, Any]], fields: tuple[str, ...]) -> pl.DataFrame:
        columns = _columns(rows, fields)
        return pl.DataFrame(
            [{c: _polars_value(row.get(c)) for c in columns} for row in rows],
            schema=columns or None,
            infer_schema_length=None,
            strict=False,
        )

    return frame(nodes, NODE_FIELDS), frame(edges, EDGE_FIELDS)


def _polars_value(value: Any) -> Any:
    # polars needs one type per column; nested structures stay readable as JSON text.
    if isinstance(value, dict | list):
        import orjson

        return orjson.dumps(value).decode()
    return value


def _columns(rows: list[dict[str, Any]], fields: tuple[str, ...]) -> list[str]:
    seen = dict.fromkeys(f for f in fields if any(f in row for row in rows))
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen) if rows else list(fields)


def _fields_first(rows: list[dict[str, Any]], fields: tuple[str, ...]) -> dict[str, list[Any]]:
    return {c: [row.get(c) for row in rows] for c in _columns(rows, fields)}
