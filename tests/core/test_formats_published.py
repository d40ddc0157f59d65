"""Files shaped like what KG builders publish (KGX, KG-Hub, Translator ARAs, yEd), issue 14.

The fixtures under tests/fixtures/formats/ were written for these tests in the shapes the
KGX format documentation, TRAPI 0.9 and 1.5, and yEd use.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import networkx as nx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from reasoner_pydantic import KnowledgeGraph, Response

from graphwright.core.formats import (
    read_graph,
    read_graph_pair,
    read_graphs,
    write_graph,
    write_graph_pair,
)
from graphwright.core.graph import GraphFormatError, load_graph
from graphwright.core.merge import GraphAccumulator
from graphwright.core.merge_files import merge_files
from tests.core.test_formats import SAMPLE, graphs

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"


def assert_valid_trapi(knowledge_graph: dict[str, Any]) -> None:
    """TRAPI 1.5's schema (reasoner-pydantic), plus the rule its text adds: one primary
    knowledge source per edge."""
    KnowledgeGraph.model_validate(knowledge_graph)
    for key, edge in knowledge_graph["edges"].items():
        roles = [source["resource_role"] for source in edge["sources"]]
        assert roles.count("primary_knowledge_source") == 1, key


# -- 1. KGX TSV rows that leave off trailing empty cells -------------------------------------


def test_kgx_tsv_reads_rows_without_their_trailing_empty_cells() -> None:
    folder = FIXTURES / "kgx_short_rows"
    graph = read_graph_pair(
        (folder / "nodes.tsv").read_text(), (folder / "edges.tsv").read_text(), "kgx-tsv"
    )
    nodes = {node["id"]: node for node in graph["nodes"]}
    assert nodes["MONDO:0005002"] == {
        "id": "MONDO:0005002",
        "category": "Disease",
        "name": "chronic obstructive pulmonary disease",
    }
    assert nodes["HP:0002088"]["xref"] == ["UMLS:C0024115"]
    assert graph["links"][0]["evidence"] == ["PMID:24403382", "PMID:20520615"]
    assert "qualifiers" not in graph["links"][0]


def test_kgx_tsv_rows_with_too_many_cells_are_still_refused() -> None:
    with pytest.raises(GraphFormatError, match=r"nodes\.tsv line 2: 3 cells, but the header has 2"):
        read_graph_pair("id\tname\nA:1\ta\tb\n", "", "kgx-tsv")


# -- 2. Edges-only and nodes-only files, and merges across files -----------------------------


def _kghub() -> tuple[str, str]:
    folder = FIXTURES / "kghub"
    return (folder / "kg-microbe_nodes.tsv").read_text(), (folder / "traits_edges.tsv").read_text()


def test_an_edges_only_file_reads_with_nodes_inferred_from_prefixes() -> None:
    _, edges = _kghub()
    graph = read_graph_pair("", edges, "kgx-tsv")
    assert {node["id"]: node["category"] for node in graph["nodes"]} == {
        "NCBITaxon:562": "OrganismTaxon",
        "CHEBI:17234": "ChemicalEntity",
        "CHEBI:16236": "ChemicalEntity",
    }
    with pytest.raises(GraphFormatError, match="points to missing node 'NCBITaxon:562'"):
        read_graph_pair("", edges, "kgx-tsv", strict=True)


def test_a_nodes_only_file_reads_as_a_graph_without_links() -> None:
    nodes, _ = _kghub()
    graph = read_graph_pair(nodes, "", "kgx-tsv")
    assert [node["name"] for node in graph["nodes"]] == ["Escherichia coli", "glucose"]
    assert graph["links"] == []


def test_files_merge_first_and_only_nodes_no_file_holds_are_inferred() -> None:
    nodes_text, edges_text = _kghub()
    nodes = read_graph_pair(nodes_text, "", "kgx-tsv", partial=True)
    edges = read_graph_pair("", edges_text, "kgx-tsv", partial=True)
    accumulator = GraphAccumulator()
    outcome = merge_files(accumulator, [("nodes", nodes), ("edges", edges)])
    merged = {node["id"]: node for node in accumulator.to_graph()["nodes"]}
    assert merged["NCBITaxon:562"]["name"] == "Escherichia coli"  # from the other file
    assert merged["NCBITaxon:562"]["provenance"] == ["nodes"]
    assert [(n.id, n.category, n.result_id) for n in outcome.inferred] == [
        ("CHEBI:16236", "ChemicalEntity", "edges")
    ]
    assert merged["CHEBI:16236"] == {
        "id": "CHEBI:16236",
        "category": "ChemicalEntity",
        "provenance": ["edges"],
    }
    with pytest.raises(GraphFormatError, match="edges: a link points to node 'CHEBI:16236'"):
        merge_files(GraphAccumulator(), [("nodes", nodes), ("edges", edges)], strict=True)


# -- 3. edge_label, KGX JSON, TRAPI 0.9 lists ------------------------------------------------


def test_kgx_edge_label_column_stands_for_predicate() -> None:
    nodes, edges = _kghub()
    graph = read_graph_pair(nodes, edges, "kgx-tsv")
    assert [link["label"] for link in graph["links"]] == ["consumes", "produces", "consumes"]
    assert graph["links"][0]["relation"] == "RO:0002332"
    assert "edge_label" not in graph["links"][0]


def test_kgx_json_reads_by_shape_and_round_trips() -> None:
    [graph] = read_graphs((FIXTURES / "kgx_graph.json").read_bytes(), name="kg.json")
    assert graph["nodes"][0] == {
        "id": "NCBIGene:7157",
        "name": "TP53",
        "category": "Gene",
        "provided_by": ["infores:ncbi-gene"],
    }
    assert graph["links"][0]["label"] == "gene associated with condition"
    assert graph["links"][0]["primary_knowledge_source"] == "infores:ctd"
    assert read_graph(write_graph(graph, "kgx-json"), "kgx-json") == graph
    document = orjson.loads(write_graph(graph, "kgx-json"))
    assert document["edges"][0]["predicate"] == "biolink:gene_associated_with_condition"


def test_trapi_0_9_list_shaped_messages_are_read() -> None:
    [graph] = read_graphs((FIXTURES / "trapi_0_9_message.json").read_bytes(), name="old.json")
    nodes = {node["id"]: node for node in graph["nodes"]}
    assert nodes["NCBIGene:3630"] == {
        "id": "NCBIGene:3630",
        "name": "INS",
        "category": "Gene",
        "symbol": "INS",
    }
    assert nodes["MONDO:0005148"]["category"] == "Disease"
    [link] = graph["links"]
    assert (link["source"], link["target"], link["label"]) == (
        "NCBIGene:3630",
        "MONDO:0005148",
        "gene associated with condition",
    )
    assert link["publications"] == ["PMID:15161920"]
    assert link["provided_by"] == "ctd"


# -- 4. KGX multivalued columns --------------------------------------------------------------


def test_kgx_multivalued_columns_split_by_the_biolink_model_and_merge_without_conflicts() -> None:
    nodes, edges = _kghub()
    graph = read_graph_pair(nodes, edges, "kgx-tsv")
    assert graph["links"][0]["qualifiers"] == ["biolink:aerobic", "biolink:anaerobic"]
    assert graph["nodes"][1]["category"] == ["ChemicalEntity", "SmallMolecule"]
    accumulator = GraphAccumulator()
    accumulator.add(graph)
    [consumes, _] = accumulator.to_graph()["links"]
    assert consumes["qualifiers"] == ["biolink:aerobic", "biolink:anaerobic"]
    assert "qualifiers" not in consumes.get("conflicts", {})


def test_kgx_cells_keep_text_unless_the_biolink_slot_is_numeric() -> None:
    folder = FIXTURES / "kgx_short_rows"
    graph = read_graph_pair(
        (folder / "nodes.tsv").read_text(), (folder / "edges.tsv").read_text(), "kgx-tsv"
    )
    assert graph["nodes"][0]["chromosome"] == "17"  # not a Biolink slot: text, as KGX reads it
    phenotype = graph["links"][1]
    assert phenotype["has_count"] == 3  # an integer slot
    assert phenotype["p_value"] == 0.05  # a float slot
    assert phenotype["qualifiers"] == ["HP:0040280", "HP:0012828"]


# -- 5. TRAPI attributes, qualifiers and sources survive -------------------------------------


def test_trapi_attributes_qualifiers_and_sources_survive_a_round_trip() -> None:
    original = orjson.loads((FIXTURES / "aragorn_like_response.json").read_bytes())
    kg = original["message"]["knowledge_graph"]
    graph = read_graphs(orjson.dumps(original), name="aragorn.json")[0]
    [link] = graph["links"]
    assert link["knowledge_level"] == "knowledge_assertion"
    assert {a["original_attribute_name"] for a in link["attributes"] if "original_attribute_name"
            in a} == {"FAERS_llr", "drug_status"}  # fmt: skip
    written = orjson.loads(write_graph(graph, "trapi"))
    assert_valid_trapi(written)
    edge, source_edge = written["edges"]["ce6b8a3d"], kg["edges"]["ce6b8a3d"]
    assert _canonical(edge["attributes"]) == _canonical(source_edge["attributes"])
    assert edge["qualifiers"] == source_edge["qualifiers"]
    assert _canonical(edge["sources"]) == _canonical(source_edge["sources"])
    node = written["nodes"]["CHEBI:6801"]
    assert _canonical(node["attributes"]) == _canonical(kg["nodes"]["CHEBI:6801"]["attributes"])


def _canonical(items: list[Any]) -> list[bytes]:
    return sorted(orjson.dumps(item, option=orjson.OPT_SORT_KEYS) for item in items)


# -- 6. TRAPI output is valid ----------------------------------------------------------------


def test_trapi_output_types_untyped_nodes_and_keeps_real_sources() -> None:
    graph = {
        "nodes": [{"id": "X:1"}, {"id": "X:2", "category": "not a class!"}],
        "links": [
            {"source": "X:1", "target": "X:2", "label": "part of", "predicate": "RO:0000050"},
            {"source": "X:1", "target": "X:2", "label": "treats", "provenance": ["a", "b"],
             "primary_knowledge_source": "infores:ctd"},
        ],
    }  # fmt: skip
    kg = orjson.loads(write_graph(graph, "trapi"))
    assert_valid_trapi(kg)
    assert kg["nodes"]["X:1"]["categories"] == ["biolink:NamedThing"]
    first, merged = kg["edges"]["gw-link-0"], kg["edges"]["gw-link-1"]
    assert first["sources"] == [
        {"resource_id": "infores:unknown", "resource_role": "primary_knowledge_source"}
    ]
    assert merged["sources"] == [
        {"resource_id": "infores:ctd", "resource_role": "primary_knowledge_source"},
        {
            "resource_id": "infores:graphwright",
            "resource_role": "aggregator_knowledge_source",
            "upstream_resource_ids": ["infores:ctd"],
        },
    ]
    back = read_graph(write_graph(graph, "trapi"), "trapi")
    assert back["links"][0]["predicate"] == "RO:0000050"
    assert back["nodes"][1]["category"] == "not a class!"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs())
def test_every_trapi_output_passes_the_schema(graph: dict[str, Any]) -> None:
    assert_valid_trapi(orjson.loads(write_graph(graph, "trapi")))


def test_a_whole_trapi_response_around_our_output_validates() -> None:
    kg = orjson.loads(write_graph(SAMPLE, "trapi"))
    response = {"message": {"query_graph": None, "knowledge_graph": kg, "results": []}}
    Response.model_validate(response)


# -- 7. yEd labels and undirected GraphML ----------------------------------------------------


def test_yed_labels_become_names_and_link_labels() -> None:
    graph = read_graph((FIXTURES / "yed.graphml").read_text(), "graphml")
    assert graph["nodes"] == [
        {"id": "n0", "name": "TP53"},
        {"id": "n1", "description": "a disease", "name": "breast cancer"},
    ]
    assert graph["links"][0]["label"] == "associated with"


def test_an_undirected_graphml_graph_is_written_back_undirected() -> None:
    graph = read_graph((FIXTURES / "undirected.graphml").read_text(), "graphml")
    assert graph["directed"] is False
    text = write_graph(graph, "graphml")
    assert 'edgedefault="undirected"' in text
    assert not nx.read_graphml(io.BytesIO(text.encode())).is_directed()
    assert read_graph(text, "graphml") == load_graph(graph)


# -- 8. KGX JSON Lines -----------------------------------------------------------------------


def test_the_kgx_jsonl_nodes_file_holds_only_nodes() -> None:
    nodes, edges = write_graph_pair(SAMPLE, "kgx-jsonl")
    node_lines = [orjson.loads(line) for line in nodes.splitlines()]
    edge_lines = [orjson.loads(line) for line in edges.splitlines()]
    assert len(node_lines) == len(SAMPLE["nodes"])
    assert all("subject" not in line for line in node_lines)
    assert all({"subject", "predicate", "object"} <= line.keys() for line in edge_lines)


def test_kgx_tsv_output_follows_kgx_conventions() -> None:
    """What KGX's TSV source expects: tab-separated text, `id`/`category`/`name` and
    `id`/`subject`/`predicate`/`object` columns, Biolink CURIEs, lists joined with `|`."""
    folder = FIXTURES / "kgx_short_rows"
    graph = read_graph_pair(
        (folder / "nodes.tsv").read_text(), (folder / "edges.tsv").read_text(), "kgx-tsv"
    )
    nodes, edges = write_graph_pair(graph, "kgx-tsv")
    header = _rows(nodes)[0]
    node_rows = [dict(zip(header, row, strict=True)) for row in _rows(nodes)[1:]]
    assert header[:3] == ["id", "category", "name"]
    assert node_rows[0]["category"] == "biolink:Gene"
    assert node_rows[0]["chromosome"] == "17"
    edge_header = _rows(edges)[0]
    assert edge_header[:4] == ["id", "subject", "predicate", "object"]
    edge_rows = [dict(zip(edge_header, row, strict=True)) for row in _rows(edges)[1:]]
    assert edge_rows[0]["publications"] == "PMID:24403382|PMID:20520615"
    assert edge_rows[1]["qualifiers"] == "HP:0040280|HP:0012828"
    assert edge_rows[1]["has_count"] == "3"
    assert edge_rows[1]["category"] == "biolink:DiseaseToPhenotypicFeatureAssociation"
    assert not any(column.startswith("graphwright:") for column in header + edge_header)
    assert read_graph_pair(nodes, edges, "kgx-tsv") == graph


def _rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines()]
