"""Format conversion: exact round trips, each mapping rule, valid output, clear errors."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import networkx as nx
import orjson
import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphwright.core.formats import (
    FORMATS,
    PAIRED,
    READABLE,
    format_from_path,
    graphs_in_tool_result,
    pair_file_names,
    rdf,
    read_graph,
    read_graph_pair,
    read_graphs,
    write_graph,
    write_graph_pair,
)
from graphwright.core.graph import GraphFormatError, load_graph

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"

# -- graphs for property tests ---------------------------------------------------------------

PRINTABLE = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn"))
KEY = st.one_of(
    st.text(PRINTABLE, min_size=1, max_size=10),
    st.sampled_from(
        [
            "graphwright:x", "biolink:xref", "xref", "synonym", "description", "subject",
            "object", "predicate", "publications", "parent", "categories", "attributes",
            "EDAM:data_1", "in_taxon", "p|q", "same_as",
        ]
    ),
)  # fmt: skip
NODE_FIXED = {"id", "name", "category", "entityType"}
LINK_FIXED = {
    "source", "target", "label", "evidence", "id", "predicate", "primary_knowledge_source",
    "aggregator_knowledge_source", "sources", "qualifiers",
}  # fmt: skip
TEXT = st.text(max_size=8) | st.sampled_from(["123", "true", "null", '"q"', "[1]", "a|b", ""])
SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON_VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=5,
)
NODE_ID = st.one_of(
    st.sampled_from(["NCBIGene:7157", "MONDO:0005148", "CHEBI:15365", "HGNC:11998", "x", "123"]),
    st.text(PRINTABLE, min_size=1, max_size=10),
).filter(str.strip)
CATEGORY = st.one_of(
    st.sampled_from(
        ["Gene", "Disease", "small molecule", "biolink:Gene", "named_thing", "", None, 5, []]
    ),
    st.lists(st.sampled_from(["Gene", "biolink:Protein", "x"]), min_size=1, max_size=2),
    st.text(max_size=6),
)
LABEL = st.sampled_from(
    [
        "treats", "associated with", "biolink:treats", "Treats", "negatively_regulates",
        "RO:0002434", "", "x  y", "Related To", "related to",
    ]
) | st.text(max_size=8)  # fmt: skip
EVIDENCE_ITEM = st.one_of(
    st.sampled_from(["PMID:1", "pmid:2", "10.1000/x", "a|b", "", " 3", "https://x.org/a b"]),
    st.text(max_size=6),
    st.integers(0, 10**6),
    st.dictionaries(st.sampled_from(["pmid", "title"]), TEXT, max_size=2),
)
OPTIONAL_LINK_FIELDS = {
    "id": st.one_of(st.sampled_from(["e1", "e2", "gw-link-0", "gw-link-1", ""]), TEXT, SCALAR),
    "predicate": st.sampled_from(["biolink:treats", "RO:0002434", "treats", "biolink:x", 7]),
    "primary_knowledge_source": st.sampled_from(["infores:a", "", 3]),
    "aggregator_knowledge_source": st.one_of(
        st.lists(st.sampled_from(["infores:b", "infores:c"]), max_size=2),
        st.just("infores:b"),
    ),
    "sources": st.just(
        [
            {
                "resource_id": "infores:a",
                "resource_role": "primary_knowledge_source",
                "upstream_resource_ids": ["infores:b"],
            }
        ]
    ),
    "qualifiers": st.sampled_from(
        [
            [{"qualifier_type_id": "biolink:object_aspect_qualifier", "qualifier_value": "x"}],
            [],
            "x",
        ]
    ),
}


@st.composite
def graphs(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(NODE_ID, min_size=1, max_size=5, unique=True))
    nodes = []
    for node_id in ids:
        node: dict[str, Any] = {"id": node_id}
        if draw(st.booleans()):
            node["name"] = draw(st.one_of(st.text(max_size=8), st.none(), st.just(7)))
        if draw(st.booleans()):
            node["category"] = draw(CATEGORY)
        extras = draw(st.dictionaries(KEY.filter(lambda k: k not in NODE_FIXED), JSON_VALUE))
        nodes.append({**extras, **node})
    links = []
    for _ in range(draw(st.integers(0, 6))):
        link: dict[str, Any] = {
            "source": draw(st.sampled_from(ids)),
            "target": draw(st.sampled_from(ids)),
            "label": draw(LABEL),
            "evidence": draw(st.lists(EVIDENCE_ITEM, max_size=3)),
        }
        for field, strategy in OPTIONAL_LINK_FIELDS.items():
            if draw(st.integers(0, 3)) == 0:
                link[field] = draw(strategy)
        extras = draw(st.dictionaries(KEY.filter(lambda k: k not in LINK_FIXED), JSON_VALUE))
        links.append({**extras, **link})
    return {"nodes": nodes, "links": links}


RDF_FORMATS = ("jsonld", "ntriples")  # read back, but not exactly (docs/formats.md)
ROUND_TRIP = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("fmt", [f for f in READABLE if f not in RDF_FORMATS])
@ROUND_TRIP
@given(graph=graphs())
def test_round_trip_keeps_the_graph_exactly(fmt: str, graph: dict[str, Any]) -> None:
    assert read_graph(write_graph(graph, fmt), fmt) == round_tripped(graph, fmt)


def round_tripped(graph: dict[str, Any], fmt: str) -> dict[str, Any]:
    """`graph` as a round trip through `fmt` gives it back: exactly, but for the one change
    docs/formats.md names (TRAPI types a node without category as NamedThing)."""
    loaded = load_graph(graph)
    if fmt == "trapi":
        for node in loaded["nodes"]:
            if "category" not in node and "entityType" not in node:
                node["category"] = "NamedThing"
    return loaded


@pytest.mark.parametrize("fmt", PAIRED)
@ROUND_TRIP
@given(graph=graphs())
def test_kgx_pair_round_trip_keeps_the_graph_exactly(fmt: str, graph: dict[str, Any]) -> None:
    nodes, edges = write_graph_pair(graph, fmt)
    assert read_graph_pair(nodes, edges, fmt) == load_graph(graph)


@ROUND_TRIP
@given(graph=graphs())
def test_rdf_outputs_parse_and_agree(graph: dict[str, Any]) -> None:
    expected = rdf.triples(load_graph(graph))
    ntriples = list(
        ox.parse(write_graph(graph, "ntriples").encode(), format=ox.RdfFormat.N_TRIPLES)
    )
    jsonld = list(ox.parse(write_graph(graph, "jsonld").encode(), format=ox.RdfFormat.JSON_LD))
    assert len(ntriples) == len(expected)
    assert len(jsonld) == len(expected)
    assert _ground(jsonld) == _ground(ntriples) == _ground(expected)


def _ground(triples: list[Any]) -> set[tuple[str, str, str]]:
    """Triples without blank nodes, as text (parsers rename blank nodes)."""
    terms = [(t.subject, t.predicate, t.object) if hasattr(t, "subject") else t for t in triples]
    return {
        (str(s), str(p), str(o))
        for s, p, o in terms
        if not isinstance(s, ox.BlankNode) and not isinstance(o, ox.BlankNode)
    }


# -- a small graph for the mapping rules -----------------------------------------------------

TP53 = {"id": "NCBIGene:7157", "name": "TP53", "category": "Gene", "synonym": ["p53"]}
T2D = {"id": "MONDO:0005148", "name": "type 2 diabetes", "category": "Disease", "score": 0.5}
METFORMIN = {"id": "CHEBI:6801", "name": "metformin", "category": "Drug", "group": 2}
SAMPLE = {
    "nodes": [TP53, T2D, METFORMIN],
    "links": [
        {
            "source": "NCBIGene:7157",
            "target": "MONDO:0005148",
            "label": "associated with",
            "evidence": ["PMID:111", "PMID:222"],
            "primary_knowledge_source": "infores:ctd",
            "confidence": 0.9,
        },
        {
            "id": "treats-1",
            "source": "CHEBI:6801",
            "target": "MONDO:0005148",
            "label": "treats",
            "evidence": [],
        },
    ],
}


def test_trapi_maps_each_field() -> None:
    kg = orjson.loads(write_graph(SAMPLE, "trapi"))
    assert kg["nodes"]["NCBIGene:7157"] == {
        "name": "TP53",
        "categories": ["biolink:Gene"],
        "attributes": [{"attribute_type_id": "biolink:synonym", "value": ["p53"]}],
    }
    assert kg["nodes"]["MONDO:0005148"]["attributes"] == [
        {"attribute_type_id": "graphwright:score", "value": 0.5}
    ]
    assert kg["nodes"]["CHEBI:6801"]["categories"] == ["biolink:Drug"]
    first, second = kg["edges"]["gw-link-0"], kg["edges"]["treats-1"]
    assert first["predicate"] == "biolink:associated_with"
    assert first["sources"] == [
        {"resource_id": "infores:ctd", "resource_role": "primary_knowledge_source"}
    ]
    assert first["attributes"] == [
        {"attribute_type_id": "biolink:publications", "value": ["PMID:111", "PMID:222"]},
        {"attribute_type_id": "graphwright:confidence", "value": 0.9},
    ]
    assert second["predicate"] == "biolink:treats"
    assert second["sources"] == [
        {"resource_id": "infores:unknown", "resource_role": "primary_knowledge_source"}
    ]
    assert second["attributes"] == []


@pytest.mark.parametrize(
    ("link_fields", "predicate", "extra_attribute"),
    [
        ({"label": "treats"}, "biolink:treats", None),
        ({"label": "negatively regulates"}, "biolink:negatively_regulates", None),
        ({"label": "biolink:treats"}, "biolink:treats", ("graphwright:label", "biolink:treats")),
        ({"label": "Inhibits"}, "biolink:inhibits", ("graphwright:label", "Inhibits")),
        (
            {"label": "part of", "predicate": "RO:0000050"},
            "biolink:related_to",
            ("biolink:original_predicate", "RO:0000050", "graphwright:label", "part of"),
        ),
        (
            {"label": "treats", "predicate": "biolink:treats"},
            "biolink:treats",
            ("graphwright:predicate", "biolink:treats"),
        ),
    ],
)
def test_trapi_predicate_comes_from_the_label_and_keeps_both(
    link_fields: dict[str, Any], predicate: str, extra_attribute: tuple[str, str] | None
) -> None:
    graph = {
        "nodes": [{"id": "A:1"}, {"id": "B:2"}],
        "links": [{"source": "A:1", "target": "B:2", **link_fields}],
    }
    edge = orjson.loads(write_graph(graph, "trapi"))["edges"]["gw-link-0"]
    assert edge["predicate"] == predicate
    pairs = (
        list(zip(extra_attribute[::2], extra_attribute[1::2], strict=True))
        if extra_attribute
        else []
    )
    expected = [{"attribute_type_id": type_id, "value": value} for type_id, value in pairs]
    assert edge["attributes"] == expected
    assert read_graph(write_graph(graph, "trapi"), "trapi") == round_tripped(graph, "trapi")


def test_trapi_reads_a_translator_response() -> None:
    response = (FIXTURES / "trapi_response.json").read_bytes()
    graph = read_graphs(response, name="answer.json")[0]
    nodes = {node["id"]: node for node in graph["nodes"]}
    assert nodes["NCBIGene:3630"] == {
        "id": "NCBIGene:3630",
        "name": "INS",
        "category": ["Gene", "GeneOrGeneProduct"],
        "symbol": "INS",
        "xref": ["HGNC:6081", "ENSEMBL:ENSG00000254647"],
    }
    assert nodes["MONDO:0005148"]["category"] == "Disease"
    assert nodes["MONDO:0005148"]["attributes"] == [
        {
            "attribute_type_id": "EDAM:data_2091",
            "value": "accession",
            "original_attribute_name": "id_type",
        }
    ]
    [simple, rich] = graph["links"]
    assert simple == {
        "id": "e01",
        "source": "NCBIGene:3630",
        "target": "MONDO:0005148",
        "label": "gene associated with condition",
        "evidence": ["PMID:15161920", "PMID:1234567"],
        "primary_knowledge_source": "infores:ctd",
        "aggregator_knowledge_source": ["infores:automat-ctd"],
        "attributes": [
            {
                "attribute_type_id": "biolink:p_value",
                "value": 0.001,
                "value_type_id": "EDAM:data_1669",
            }
        ],
    }
    # Sources a KGX-style field cannot hold (upstream ids) stay as TRAPI wrote them.
    assert rich["sources"][1]["upstream_resource_ids"] == ["infores:semmeddb"]
    assert rich["qualifiers"][0]["qualifier_value"] == "activity"
    assert rich["label"] == "affects"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda e: e.pop("subject"), "TRAPI edge 'e01' has no subject"),
        (lambda e: e.update(object="MONDO:404"), "has object 'MONDO:404', which is not a node"),
        (lambda e: e.pop("predicate"), "TRAPI edge 'e01' has no predicate"),
        (lambda e: e.update(attributes=[{"value": 1}]), "attribute 0 has no attribute_type_id"),
    ],
)
def test_trapi_bad_edges_are_named(edit: Any, message: str) -> None:
    response = orjson.loads((FIXTURES / "trapi_response.json").read_bytes())
    edit(response["message"]["knowledge_graph"]["edges"]["e01"])
    with pytest.raises(GraphFormatError, match=message):
        read_graph(orjson.dumps(response), "trapi")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"message": {"knowledge_graph": None}}, "no knowledge_graph"),
        ({"nodes": 5}, "not a TRAPI knowledge_graph"),
        ({"nodes": {"A:1": {}}, "edges": 3}, "'edges' must be an object"),
    ],
)
def test_trapi_documents_that_are_not_graphs(document: Any, message: str) -> None:
    with pytest.raises(GraphFormatError, match=message):
        read_graph(orjson.dumps(document), "trapi")


def test_kgx_jsonl_stream_is_the_two_files_concatenated() -> None:
    nodes, edges = write_graph_pair(SAMPLE, "kgx-jsonl")
    assert write_graph(SAMPLE, "kgx-jsonl") == nodes + edges
    node_lines = [orjson.loads(line) for line in nodes.splitlines()]
    edge_lines = [orjson.loads(line) for line in edges.splitlines()]
    assert node_lines[0] == {
        "id": "NCBIGene:7157",
        "category": ["biolink:Gene"],
        "name": "TP53",
        "synonym": ["p53"],
    }
    assert edge_lines[0] == {
        "id": "gw-link-0",
        "subject": "NCBIGene:7157",
        "predicate": "biolink:associated_with",
        "object": "MONDO:0005148",
        "publications": ["PMID:111", "PMID:222"],
        "primary_knowledge_source": "infores:ctd",
        "confidence": 0.9,
    }


def test_kgx_node_properties_named_like_edge_fields_keep_the_stream_readable() -> None:
    graph = {"nodes": [{"id": "A:1", "subject": "math", "object": "pen"}], "links": []}
    stream = write_graph(graph, "kgx-jsonl")
    assert orjson.loads(stream) == {
        "id": "A:1",
        "graphwright:subject": "math",
        "graphwright:object": "pen",
    }
    assert read_graph(stream, "kgx-jsonl") == load_graph(graph)


def test_kgx_tsv_joins_multivalued_fields_and_encodes_the_rest() -> None:
    nodes, edges = write_graph_pair(SAMPLE, "kgx-tsv")
    node_rows = [line.split("\t") for line in nodes.splitlines()]
    header = node_rows[0]
    assert header[:3] == ["id", "category", "name"]
    tp53 = dict(zip(header, node_rows[1], strict=True))
    assert tp53["category"] == "biolink:Gene"
    assert tp53["synonym"] == "p53"
    edge_rows = [line.split("\t") for line in edges.splitlines()]
    first = dict(zip(edge_rows[0], edge_rows[1], strict=True))
    assert first["publications"] == "PMID:111|PMID:222"
    # 0.9 is not text and `confidence` is no numeric Biolink slot: KGX would read "0.9" as
    # text, so the number goes to a JSON column that graphwright reads back as a number.
    assert first["graphwright:json:confidence"] == "0.9"
    assert "confidence" not in first


def test_kgx_tsv_archive_holds_the_two_files_and_reads_compressed() -> None:
    archive = write_graph(SAMPLE, "kgx-tsv")
    assert isinstance(archive, bytes)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        assert tar.getnames() == ["nodes.tsv", "edges.tsv"]
    assert read_graph(gzip.compress(archive), "kgx-tsv") == load_graph(SAMPLE)


def test_kgx_tsv_reads_files_written_by_other_tools() -> None:
    nodes = (FIXTURES / "kgx_nodes.tsv").read_text()
    edges = (FIXTURES / "kgx_edges.tsv").read_text()
    graph = read_graph_pair(nodes, edges, "kgx-tsv")
    assert graph["nodes"][0] == {
        "id": "CHEBI:6801",
        "category": ["SmallMolecule", "ChemicalEntity"],
        "name": "metformin",
        "xref": ["DRUGBANK:DB00331"],
        "provided_by": ["infores:chebi"],
    }
    assert graph["links"][0] == {
        "id": "urn:uuid:6f1c2d1e",
        "source": "CHEBI:6801",
        "target": "MONDO:0005148",
        "label": "treats",
        "evidence": ["PMID:1", "PMID:2"],
        "primary_knowledge_source": "infores:drugcentral",
        "knowledge_level": "knowledge_assertion",
    }


@pytest.mark.parametrize(
    ("nodes", "edges", "message"),
    [
        ("name\nx\n", "subject\tpredicate\tobject\n", "nodes.tsv has no 'id' column"),
        ("id\nA:1\n", "subject\tobject\nA:1\tA:1\n", "edges.tsv has no 'predicate' column"),
        ("id\tname\nA:1\tx\ty\n", "subject\tpredicate\tobject\n", "nodes.tsv line 2: 3 cells"),
        ("\nA:1\n", "subject\tpredicate\tobject\n", "nodes.tsv has no header line"),
        (
            "id\nA:1\n",
            "subject\tpredicate\tobject\nA:1\tbiolink:x\tB:9\n",
            "link 0 points to missing node 'B:9'",
        ),
    ],
)
def test_kgx_tsv_bad_files_are_named(nodes: str, edges: str, message: str) -> None:
    with pytest.raises(GraphFormatError, match=message):
        read_graph_pair(nodes, edges, "kgx-tsv", strict=True)


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        (
            '{"id": "A:1"}\n{"id": "e", "subject": "A:1", "object": "A:1"}\n',
            "edge 'e' has no predicate",
        ),
        ('{"id": "A:1"}\n{oops\n', "kgx-jsonl line 2: invalid JSON"),
        ('{"name": "no id"}\n', "kgx-jsonl line 1: node has no id"),
        ("[1, 2]\n", "kgx-jsonl line 1: expected a JSON object"),
    ],
)
def test_kgx_jsonl_bad_lines_are_named(stream: str, message: str) -> None:
    with pytest.raises(GraphFormatError, match=message):
        read_graph(stream, "kgx-jsonl")


def test_kgx_tsv_single_stream_must_be_a_tar() -> None:
    with pytest.raises(GraphFormatError, match=r"tar archive holding nodes\.tsv and edges\.tsv"):
        read_graph("id\tname\n", "kgx-tsv")


def test_graphml_types_values_and_marks_json_keys() -> None:
    text = write_graph({**SAMPLE, "title": "sample"}, "graphml")
    assert isinstance(text, str)
    read_back = nx.read_graphml(io.BytesIO(text.encode()))
    assert read_back.nodes["MONDO:0005148"]["score"] == 0.5
    assert read_back.nodes["NCBIGene:7157"]["synonym"] == '["p53"]'
    assert read_back.graph["title"] == "sample"
    assert "<desc>graphwright:json</desc>" in text
    assert read_graph(text, "graphml") == load_graph({**SAMPLE, "title": "sample"})


def test_graphml_reads_networkx_output() -> None:
    graph = nx.MultiDiGraph()
    graph.add_node("A:1", name="alpha", weight=3)
    graph.add_node("B:2", name="beta", flag=True)
    graph.add_edge("A:1", "B:2", label="binds", score=0.25)
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)
    read_back = read_graph(buffer.getvalue(), "graphml")
    assert read_back["nodes"] == [
        {"id": "A:1", "name": "alpha", "weight": 3},
        {"id": "B:2", "name": "beta", "flag": True},
    ]
    [link] = read_back["links"]
    assert (link["label"], link["score"], link["evidence"]) == ("binds", 0.25, [])


def test_graphml_does_not_resolve_external_entities(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    document = f"""<?xml version="1.0"?>
<!DOCTYPE graphml [<!ENTITY leak SYSTEM "file://{secret}">]>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="n0" for="node" attr.name="name" attr.type="string"/>
  <graph edgedefault="directed"><node id="A"><data key="n0">&leak;</data></node></graph>
</graphml>"""
    graph = read_graph(document, "graphml")
    assert "top secret" not in json.dumps(graph)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("<graphml", "invalid GraphML"),
        ("<svg/>", "the root element is not <graphml>"),
        ('<graphml xmlns="http://graphml.graphdrawing.org/xmlns"/>', "no <graph> element"),
        (
            '<graphml><graph><node id="A"/><edge source="A"/></graph></graphml>',
            "<edge> has no target",
        ),
        (
            '<graphml><key id="k" for="node" attr.name="n" attr.type="long"/>'
            '<graph><node id="A"><data key="k">many</data></node></graph></graphml>',
            "'many' of 'n' is not long",
        ),
    ],
)
def test_graphml_bad_documents_are_named(document: str, message: str) -> None:
    with pytest.raises(GraphFormatError, match=message):
        read_graph(document, "graphml")


def test_cytoscape_elements_are_valid_and_escape_reserved_names() -> None:
    graph = {
        "nodes": [{"id": "A:1", "name": "a", "parent": "B:2"}, {"id": "B:2"}],
        "links": [
            {"source": "A:1", "target": "B:2", "label": "part of", "evidence": ["PMID:1"]},
            {"source": "B:2", "target": "A:1", "label": "has part", "id": 5},
        ],
    }
    document = orjson.loads(write_graph(graph, "cytoscape"))
    nodes = [element["data"] for element in document["elements"]["nodes"]]
    edges = [element["data"] for element in document["elements"]["edges"]]
    assert nodes[0] == {"id": "A:1", "name": "a", "graphwright:parent": "B:2"}
    assert edges[0] == {
        "id": "gw-link-0",
        "source": "A:1",
        "target": "B:2",
        "label": "part of",
        "evidence": ["PMID:1"],
    }
    assert edges[1]["graphwright:id"] == 5
    ids = [item["id"] for item in nodes + edges]
    assert len(ids) == len(set(ids))


def test_ntriples_reify_links_so_evidence_hangs_on_them() -> None:
    text = write_graph(SAMPLE, "ntriples")
    store = ox.Store()
    store.load(text.encode(), format=ox.RdfFormat.N_TRIPLES)
    rows = list(
        store.query(
            """
            PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
            PREFIX biolink: <https://w3id.org/biolink/vocab/>
            SELECT ?s ?p ?o ?pub WHERE {
              ?st a rdf:Statement ; rdf:subject ?s ; rdf:predicate ?p ; rdf:object ?o ;
                  biolink:publications ?pub .
              ?s ?p ?o .
            } ORDER BY ?pub
            """
        )
    )
    assert [(r["s"].value, r["p"].value, r["o"].value, r["pub"].value) for r in rows] == [
        (
            "http://identifiers.org/ncbigene/7157",
            "https://w3id.org/biolink/vocab/associated_with",
            "http://purl.obolibrary.org/obo/MONDO_0005148",
            f"http://www.ncbi.nlm.nih.gov/pubmed/{pmid}",
        )
        for pmid in (111, 222)
    ]
    assert len(store) == len(rdf.triples(load_graph(SAMPLE)))


def test_jsonld_has_a_context_and_compact_terms() -> None:
    document = orjson.loads(write_graph(SAMPLE, "jsonld"))
    assert document["@context"]["biolink"] == "https://w3id.org/biolink/vocab/"
    tp53 = document["@graph"][0]
    assert tp53["@id"] == "http://identifiers.org/ncbigene/7157"
    assert tp53["@type"] == "biolink:Gene"
    assert tp53["rdfs:label"] == "TP53"
    assert tp53["biolink:associated_with"] == {
        "@id": "http://purl.obolibrary.org/obo/MONDO_0005148"
    }


@pytest.mark.parametrize(
    ("identifier", "iri"),
    [
        ("MONDO:0005148", "http://purl.obolibrary.org/obo/MONDO_0005148"),
        ("NCBIGene:7157", "http://identifiers.org/ncbigene/7157"),
        ("ncbigene:7157", "http://identifiers.org/ncbigene/7157"),
        ("myLab:1", "https://bioregistry.io/myLab:1"),
        ("biolink:Gene", "https://w3id.org/biolink/vocab/Gene"),
        ("https://example.org/a", "https://example.org/a"),
        ("my node", "https://w3id.org/graphwright/node/my%20node"),
    ],
)
def test_node_iris(identifier: str, iri: str) -> None:
    assert rdf.iri_for(identifier) == iri


# -- what round trips normalise (documented in docs/formats.md) ------------------------------


def test_a_link_without_label_reads_back_with_the_predicates_label() -> None:
    graph = {"nodes": [{"id": "A:1"}], "links": [{"source": "A:1", "target": "A:1"}]}
    for fmt in ("trapi", "kgx-jsonl", "kgx-tsv"):
        assert read_graph(write_graph(graph, fmt), fmt)["links"][0]["label"] == "related to"


def test_an_entity_type_only_node_gains_a_category_in_biolink_formats() -> None:
    graph = {"nodes": [{"id": "A:1", "entityType": "Gene"}], "links": []}
    for fmt in ("trapi", "kgx-jsonl", "kgx-tsv"):
        node = read_graph(write_graph(graph, fmt), fmt)["nodes"][0]
        assert node == {"id": "A:1", "entityType": "Gene", "category": "Gene"}


def test_a_simple_sources_list_reads_back_as_source_fields() -> None:
    sources = [{"resource_id": "infores:a", "resource_role": "primary_knowledge_source"}]
    graph = {
        "nodes": [{"id": "A:1"}],
        "links": [{"source": "A:1", "target": "A:1", "label": "x", "sources": sources}],
    }
    link = read_graph(write_graph(graph, "trapi"), "trapi")["links"][0]
    assert link["primary_knowledge_source"] == "infores:a"
    assert "sources" not in link


# -- the registry ----------------------------------------------------------------------------


def test_format_names() -> None:
    assert list(FORMATS) == [
        "json", "trapi", "kgx-jsonl", "kgx-json", "kgx-tsv", "cytoscape", "cx2", "graphml",
        "jsonld", "ntriples",
    ]  # fmt: skip
    assert tuple(FORMATS) == READABLE
    assert pair_file_names("kgx-tsv") == ("nodes.tsv", "edges.tsv")


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("g.json", "json"),
        ("G.JSON", "json"),
        ("answer.trapi.json", "trapi"),
        ("g.jsonl", "kgx-jsonl"),
        ("g.tar.gz", "kgx-tsv"),
        ("g_nodes.tsv", "kgx-tsv"),
        ("g.cyjs", "cytoscape"),
        ("g.cy.json", "cytoscape"),
        ("g.cx2", "cx2"),
        ("dir/g.graphml", "graphml"),
        ("g.jsonld", "jsonld"),
        ("g.nt", "ntriples"),
    ],
)
def test_format_from_path(name: str, fmt: str) -> None:
    assert format_from_path(name) == fmt


def test_errors_name_the_problem() -> None:
    with pytest.raises(GraphFormatError, match="unknown format 'foo'; choose one of: json, trapi"):
        write_graph(SAMPLE, "foo")
    with pytest.raises(GraphFormatError, match="Cytoscape JSON needs `elements`"):
        read_graph("{}", "cytoscape")
    with pytest.raises(GraphFormatError, match="not valid Turtle"):
        read_graph("<a> <b> .", "ntriples")
    with pytest.raises(GraphFormatError, match=r"cannot tell the format of 'g\.xyz'"):
        format_from_path("g.xyz")
    with pytest.raises(GraphFormatError, match="graphml is a single file"):
        write_graph_pair(SAMPLE, "graphml")
    twice = {"nodes": [{"id": "A:1"}, {"id": "A:1"}], "links": []}
    with pytest.raises(GraphFormatError, match="node id 'A:1' appears twice"):
        write_graph(twice, "trapi")


# -- documents: tool results and sniffing ----------------------------------------------------


def test_tool_result_artifacts_with_text_or_object_content() -> None:
    result = {
        "content": [{"type": "text", "text": "found 2 genes"}],
        "artifacts": [
            {"type": "application/vnd.bibliography", "content": "[]"},
            {"type": "application/vnd.knowledge-graph", "content": orjson.dumps(SAMPLE).decode()},
            {"mediaType": "application/vnd.knowledge-graph", "content": SAMPLE},
        ],
        "isError": False,
    }
    assert graphs_in_tool_result(result) == [load_graph(SAMPLE), load_graph(SAMPLE)]
    assert read_graphs(orjson.dumps(result), name="result.json") == [
        load_graph(SAMPLE),
        load_graph(SAMPLE),
    ]


def test_tool_result_problems_are_named() -> None:
    broken = {"artifacts": [{"type": "application/vnd.knowledge-graph", "content": "{"}]}
    with pytest.raises(GraphFormatError, match="knowledge-graph artifact 0: invalid JSON"):
        graphs_in_tool_result(broken)
    none = {"artifacts": [{"type": "text/markdown", "content": "# hi"}]}
    with pytest.raises(GraphFormatError, match=r"holds no application/vnd\.knowledge-graph"):
        read_graphs(orjson.dumps(none), name="r.json")


def test_json_documents_are_recognised_by_shape() -> None:
    kg = write_graph(SAMPLE, "trapi")
    assert read_graphs(kg, name="plain.json") == [load_graph(SAMPLE)]
    assert read_graphs(write_graph(SAMPLE, "json"), name="g.json") == [load_graph(SAMPLE)]
    with pytest.raises(GraphFormatError, match="graph has 'edges', not 'links'"):
        read_graphs(kg, "json", name="plain.json")


@pytest.mark.parametrize("fmt", RDF_FORMATS)
def test_rdf_reads_back_ids_names_categories_labels_evidence_and_properties(fmt: str) -> None:
    graph = {
        "nodes": [
            {"id": "NCBIGene:7157", "name": "TP53", "category": "Gene", "evidence": ["PMID:1"],
             "score": 1.5, "tags": ["a", "b"]},
            {"id": "MONDO:0005070", "name": "tumor", "category": ["Disease", "NamedThing"]},
            {"id": "plain id"},
        ],
        "links": [
            {"source": "NCBIGene:7157", "target": "MONDO:0005070", "label": "related to",
             "evidence": ["PMID:1", "https://example.org/a"], "weight": {"k": 1}},
            {"source": "plain id", "target": "NCBIGene:7157", "label": "interacts_with",
             "evidence": []},
        ],
    }  # fmt: skip
    assert read_graph(write_graph(graph, fmt), fmt) == load_graph(graph)


def test_rdf_from_elsewhere_reads_plain_triples_as_links() -> None:
    turtle = (
        "@prefix ex: <http://example.org/> .\n"
        'ex:a ex:knows ex:b ; <http://www.w3.org/2000/01/rdf-schema#label> "A" .\n'
    )
    graph = read_graph(turtle, "ntriples")
    assert [n["id"] for n in graph["nodes"]] == ["http://example.org/a", "http://example.org/b"]
    assert graph["nodes"][0]["name"] == "A"
    assert [(link["source"], link["target"]) for link in graph["links"]] == [
        ("http://example.org/a", "http://example.org/b")
    ]
