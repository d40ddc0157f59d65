"""Graph analysis on graphs whose answers are known."""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.errors import InvalidInput, NotFound
from graphwright.graphmode import analysis


def make(
    edges: list[tuple[str, str]],
    *,
    extra: list[str] = (),  # type: ignore[assignment]
    types: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    data: dict[str, dict[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    ids = list(dict.fromkeys([end for edge in edges for end in edge] + list(extra)))
    types, labels, data = types or {}, labels or {}, data or {}
    nodes = [
        {
            "id": i,
            "label": labels.get(i, i.upper()),
            "type": types.get(i, "gene"),
            "data": data.get(i, {}),
        }
        for i in ids
    ]
    links = [
        {"id": f"e{k}", "source": s, "target": t, "label": "rel"} for k, (s, t) in enumerate(edges)
    ]
    return nodes, links


def path(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return make([(f"n{i}", f"n{i + 1}") for i in range(n - 1)])


# --- structure -------------------------------------------------------------------------------


def test_structure_of_a_path() -> None:
    found = analysis.structure(*path(6))
    assert found["nodeCount"] == 6 and found["edgeCount"] == 5
    assert found["density"] == pytest.approx(5 / 15, abs=1e-6)
    assert found["components"] == {"count": 1, "largestSize": 6, "sizes": [6], "isolatedNodes": 0}
    assert found["diameter"] == {"value": 5, "approximate": False, "componentSize": 6}
    assert found["degree"]["histogram"] == [
        {"min": 1, "max": 1, "count": 2},
        {"min": 2, "max": 2, "count": 4},
    ]
    assert found["degree"]["mean"] == pytest.approx(10 / 6, abs=1e-4)


def test_structure_counts_components_isolated_nodes_and_the_largest_diameter() -> None:
    nodes, edges = make(
        [("a", "b"), ("b", "c"), ("c", "d"), ("x", "y"), ("x", "x")], extra=["lonely"]
    )
    found = analysis.structure(nodes, edges)
    assert found["components"] == {
        "count": 3,
        "largestSize": 4,
        "sizes": [4, 2, 1],
        "isolatedNodes": 1,
    }
    assert found["diameter"]["value"] == 3
    assert found["selfLoops"] == 1


def test_parallel_edges_collapse_for_structure() -> None:
    nodes, edges = make([("a", "b"), ("a", "b"), ("b", "a")])
    found = analysis.structure(nodes, edges)
    assert found["edgeCount"] == 3
    assert found["density"] == 1.0
    assert found["degree"]["max"] == 1


def test_large_components_get_an_approximate_diameter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "EXACT_DIAMETER_MAX_NODES", 5)
    found = analysis.structure(*path(12))
    assert found["diameter"]["approximate"] is True
    assert found["diameter"]["method"] == "two-sweep lower bound"
    assert found["diameter"]["value"] == 11  # two sweeps find a path's ends exactly


def test_empty_graph_structure() -> None:
    found = analysis.structure([], [])
    assert found["nodeCount"] == 0
    assert found["diameter"]["value"] is None
    assert found["degree"]["histogram"] == []


def test_many_distinct_degrees_use_power_of_two_bins() -> None:
    # hub i has i leaves: degrees 1..40 plus the leaves' degree 1
    edges = [(f"h{i}", f"h{i}_{j}") for i in range(1, 41) for j in range(i)]
    found = analysis.structure(*make(edges))
    bins = found["degree"]["histogram"]
    assert [(b["min"], b["max"]) for b in bins] == [
        (1, 1),
        (2, 3),
        (4, 7),
        (8, 15),
        (16, 31),
        (32, 63),
    ]
    assert sum(b["count"] for b in bins) == found["nodeCount"]
    assert bins[-1]["count"] == 9  # hubs 32..40


# --- centrality ------------------------------------------------------------------------------


def star() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return make([(f"leaf{i}", "hub") for i in range(6)])


@pytest.mark.parametrize("measure", ["degree", "betweenness", "pagerank"])
def test_the_hub_of_a_star_is_most_central(measure: str) -> None:
    found = analysis.centrality(*star(), measure=measure, top=3)  # type: ignore[arg-type]
    assert found["top"][0]["id"] == "hub"
    assert found["top"][0]["label"] == "HUB"
    assert len(found["top"]) == 3
    assert found["approximate"] is False


def test_centrality_scores_are_the_known_values() -> None:
    degree = analysis.centrality(*star(), measure="degree")
    assert degree["top"][0]["score"] == 1.0
    assert degree["top"][1]["score"] == pytest.approx(1 / 6, abs=1e-6)
    between = analysis.centrality(*path(5), measure="betweenness")
    assert between["top"][0] == {
        "id": "n2",
        "label": "N2",
        "type": "gene",
        "score": pytest.approx(4 / 6),
    }


def test_betweenness_is_sampled_on_large_graphs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "EXACT_BETWEENNESS_MAX_NODES", 3)
    found = analysis.centrality(*star(), measure="betweenness")
    assert found["approximate"] is True
    assert found["sampledSources"] == 7  # never more samples than nodes
    assert found["top"][0]["id"] == "hub"


def test_unknown_measure_is_refused() -> None:
    with pytest.raises(InvalidInput, match="Unknown centrality measure 'fame'"):
        analysis.centrality(*star(), measure="fame")  # type: ignore[arg-type]


# --- communities -----------------------------------------------------------------------------


def two_cliques() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    left = [(f"a{i}", f"a{j}") for i in range(5) for j in range(i + 1, 5)]
    right = [(f"b{i}", f"b{j}") for i in range(5) for j in range(i + 1, 5)]
    return make(left + right + [("a0", "b0")], types={f"b{i}": "disease" for i in range(5)})


def test_two_cliques_are_two_communities() -> None:
    found = analysis.communities(*two_cliques())
    assert found["algorithm"] == "louvain"
    assert found["count"] == 2
    members = [{m["id"] for m in c["members"]} for c in found["communities"]]
    assert sorted(members, key=min) == [{f"a{i}" for i in range(5)}, {f"b{i}" for i in range(5)}]
    assert {tuple(c["types"].items()) for c in found["communities"]} == {
        (("gene", 5),),
        (("disease", 5),),
    }
    assert found["modularity"] > 0.4


def test_communities_repeat_with_the_same_seed() -> None:
    graph = nx.karate_club_graph()
    nodes, edges = make([(str(a), str(b)) for a, b in graph.edges()])
    assert analysis.communities(nodes, edges, seed=7) == analysis.communities(nodes, edges, seed=7)


def test_communities_of_an_empty_graph() -> None:
    assert analysis.communities([], [])["count"] == 0


def test_communities_without_edges_have_no_modularity() -> None:
    found = analysis.communities(*make([], extra=["a", "b"]))
    assert found["count"] == 2
    assert found["modularity"] is None


# --- layout ----------------------------------------------------------------------------------


def test_circular_layout_puts_every_node_on_the_circle() -> None:
    positions = analysis.layout(*path(8), kind="circular", scale=100)
    assert len(positions) == 8
    for xy in positions.values():
        assert math.hypot(xy["x"], xy["y"]) == pytest.approx(100, abs=0.02)


def test_hierarchical_layout_layers_follow_edge_direction() -> None:
    nodes, edges = make([("root", "mid1"), ("root", "mid2"), ("mid1", "leaf"), ("mid2", "leaf")])
    positions = analysis.layout(nodes, edges, kind="hierarchical")
    y = {node_id: xy["y"] for node_id, xy in positions.items()}
    assert y["root"] < y["mid1"] == y["mid2"] < y["leaf"]
    assert positions["mid1"]["x"] != positions["mid2"]["x"]


def test_hierarchical_layout_puts_a_cycle_on_one_layer() -> None:
    nodes, edges = make([("a", "b"), ("b", "a"), ("b", "c")])
    assert analysis.layers(analysis.directed(nodes, edges)) == {"a": 0, "b": 0, "c": 1}


def test_force_layout_is_repeatable_and_bounded() -> None:
    nodes, edges = two_cliques()
    first = analysis.layout(nodes, edges, kind="force", seed=3, scale=500)
    assert first == analysis.layout(nodes, edges, kind="force", seed=3, scale=500)
    assert set(first) == {n["id"] for n in nodes}
    assert all(abs(xy["x"]) <= 500.01 and abs(xy["y"]) <= 500.01 for xy in first.values())


def test_force_layout_refuses_huge_graphs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "FORCE_LAYOUT_MAX_NODES", 5)
    with pytest.raises(InvalidInput, match="force layout handles up to 5 nodes"):
        analysis.layout(*path(6), kind="force")


def test_layout_of_nothing_and_unknown_kind() -> None:
    assert analysis.layout([], [], kind="circular") == {}
    with pytest.raises(InvalidInput, match="Unknown layout 'spiral'"):
        analysis.layout(*path(2), kind="spiral")  # type: ignore[arg-type]


# --- paths and neighbours --------------------------------------------------------------------


def test_shortest_path_lists_nodes_and_edges() -> None:
    nodes, edges = make([("a", "b"), ("b", "c"), ("c", "d"), ("a", "x"), ("x", "d")])
    found = analysis.shortest_path(nodes, edges, "a", "d")
    assert found["length"] == 2
    assert [n["id"] for n in found["nodes"]] == ["a", "x", "d"]
    assert [e["id"] for e in found["edges"]] == ["e3", "e4"]


def test_shortest_path_can_follow_direction() -> None:
    nodes, edges = make([("a", "b"), ("c", "b")])
    assert analysis.shortest_path(nodes, edges, "a", "c")["length"] == 2
    with pytest.raises(NotFound, match="No path from 'A' to 'C' following edge direction"):
        analysis.shortest_path(nodes, edges, "a", "c", follow_direction=True)


def test_shortest_path_names_a_missing_node() -> None:
    with pytest.raises(NotFound, match="No node 'XYZ' in this graph"):
        analysis.shortest_path(*path(3), "n0", "XYZ")


def test_neighbors_by_depth_and_direction() -> None:
    nodes, edges = make([("a", "b"), ("b", "c"), ("d", "a")])
    one = analysis.neighbors(nodes, edges, "a")
    assert {n["id"] for n in one["neighbors"]} == {"b", "d"}
    two = analysis.neighbors(nodes, edges, "a", depth=2)
    assert {n["id"]: n["distance"] for n in two["neighbors"]} == {"b": 1, "d": 1, "c": 2}
    assert next(n for n in two["neighbors"] if n["id"] == "c")["via"]["id"] == "e1"
    out = analysis.neighbors(nodes, edges, "a", depth=2, direction="out")
    assert {n["id"] for n in out["neighbors"]} == {"b", "c"}
    into = analysis.neighbors(nodes, edges, "a", direction="in")
    assert {n["id"] for n in into["neighbors"]} == {"d"}
    limited = analysis.neighbors(nodes, edges, "a", depth=2, limit=1)
    assert limited["count"] == 3 and len(limited["neighbors"]) == 1 and limited["truncated"]


# --- search -----------------------------------------------------------------------------


def searchable() -> list[dict[str, Any]]:
    nodes, _ = make(
        [],
        extra=["NCBIGene:7157", "NCBIGene:4193", "MONDO:0005148", "HGNC:1", "CHEBI:1"],
        labels={
            "NCBIGene:7157": "TP53",
            "NCBIGene:4193": "MDM2",
            "MONDO:0005148": "type 2 diabetes",
            "HGNC:1": "TP53BP1",
            "CHEBI:1": "nutlin",
        },
        types={"MONDO:0005148": "disease", "CHEBI:1": "drug"},
        data={
            "CHEBI:1": {"description": "an MDM2 inhibitor that stabilises tp53"},
            "NCBIGene:4193": {"category": "biolink:Gene", "aliases": ["HDM2"]},
        },
    )
    return nodes


def test_search_ranks_exact_then_prefix_then_substring_then_properties() -> None:
    found = analysis.search(searchable(), query="tp53")
    assert [n["id"] for n in found["nodes"]] == ["NCBIGene:7157", "HGNC:1", "CHEBI:1"]
    assert found["count"] == 3


def test_search_by_properties_and_type() -> None:
    nodes = searchable()
    assert [
        n["id"] for n in analysis.search(nodes, properties={"category": "biolink:gene"})["nodes"]
    ] == ["NCBIGene:4193"]
    assert [n["id"] for n in analysis.search(nodes, properties={"aliases": "HDM2"})["nodes"]] == [
        "NCBIGene:4193"
    ]
    assert [n["id"] for n in analysis.search(nodes, properties={"type": "drug"})["nodes"]] == [
        "CHEBI:1"
    ]
    assert analysis.search(nodes, query="mdm2", node_type="drug")["count"] == 1
    assert analysis.search(nodes, properties={"missing": 1})["count"] == 0


def test_search_needs_something_to_look_for() -> None:
    with pytest.raises(InvalidInput, match="Give a query, properties or a type"):
        analysis.search(searchable())


# --- invariants ------------------------------------------------------------------------------

edge_lists = st.lists(
    st.tuples(st.integers(0, 14), st.integers(0, 14)).map(lambda e: (f"v{e[0]}", f"v{e[1]}")),
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(edge_lists, st.integers(0, 3))
def test_analysis_agrees_with_networkx(edges: list[tuple[str, str]], isolated: int) -> None:
    nodes, links = make(edges, extra=[f"iso{i}" for i in range(isolated)])
    reference = nx.Graph()
    reference.add_nodes_from(n["id"] for n in nodes)
    reference.add_edges_from(edges)
    found = analysis.structure(nodes, links)
    assert found["components"]["count"] == nx.number_connected_components(reference)
    assert sum(b["count"] for b in found["degree"]["histogram"]) == len(nodes)
    for kind in ("hierarchical", "circular", "force"):
        positions = analysis.layout(nodes, links, kind=kind)  # type: ignore[arg-type]
        assert set(positions) == {n["id"] for n in nodes}
        assert all(math.isfinite(xy["x"]) and math.isfinite(xy["y"]) for xy in positions.values())
    if nodes:
        start = nodes[0]["id"]
        reach = analysis.neighbors(nodes, links, start, depth=15, limit=100)
        assert reach["count"] == len(nx.node_connected_component(reference, start)) - 1
