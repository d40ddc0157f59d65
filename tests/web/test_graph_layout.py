"""Where the graph view draws nodes, and the ECharts option it sends."""

from __future__ import annotations

import math

from graphwright.core.palette import type_colour
from graphwright.drawing.free_space import view_scale
from graphwright.drawing.graph import drawing
from graphwright.drawing.layout import place
from graphwright.drawing.options import DENSE_EDGES_FROM, EDGE_LABELS_UP_TO, chart_options
from graphwright.graphmode.analysis import FORCE_LAYOUT_MAX_NODES
from graphwright.mcp_apps.payloads import graph_payload


def ring(count: int) -> tuple[list[dict], list[dict]]:
    nodes = [{"id": f"n{i}", "label": f"N{i}", "type": "gene" if i % 2 else "disease"}
             for i in range(count)]  # fmt: skip
    edges = [{"id": f"e{i}", "source": f"n{i}", "target": f"n{(i + 1) % count}"}
             for i in range(count)]  # fmt: skip
    return nodes, edges


def test_saved_positions_win_and_the_rest_get_a_force_layout() -> None:
    nodes, edges = ring(20)
    nodes[0]["position"] = {"x": 12.5, "y": -3.0}
    placement = place(nodes, edges)
    assert placement.positions["n0"] == (12.5, -3.0)
    assert len(placement.positions) == 20 and not placement.precomputed and placement.note is None


def test_a_new_node_goes_beside_its_neighbours_and_the_rest_stay() -> None:
    nodes, edges = ring(20)
    first = place(nodes, edges).positions
    nodes.append({"id": "new", "label": "new", "type": "gene"})
    edges.append({"id": "e-new", "source": "new", "target": "n3"})
    second = place(nodes, edges, first).positions
    assert all(second[k] == v for k, v in first.items())
    pixels = math.dist(second["new"], first["n3"]) * view_scale(first.values())
    assert pixels < 60  # in the smallest view the graph is drawn in


def test_above_the_cap_the_view_says_it_shows_the_precomputed_layout() -> None:
    nodes, edges = ring(FORCE_LAYOUT_MAX_NODES + 1)
    placement = place(nodes, edges)
    assert placement.precomputed and "precomputed layout" in (placement.note or "")
    options = chart_options(nodes, edges, placement.positions, large=True)
    series = options["series"][0]
    assert series["layout"] == "none" and not series["label"]["show"]
    assert options["animation"] is False


def test_types_become_categories_with_a_legend_and_highlights_stand_out() -> None:
    nodes, edges = ring(6)
    placement = place(nodes, edges)
    options = chart_options(nodes, edges, placement.positions, highlight={"n1"})
    series = options["series"][0]
    assert options["legend"][0]["data"] == ["Disease", "Gene"]
    assert [c["name"] for c in series["categories"]] == ["Disease", "Gene"]
    by_id = {item["id"]: item for item in series["data"]}
    assert by_id["n1"]["category"] == 1 and by_id["n0"]["category"] == 0
    assert by_id["n1"]["symbolSize"] > by_id["n0"]["symbolSize"]
    assert len(series["links"]) == 6
    assert series["links"][0] == {"source": 0, "target": 1, "value": ""}


def test_a_drawing_maps_each_link_to_its_edge_and_leaves_hidden_types_out() -> None:
    nodes, edges = ring(6)
    shown = drawing(nodes, edges, place(nodes, edges), version=3, hidden_types={"disease"})
    series = shown.options["series"][0]
    assert {item["id"] for item in series["data"]} == {"n1", "n3", "n5"}
    assert series["links"] == [] and shown.link_ids == []  # a ring alternates types
    everything = drawing(nodes, edges, place(nodes, edges))
    assert everything.link_ids == [e["id"] for e in edges]


def test_a_dense_graph_is_drawn_with_large_series_and_clicks_map_to_nodes() -> None:
    from graphwright.drawing.options import DENSE_EDGES_FROM

    count = DENSE_EDGES_FROM // 2 + 1
    nodes, edges = ring(count)
    edges += [{"id": f"x{i}", "source": f"n{i}", "target": f"n{(i + 2) % count}"}
              for i in range(count)]  # fmt: skip
    shown = drawing(nodes, edges, place(nodes, edges), highlight={"n2"})
    lines, *scatters = shown.options["series"]
    assert lines["type"] == "lines" and lines["large"] and len(lines["data"]) == len(edges)
    assert [s["name"] for s in scatters] == ["Disease", "Gene", "highlighted"]
    assert all(s["type"] == "scatter" for s in scatters)
    assert shown.series_node_ids is not None
    assert shown.series_node_ids[1][:2] == ["n1", "n3"]
    assert shown.series_node_ids[-1] == ["n2"]


def test_each_type_has_its_palette_colour_in_every_drawing_and_payload() -> None:
    """Issue 31, point 11: Gene was orange in one drawing and blue in the next, because colours
    went by how common a type was. Now `type_colour` gives each type its colour everywhere."""
    gene = type_colour("Gene")
    few = [{"id": "g", "label": "TP53", "type": "gene"}]
    many = few + [{"id": f"d{i}", "label": f"D{i}", "type": "disease"} for i in range(5)]
    for nodes in (few, many):
        option = drawing(nodes, [], place(nodes, [])).options
        colours = {c["name"]: c["itemStyle"]["color"] for c in option["series"][0]["categories"]}
        assert colours["Gene"] == gene and "color" not in option
    nodes, edges = ring(DENSE_EDGES_FROM // 2 + 1)
    edges += [{"id": f"x{i}", "source": f"n{i}", "target": f"n{(i + 2) % len(nodes)}"}
              for i in range(len(nodes))]  # fmt: skip
    dense = drawing(nodes, edges, place(nodes, edges)).options["series"]
    assert {s["name"]: s["itemStyle"]["color"] for s in dense[1:]}["Gene"] == gene
    payload, _ = graph_payload(few, [], title="g")
    assert payload["nodes"]["g"]["colour"] == gene


def test_the_hover_card_names_the_node_its_type_and_id() -> None:
    """Issue 31, point 12: the tooltip read "TP53 -"."""
    nodes = [{"id": "NCBIGene:7157", "label": "TP53", "type": "gene"},
             {"id": "NCBIGene:4193", "label": "MDM2", "type": "gene"}]  # fmt: skip
    edges = [{"id": "e", "source": "NCBIGene:4193", "target": "NCBIGene:7157", "label": "inhibits"}]
    series = drawing(nodes, edges, place(nodes, edges)).options["series"][0]
    assert series["data"][0]["tooltip"]["formatter"] == "TP53 · Gene · NCBIGene:7157"
    assert series["links"][0]["value"] == "inhibits"  # the edge's hover shows its predicate


def test_a_small_graph_draws_its_predicates_and_a_bigger_one_on_hover_only() -> None:
    """Issue 31, point 12: edge labels were missing on the canvas."""
    for count, on_canvas in ((EDGE_LABELS_UP_TO, True), (EDGE_LABELS_UP_TO + 1, False)):
        nodes, edges = ring(count)
        series = drawing(nodes, edges, place(nodes, edges)).options["series"][0]
        assert series["edgeLabel"]["show"] is on_canvas
        assert series["emphasis"]["edgeLabel"]["show"] is True  # the hover shows it anyway
