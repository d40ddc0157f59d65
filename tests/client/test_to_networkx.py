"""`GraphModeGraph.to_networkx()` against the MultiDiGraph built by hand from the REST `/state`
answer, attributes included, through a live server and Client.local on every backend."""

from __future__ import annotations

from typing import Any

import networkx as nx
import pytest

from graphwright.client import Client
from graphwright.client import graph as graph_module

NODES = [
    {"id": "A:1", "label": "first", "type": "Gene", "data": {"score": 0.5, "tags": ["x", "y"]}},
    {"id": "B:2", "label": "second", "type": "Disease", "data": {"nested": {"k": [1, {}]}}},
    {"id": "C:3", "label": "third ü", "type": "Gene", "data": {}},
    {"id": "D:4", "label": "fourth", "type": "ChemicalEntity", "data": {"flag": True, "n": 7}},
    {"id": "Z:9", "label": "last", "type": "Gene", "data": {"synonyms": ["L", "LAST"]}},
]
EDGES = [
    # "e0" comes on the first page and ends at Z:9, whose node row comes on the last one.
    {"id": "e0", "source": "A:1", "target": "Z:9", "label": "interacts with", "data": {"w": 1}},
    {"id": "e1", "source": "A:1", "target": "B:2", "label": "causes", "data": {"pmids": ["1"]}},
    {"id": "e2", "source": "A:1", "target": "B:2", "label": "causes", "data": {}},  # parallel
    {"id": "e3", "source": "C:3", "target": "C:3", "label": "regulates", "type": "custom"},
    {"id": "e4", "source": "D:4", "target": "A:1", "label": "treats", "data": {"p": 0.01}},
    {"id": "e5", "source": "B:2", "target": "D:4", "label": "related to"},
    {"id": "e6", "source": "Z:9", "target": "C:3", "label": "part of", "data": {"x": "y"}},
]


def built_by_hand(state: dict[str, Any]) -> nx.MultiDiGraph:
    graph = nx.MultiDiGraph()
    for node in state["nodes"]:
        graph.add_node(node["id"], **{**node["data"], "label": node["label"], "type": node["type"]})
    for edge in state["edges"]:
        attrs = {**edge["data"], "label": edge["label"], "type": edge["type"]}
        graph.add_edge(edge["source"], edge["target"], key=edge["id"], **attrs)
    return graph


@pytest.mark.parametrize("page", [2, 1000])
def test_to_networkx_equals_the_graph_built_from_the_state_answer(
    client: Client, monkeypatch: pytest.MonkeyPatch, page: int
) -> None:
    graph = client.graph(client.chat("/help").conversation_id)
    graph.add_nodes(NODES)
    graph.add_edges(EDGES)
    state = client._transport.call("GET", f"{graph._prefix}/state")  # the whole graph at once
    expected = built_by_hand(state)
    assert expected.number_of_nodes() == len(NODES) and expected.number_of_edges() == len(EDGES)
    monkeypatch.setattr(graph_module, "STATE_PAGE", page)  # 2: pages overlap the build

    got = graph.to_networkx()

    assert isinstance(got, nx.MultiDiGraph)
    assert dict(got.nodes(data=True)) == dict(expected.nodes(data=True))
    assert sorted(got.edges(keys=True, data=True)) == sorted(expected.edges(keys=True, data=True))
    assert nx.utils.graphs_equal(got, expected)
    assert got.nodes["B:2"]["nested"] == {"k": [1, {}]}
    assert got.edges["A:1", "Z:9", "e0"] == {"w": 1, "label": "interacts with", "type": None}
    assert graph.version == state["metadata"]["version"]


def test_to_networkx_of_a_conversation_with_no_graph_is_empty(client: Client) -> None:
    graph = client.graph(client.chat("/help").conversation_id)
    assert graph.to_networkx().number_of_nodes() == 0
