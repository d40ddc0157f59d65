"""GraphAccumulator and load_graph: one test per merge rule (docs/merge.md)."""

from __future__ import annotations

import copy
import json

import orjson
import pytest

from graphwright.core import merge_values
from graphwright.core.graph import GraphFormatError, load_graph
from graphwright.core.merge import GraphAccumulator
from graphwright.errors import InvalidInput


def node(node_id: str, **fields: object) -> dict:
    return {"id": node_id, **fields}


def link(source: str, target: str, label: str = "related_to", evidence=(), **fields) -> dict:
    return {
        "source": source,
        "target": target,
        "label": label,
        "evidence": list(evidence),
        **fields,
    }


def graph(nodes: list[dict], links: list[dict] | None = None) -> dict:
    return {"nodes": nodes, "links": links or []}


def merged(*graphs: dict, **options: bool) -> dict:
    accumulator = GraphAccumulator(**options)
    for item in graphs:
        accumulator.add(item)
    return accumulator.to_graph()


def ids(result: dict) -> list[str]:
    return [item["id"] for item in result["nodes"]]


# -- load_graph ----------------------------------------------------------------------------------


def test_load_graph_accepts_a_json_string_bytes_or_an_object() -> None:
    data = graph([node("A"), node("B")], [link("A", "B")])
    for content in (data, json.dumps(data), orjson.dumps(data)):
        assert load_graph(content) == data


def test_load_graph_defaults_missing_links_and_evidence_and_keeps_the_input() -> None:
    data = {"nodes": [node("A")], "title": "kept"}
    assert load_graph(data) == {"nodes": [node("A")], "links": [], "title": "kept"}
    data = graph([node("A"), node("B")], [{"source": "A", "target": "B", "label": "x"}])
    before = copy.deepcopy(data)
    loaded = load_graph(data)
    assert loaded["links"][0]["evidence"] == []
    assert data == before
    loaded["nodes"][0]["name"] = "changed"
    assert "name" not in data["nodes"][0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"nodes": [', "invalid JSON at line 1 column"),
        ("[1, 2]", "a graph must be a JSON object, got a list"),
        ("{}", "graph has no 'nodes' list"),
        ('{"nodes": [], "edges": []}', "graph has 'edges', not 'links'"),
        ('{"nodes": {}}', "'nodes' must be a list"),
        ('{"nodes": [{"name": "x"}]}', "node 0 has no 'id'"),
        ('{"nodes": [{"id": 7}]}', "node 0 has 'id' 7"),
        ('{"nodes": [{"id": "A"}], "links": [{"source": "A"}]}', "link 0 has no 'target'"),
        (
            '{"nodes": [{"id": "A"}], "links": [{"source": "A", "target": "A"}, '
            '{"source": "A", "target": "A"}, {"source": "A", "target": "A"}, '
            '{"source": "A", "target": "X"}]}',
            "link 3 points to missing node 'X'",
        ),
    ],
)
def test_load_graph_names_the_problem(content: str, message: str) -> None:
    with pytest.raises(GraphFormatError, match=message.replace("(", r"\(")) as caught:
        load_graph(content)
    assert isinstance(caught.value, InvalidInput)


def test_links_may_name_nodes_by_an_unnormalised_spelling() -> None:
    loaded = load_graph(graph([node("NCBIGene:7157"), node("B")], [link("ncbigene:7157", "B")]))
    assert loaded["links"][0]["source"] == "ncbigene:7157"


# -- identifiers ---------------------------------------------------------------------------------


def test_prefix_case_and_whitespace_make_one_node() -> None:
    result = merged(
        graph([node("NCBIGene:7157", name="TP53")]),
        graph([node(" ncbigene:7157", name="TP53")]),
    )
    assert ids(result) == ["NCBIGene:7157"]


def test_declared_equivalents_merge_under_the_priority_leader() -> None:
    result = merged(
        graph([node("HGNC:11998", name="TP53", equivalent_ids=["NCBIGene:7157"])]),
        graph([node("NCBIGene:7157", name="TP53")]),
        graph([node("ENSEMBL:ENSG00000141510", same_as="hgnc:11998")]),
        graph([node("UniProtKB:P04637", equivalent_ids=["ENSEMBL:ENSG00000141510"])]),
    )
    assert ids(result) == ["NCBIGene:7157"]
    assert result["nodes"][0]["equivalent_ids"] == [
        "NCBIGene:7157",
        "ENSEMBL:ENSG00000141510",
        "HGNC:11998",
        "UniProtKB:P04637",
    ]


def test_links_are_repointed_to_the_leader() -> None:
    result = merged(
        graph(
            [node("HGNC:11998", equivalent_ids=["NCBIGene:7157"]), node("MONDO:0007254")],
            [link("HGNC:11998", "MONDO:0007254", "associated_with")],
        )
    )
    assert [(item["source"], item["target"]) for item in result["links"]] == [
        ("NCBIGene:7157", "MONDO:0007254")
    ]


def test_a_late_equivalence_unifies_earlier_nodes_and_merges_their_links() -> None:
    accumulator = GraphAccumulator()
    accumulator.add(
        graph(
            [node("HGNC:6973", name="MDM2"), node("X")],
            [link("HGNC:6973", "X", "binds", ["PMID:1"])],
        ),
        "r1",
    )
    accumulator.add(
        graph(
            [node("NCBIGene:4193", name="MDM2"), node("X")],
            [link("NCBIGene:4193", "X", "binds", ["PMID:2"])],
        ),
        "r2",
    )
    accumulator.add(graph([node("Y"), node("HGNC:6973")], [link("Y", "HGNC:6973", "binds")]), "r3")
    assert (accumulator.node_count, accumulator.link_count) == (4, 3)
    accumulator.add(graph([node("NCBIGene:4193", equivalent_ids=["HGNC:6973"])]), "r4")
    result = accumulator.to_graph()
    assert ids(result) == ["NCBIGene:4193", "X", "Y"]
    assert sorted(result["nodes"][0]["provenance"]) == ["r1", "r2", "r3", "r4"]
    assert [(item["source"], item["target"], item["evidence"], item["provenance"])
            for item in result["links"]] == [
        # the link of the first-seen node absorbs the re-pointed one; provenance in add order
        ("NCBIGene:4193", "X", ["PMID:1", "PMID:2"], ["r1", "r2"]),
        ("Y", "NCBIGene:4193", [], ["r3"]),
    ]  # fmt: skip
    assert (accumulator.node_count, accumulator.link_count) == (3, 2)


# -- node properties -----------------------------------------------------------------------------


def test_first_non_empty_scalar_wins_and_conflicts_are_recorded() -> None:
    result = merged(
        graph([node("A", name="", description="first", group=1)]),
        graph([node("A", name="alpha", description="second", group=1)]),
        graph([node(" A ", name="alpha", description="third")]),
    )
    [only] = result["nodes"]
    assert only["name"] == "alpha"
    assert only["description"] == "first"
    assert only["conflicts"] == {"description": ["first", "second", "third"]}
    assert "group" not in only["conflicts"]


def test_conflicts_given_as_text_give_way_to_the_recorded_conflicts() -> None:
    # an input's `conflicts` that is not the merge's {field: [values]} (here text) is not a
    # record of conflicts: the merge starts its own, as it does for a link
    result = merged(
        graph([node("A", name="TP53", conflicts="see the curators' notes")]),
        graph([node("A", name="p53")]),
        graph([node("A", name="tumor protein", conflicts={"name": ["TP53", "LFS1"]})]),
    )
    [only] = result["nodes"]
    assert only["name"] == "TP53"
    assert only["conflicts"] == {"name": ["TP53", "p53", "tumor protein", "LFS1"]}


def test_a_conflict_given_as_one_value_is_kept_after_the_kept_value() -> None:
    # {"name": "LFS1"} reads as {"name": ["LFS1"]}, whichever side holds it
    result = merged(
        graph([node("A", name="TP53", conflicts={"name": "LFS1"})]),
        graph([node("A", name="p53")]),
    )
    [only] = result["nodes"]
    assert only["conflicts"] == {"name": ["TP53", "LFS1", "p53"]}


def test_lists_are_unioned_in_order() -> None:
    result = merged(
        graph([node("A", synonyms=["p53", "TP53"], refs=[{"a": 1, "b": 2}])]),
        graph([node("A", synonyms=["TP53", "LFS1"], refs=[{"b": 2, "a": 1}, {"c": 3}])]),
        graph([node("A", synonyms="cellular tumor antigen p53")]),
    )
    [only] = result["nodes"]
    assert only["synonyms"] == ["p53", "TP53", "LFS1", "cellular tumor antigen p53"]
    assert only["refs"] == [{"a": 1, "b": 2}, {"c": 3}]


def test_category_and_entity_type_are_kept_as_given() -> None:
    result = merged(
        graph([node("A", entityType="Gene")]),
        graph([node("A", category=["biolink:Gene"])]),
    )
    [only] = result["nodes"]
    assert only["entityType"] == "Gene"
    assert only["category"] == ["biolink:Gene"]
    assert "conflicts" not in only


# -- links ---------------------------------------------------------------------------------------


def test_links_deduplicate_by_source_label_target_after_normalisation() -> None:
    nodes = [node("NCBIGene:7157"), node("MONDO:0007254")]
    result = merged(
        graph(nodes, [link("NCBIGene:7157", "MONDO:0007254", "associated_with")]),
        graph(
            [node("ncbigene:7157"), node("MONDO:0007254")],
            [
                link("ncbigene:7157", "MONDO:0007254", "associated_with"),
                link("ncbigene:7157", "MONDO:0007254", "treats"),
                link("MONDO:0007254", "ncbigene:7157", "associated_with"),
            ],
        ),
    )
    assert [(item["source"], item["label"], item["target"]) for item in result["links"]] == [
        ("NCBIGene:7157", "associated_with", "MONDO:0007254"),
        ("NCBIGene:7157", "treats", "MONDO:0007254"),
        ("MONDO:0007254", "associated_with", "NCBIGene:7157"),
    ]


def test_key_by_source_keeps_links_from_different_primary_sources_apart() -> None:
    nodes = [node("A"), node("B")]
    semmed = link("A", "B", "treats", primary_knowledge_source="infores:semmeddb")
    ctd = link(
        "A",
        "B",
        "treats",
        sources=[
            {"resource_id": "infores:aggregator", "resource_role": "aggregator_knowledge_source"},
            {"resource_id": "infores:ctd", "resource_role": "primary_knowledge_source"},
        ],
    )
    semmed_again = link("A", "B", "treats", primary_knowledge_source="infores:semmeddb")
    assert len(merged(graph(nodes, [semmed, ctd, semmed_again]))["links"]) == 1
    by_source = merged(graph(nodes, [semmed, ctd, semmed_again]), key_by_source=True)
    assert len(by_source["links"]) == 2


def test_differing_link_fields_are_kept_as_conflicts() -> None:
    nodes = [node("A"), node("B")]
    result = merged(
        graph(nodes, [link("A", "B", score=0.5)]), graph(nodes, [link("A", "B", score=0.7)])
    )
    assert result["links"][0]["score"] == 0.5
    assert result["links"][0]["conflicts"] == {"score": [0.5, 0.7]}


# -- evidence ------------------------------------------------------------------------------------


def test_evidence_is_unioned_when_only_one_side_has_any() -> None:
    nodes = [node("A"), node("B")]
    without = {"source": "A", "target": "B", "label": "x"}
    result = merged(graph(nodes, [without]), graph(nodes, [link("A", "B", "x", ["PMID:1"])]))
    assert result["links"][0]["evidence"] == ["PMID:1"]


def test_pmid_spellings_are_one_evidence_item() -> None:
    nodes = [node("A"), node("B")]
    result = merged(
        graph(nodes, [link("A", "B", "x", ["PMID:123", "pmid:123", " PMID: 123"])]),
        graph(nodes, [link("A", "B", "x", ["https://pubmed.ncbi.nlm.nih.gov/123/", "PMID:4"])]),
        graph(nodes, [link("A", "B", "x", [{"kind": "note", "text": "t"}, "free text "])]),
        graph(nodes, [link("A", "B", "x", [{"text": "t", "kind": "note"}, "free text"])]),
    )
    assert result["links"][0]["evidence"] == [
        "PMID:123",
        "PMID:4",
        {"kind": "note", "text": "t"},
        "free text",
    ]


def test_bare_digits_count_as_pmids_in_publication_fields() -> None:
    nodes = [node("A"), node("B")]
    result = merged(
        graph(nodes, [link("A", "B", "x", publications=["123", 456])]),
        graph(nodes, [link("A", "B", "x", publications=["PMID:123", "pmid:789"])]),
    )
    assert result["links"][0]["publications"] == ["PMID:123", "PMID:456", "PMID:789"]


# -- inputs, order, provenance, output -------------------------------------------------------------


def test_inputs_are_never_modified() -> None:
    first = graph(
        [node("ncbigene:7157", synonyms=["p53"]), node("B")],
        [link("ncbigene:7157", "B", "x", ["pmid:1"], extra=["a"])],
    )
    second = graph(
        [node("HGNC:11998", equivalent_ids=["NCBIGene:7157"], synonyms=["TP53"]), node("B")],
        [link("HGNC:11998", "B", "x", ["PMID:2"], extra=["b"])],
    )
    before = copy.deepcopy([first, second])
    accumulator = GraphAccumulator()
    accumulator.add(first)
    accumulator.add(second)
    accumulator.add(first)
    assert [first, second] == before


def test_output_is_first_seen_order_with_provenance() -> None:
    accumulator = GraphAccumulator()
    accumulator.add(graph([node("B"), node("A")], [link("B", "A")]))
    accumulator.add(
        graph([node("C"), node("A"), node("B")], [link("C", "A"), link("B", "A")]), "call-7"
    )
    result = accumulator.to_graph()
    assert ids(result) == ["B", "A", "C"]
    assert [item["provenance"] for item in result["nodes"]] == [
        ["result-1", "call-7"],
        ["result-1", "call-7"],
        ["call-7"],
    ]
    assert [item["provenance"] for item in result["links"]] == [["result-1", "call-7"], ["call-7"]]


def test_to_graph_is_a_fresh_copy_and_to_json_matches_it() -> None:
    accumulator = GraphAccumulator()
    accumulator.add(graph([node("A", tags=["x"]), node("B")], [link("A", "B", "x", ["PMID:1"])]))
    first = accumulator.to_graph()
    assert orjson.loads(accumulator.to_json()) == first
    first["nodes"][0]["tags"].append("changed")
    first["links"][0]["evidence"].append("changed")
    first["nodes"].clear()
    assert accumulator.to_graph()["nodes"][0]["tags"] == ["x"]
    assert accumulator.to_graph()["links"][0]["evidence"] == ["PMID:1"]


def test_content_as_a_json_string_is_merged_too() -> None:
    accumulator = GraphAccumulator()
    accumulator.add(json.dumps(graph([node("GO:1")])))
    accumulator.add(orjson.dumps(graph([node("go:1"), node("B")], [link("go:1", "B")])))
    assert (accumulator.node_count, accumulator.link_count) == (2, 1)


def test_a_bad_result_changes_nothing() -> None:
    accumulator = GraphAccumulator()
    accumulator.add(graph([node("A"), node("B")], [link("A", "B")]))
    before = accumulator.to_graph()
    bad = graph([node("A", name="x"), node("C", equivalent_ids=["A"])], [link("A", "Z")])
    with pytest.raises(GraphFormatError, match="link 0 points to missing node 'Z'"):
        accumulator.add(bad)
    assert accumulator.to_graph() == before
    accumulator.add(graph([node("D")]))
    assert accumulator.to_graph()["nodes"][-1]["provenance"] == ["result-2"]


def test_adding_a_merged_graph_keeps_its_provenance() -> None:
    first = GraphAccumulator()
    first.add(graph([node("A"), node("B")], [link("A", "B")]), "call-1")
    second = GraphAccumulator()
    second.add(first.to_graph(), "carried")
    second.add(graph([node("A")]), "call-2")
    result = second.to_graph()
    assert result["nodes"][0]["provenance"] == ["call-1", "carried", "call-2"]
    assert result["links"][0]["provenance"] == ["call-1", "carried"]


def test_provenance_has_no_repeats_when_records_fold_during_an_add() -> None:
    accumulator = GraphAccumulator()
    accumulator.add(graph([node("HGNC:6973"), node("NCBIGene:4193"), node("X")]), "r1")
    accumulator.add(
        graph(
            [
                node("NCBIGene:4193"),
                node("X"),
                node("NCBIGene:4193", equivalent_ids=["HGNC:6973"]),
                node("HGNC:6973"),
            ],
            [link("X", "HGNC:6973"), link("X", "NCBIGene:4193")],
        ),
        "r2",
    )
    accumulator.add(graph([node("X")]), "r2")
    result = accumulator.to_graph()
    assert [item["provenance"] for item in result["nodes"]] == [["r1", "r2"], ["r1", "r2"]]
    assert [item["provenance"] for item in result["links"]] == [["r2"]]


def test_provenance_stays_in_order_over_many_adds() -> None:
    accumulator = GraphAccumulator()
    for number in range(1, 71):
        nodes = [node("A")] + ([node("B")] if number in (1, 59, 60, 65) else [])
        links = [link("A", "B")] if number in (1, 59, 60, 65) else []
        accumulator.add(graph(nodes, links), f"call-{number % 7}")
    result = accumulator.to_graph()
    assert result["nodes"][0]["provenance"] == [f"call-{n}" for n in (1, 2, 3, 4, 5, 6, 0)]
    assert result["nodes"][1]["provenance"] == ["call-1", "call-3", "call-4", "call-2"]
    assert result["links"][0]["provenance"] == ["call-1", "call-3", "call-4", "call-2"]
    assert orjson.loads(accumulator.to_json()) == result


def test_a_node_changed_by_the_caller_after_an_add_is_merged_again() -> None:
    tp53 = node("ncbigene:7157", name="p53", synonyms=["TP53"])
    accumulator = GraphAccumulator()
    accumulator.add(graph([node("NCBIGene:7157", name="TP53")]))
    accumulator.add(graph([tp53]))
    tp53["synonyms"].append("LFS1")
    accumulator.add(graph([tp53]))
    [only] = accumulator.to_graph()["nodes"]
    assert only["synonyms"] == ["TP53", "LFS1"]
    assert only["conflicts"] == {"name": ["TP53", "p53"]}


def test_carried_provenance_merged_during_an_add_gets_no_repeats() -> None:
    carried = link("A", "B", "x", provenance=["earlier"])
    accumulator = GraphAccumulator()
    accumulator.add(
        graph([node("A"), node("B")], [link("A", "B", "x"), carried, link("A", "B", "x")])
    )
    assert accumulator.to_graph()["links"][0]["provenance"] == ["result-1", "earlier"]


# -- equivalence rules (issue 14) ------------------------------------------------------------


def test_an_xref_is_a_link_not_a_merge() -> None:
    accumulator = GraphAccumulator()
    accumulator.add(graph([node("NCBIGene:7157", category="Gene", xref=["GO:0006915"])]))
    accumulator.add(graph([node("GO:0006915", name="apoptotic process")]))
    result = accumulator.to_graph()
    assert ids(result) == ["NCBIGene:7157", "GO:0006915"]
    [xref] = result["links"]
    assert (xref["source"], xref["label"], xref["target"]) == (
        "NCBIGene:7157",
        "xref",
        "GO:0006915",
    )
    assert xref["provenance"] == ["result-1"]  # the node that names the xref
    assert accumulator.link_count == 1
    assert orjson.loads(accumulator.to_json())["links"] == [xref]


def test_an_xref_merges_when_the_setting_says_so() -> None:
    result = merged(
        graph([node("HGNC:11998", xref=["NCBIGene:7157"])]),
        graph([node("NCBIGene:7157")]),
        xref_equivalence=True,
    )
    assert ids(result) == ["NCBIGene:7157"]
    assert result["links"] == []


def test_no_merge_across_incompatible_categories_and_the_report_says_why() -> None:
    accumulator = GraphAccumulator()
    accumulator.add(graph([node("GO:0006915", category="BiologicalProcess")]))
    accumulator.add(graph([node("NCBIGene:7157", category="Gene", same_as=["GO:0006915"])]))
    assert ids(accumulator.to_graph()) == ["GO:0006915", "NCBIGene:7157"]
    [refused] = accumulator.report.as_dict()["refused_merges"]
    assert refused == {
        "ids": ["NCBIGene:7157", "GO:0006915"],
        "reason": "categories biolink:Gene and biolink:BiologicalProcess are incompatible",
    }


def test_compatible_categories_still_merge() -> None:
    result = merged(
        graph([node("NCBIGene:7157", category="Gene", equivalent_ids=["UniProtKB:P04637"])]),
        graph([node("UniProtKB:P04637", category="biolink:Protein")]),
        graph([node("CHEBI:6801", category="SmallMolecule", same_as="RXCUI:6809")]),
        graph([node("RXCUI:6809", entityType="Drug")]),
    )
    assert ids(result) == ["NCBIGene:7157", "CHEBI:6801"]


@pytest.mark.parametrize(
    "value",
    [[{"k": 1}, {"k": 2}], "ends in },{", {"nested": {"deeper": [{"a": 1}, {"b": 2}]}}],
)
def test_records_whose_json_holds_the_cut_between_records_serialise_whole(value: object) -> None:
    """to_json cuts the records' JSON where one record meets the next (`},{`); a value that
    holds those bytes itself must not cut a record in two."""
    accumulator = GraphAccumulator()
    accumulator.add(
        graph(
            [node("A", note=value), node("B", note=value), node("C")],
            [link("A", "B", evidence=[{"note": "},{"}]), link("B", "C")],
        )
    )
    assert orjson.loads(accumulator.to_json()) == accumulator.to_graph()


def test_merging_many_nodes_into_one_costs_python_steps_in_proportion_to_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A list property of scalars (evidence, synonyms) unioned node after node: each union
    worked out the key of every value already kept, so merging 10,000 nodes into one took n²
    Python steps (38 s of a Graph Mode merge). Counted, not timed: the keys worked out stay in
    proportion to the nodes."""
    keys = [0]
    hash_key = merge_values.hash_key

    def counted(value: object) -> object:
        keys[0] += 1
        return hash_key(value)

    monkeypatch.setattr(merge_values, "hash_key", counted)
    accumulator = GraphAccumulator()
    size = 2_000
    for i in range(size):
        accumulator.add(graph([node("N:1", synonyms=[f"s{i}", "shared"], evidence=[f"PMID:{i}"])]))
    merged = accumulator.to_graph()["nodes"]
    assert len(merged) == 1
    assert merged[0]["synonyms"] == ["s0", "shared", *(f"s{i}" for i in range(1, size))]
    assert merged[0]["evidence"] == [f"PMID:{i}" for i in range(size)]
    assert keys[0] < 20 * size, keys[0]
