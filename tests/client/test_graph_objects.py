"""core/graph_objects.py: both graph shapes to networkx and frames, and networkx back."""

from __future__ import annotations

import networkx as nx

from graphwright.core import graph_objects as go

NODES = [
    {"id": "A:1", "label": "a", "type": "Gene", "data": {"score": 1.5, "tags": ["x"]}},
    {"id": "B:2", "label": "b", "type": "Disease", "data": {}},
]
EDGES = [
    {"id": "e1", "source": "A:1", "target": "B:2", "label": "causes", "type": None, "data": {}},
    {"id": "e2", "source": "A:1", "target": "B:2", "label": "treats", "type": None, "data": {}},
]


def test_graph_mode_rows_round_trip_through_networkx() -> None:
    graph = go.rows_to_networkx(NODES, EDGES)
    assert graph.number_of_edges("A:1", "B:2") == 2
    assert graph.nodes["A:1"] == {"score": 1.5, "tags": ["x"], "label": "a", "type": "Gene"}
    nodes, edges = go.networkx_to_rows(graph)
    assert nodes[0] == {k: NODES[0][k] for k in ("id", "label", "type", "data")}
    assert [e["id"] for e in edges] == ["e1", "e2"]


def test_a_plain_graph_gets_labels_types_and_data() -> None:
    nodes, edges = go.networkx_to_rows(nx.Graph([(1, 2, {"weight": 3})]))
    assert nodes[0] == {"id": "1", "label": "1", "type": "NamedThing", "data": {}}
    assert edges == [{"source": "1", "target": "2", "data": {"weight": 3}}]


def test_a_knowledge_graph_round_trips() -> None:
    content = {
        "nodes": [{"id": "A:1", "name": "a", "category": "Gene"}],
        "links": [{"source": "A:1", "target": "A:1", "label": "regulates", "evidence": ["P:1"]}],
    }
    assert go.networkx_to_kg(go.kg_to_networkx(content)) == content


def test_frames_spread_data_into_columns() -> None:
    nodes, edges = go.frames_pandas(
        go.flat_rows(NODES, go.NODE_FIELDS), go.flat_rows(EDGES, go.EDGE_FIELDS)
    )
    assert list(nodes.columns[:3]) == ["id", "label", "type"]
    assert nodes["score"].tolist()[0] == 1.5
    assert edges["label"].tolist() == ["causes", "treats"]
    pl_nodes, pl_edges = go.frames_polars(
        go.flat_rows(NODES, go.NODE_FIELDS), go.flat_rows(EDGES, go.EDGE_FIELDS)
    )
    assert pl_nodes["tags"].to_list() == ['["x"]', None]
    assert pl_edges.height == 2
