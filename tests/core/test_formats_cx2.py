"""CX2: ndex2's reader takes what we write, with its declared types, in the UI's colours."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from ndex2.cx2 import CX2Network, RawCX2NetworkFactory

from graphwright.core.formats import read_graph, write_graph
from graphwright.core.graph import GraphFormatError, load_graph
from graphwright.core.palette import UNTYPED, type_colour
from tests.core.test_formats import graphs

SAMPLE = {
    "nodes": [
        {"id": "NCBIGene:7157", "name": "TP53", "category": "Gene", "synonym": ["p53"], "n": 3},
        {"id": "MONDO:0005148", "name": "type 2 diabetes", "category": "Disease", "n": 0.5},
        {"id": "CHEBI:6801", "name": "metformin", "category": ["Drug", "SmallMolecule"]},
        {"id": "X:1", "name": "thing", "represents": "kept", "n": None},
    ],
    "links": [
        {
            "source": "ncbigene:7157",
            "target": "MONDO:0005148",
            "label": "associated with",
            "evidence": ["PMID:111", "PMID:222"],
            "confidence": 0.9,
            "interaction": {"nested": True},
        },
        {"source": "CHEBI:6801", "target": "MONDO:0005148", "label": "treats", "evidence": []},
    ],
}


def ndex2_network(text: str) -> CX2Network:
    return RawCX2NetworkFactory().get_cx2network(orjson.loads(text))


def test_ndex2_reads_nodes_edges_and_declared_types() -> None:
    network = ndex2_network(write_graph(SAMPLE, "cx2"))
    declared = network.get_attribute_declarations()
    assert declared["nodes"]["represents"] == {"d": "string"}
    assert declared["nodes"]["synonym"] == {"d": "list_of_string"}
    assert declared["nodes"]["n"] == {"d": "long"}  # 3; 0.5 and null go to JSON text
    assert declared["nodes"]["graphwright:json:n"] == {"d": "string"}
    assert declared["edges"]["evidence"] == {"d": "list_of_string"}
    assert declared["edges"]["confidence"] == {"d": "double"}
    nodes = network.get_nodes()
    assert [n["v"]["represents"] for n in nodes.values()] == [n["id"] for n in SAMPLE["nodes"]]
    assert nodes[0]["v"]["synonym"] == ["p53"]
    assert nodes[3]["v"]["graphwright:represents"] == "kept"
    edges = network.get_edges()
    assert edges[0]["s"] == 0 and edges[0]["t"] == 1
    assert edges[0]["v"]["interaction"] == "associated with"
    assert edges[0]["v"]["source"] == "ncbigene:7157"  # its own spelling, kept
    assert edges[0]["v"]["graphwright:json:graphwright:interaction"] == '{"nested":true}'


def test_colours_are_the_web_uis_by_biolink_category() -> None:
    network = ndex2_network(write_graph(SAMPLE, "cx2"))
    colours = {i: b["NODE_BACKGROUND_COLOR"] for i, b in network.get_node_bypasses().items()}
    assert colours == {
        0: type_colour("Gene"),
        1: type_colour("Disease"),
        2: type_colour("Drug"),
        3: UNTYPED,
    }
    assert colours[0] != colours[1]
    style = network.get_visual_properties()
    assert style["nodeMapping"]["NODE_LABEL"]["definition"]["attribute"] == "name"
    mapping = style["nodeMapping"]["NODE_BACKGROUND_COLOR"]["definition"]
    assert {"v": "Gene", "vp": type_colour("Gene")} in mapping["map"]


def test_round_trip_through_ndex2_keeps_nodes_edges_and_attributes() -> None:
    """ours -> CX2 -> ndex2's CX2Network -> its CX2 -> ours gives the graph back."""
    network = ndex2_network(write_graph(SAMPLE, "cx2"))
    again = orjson.dumps(network.to_cx2()).decode()
    assert read_graph(again, "cx2") == load_graph(SAMPLE)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs())
def test_ndex2_reads_every_graph_with_values_of_the_declared_types(graph: dict[str, Any]) -> None:
    text = write_graph(graph, "cx2")
    network = ndex2_network(text)  # converts each value to its declared type, or raises
    declared = network.get_attribute_declarations()
    written = {aspect: elements for item in orjson.loads(text) for aspect, elements in item.items()}
    for aspect in ("nodes", "edges"):
        for element in written[aspect]:
            for name, value in element["v"].items():
                kind = declared[aspect][name]["d"]
                assert _of_type(value, kind), (aspect, name, value, kind)
    back = orjson.loads(orjson.dumps(network.to_cx2()))
    assert read_graph(orjson.dumps(back), "cx2") == load_graph(graph)


def _of_type(value: Any, kind: str) -> bool:
    scalar = {"string": str, "long": int, "double": float, "boolean": bool}
    if kind.startswith("list_of_"):
        item = scalar[kind.removeprefix("list_of_")]
        return isinstance(value, list) and all(type(v) is item for v in value)
    return type(value) is scalar[kind]


def test_cx2_from_elsewhere_uses_represents_then_the_cx2_id_and_interaction() -> None:
    document = [
        {"CXVersion": "2.0", "hasFragments": False},
        {"attributeDeclarations": [{"nodes": {"name": {"d": "string", "a": "n"}}}]},
        {"nodes": [{"id": 5, "v": {"n": "TP53"}}, {"id": 7, "v": {"n": "MDM2"}}]},
        {"edges": [{"id": 0, "s": 5, "t": 7, "v": {"interaction": "interacts-with"}}]},
    ]
    graph = read_graph(orjson.dumps(document), "cx2")
    assert graph["nodes"] == [{"id": "5", "name": "TP53"}, {"id": "7", "name": "MDM2"}]
    assert graph["links"] == [
        {"source": "5", "target": "7", "label": "interacts-with", "evidence": []}
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"nodes": []}, "CX2 is a JSON list of aspect objects"),
        ([{"nodes": [{"v": {}}]}], "CX2 node 0 needs an integer `id`"),
        ([{"nodes": [{"id": 1}]}, {"edges": [{"id": 0, "s": 1, "t": 9}]}], "`t` names no node"),
        (
            [{"attributeDeclarations": [{"nodes": {"x": {"d": "map"}}}]}],
            "CX2 attribute 'x' of nodes declares no CX2 type: 'map'",
        ),
    ],
)
def test_bad_cx2_is_named(document: Any, message: str) -> None:
    with pytest.raises(GraphFormatError, match=message):
        read_graph(orjson.dumps(document), "cx2")
