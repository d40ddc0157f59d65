"""Invariants of GraphAccumulator over random tool results (hypothesis)."""

from __future__ import annotations

import copy
import json
from typing import Any

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.core.merge import GraphAccumulator

# A small world, so that random results overlap: genes known as NCBIGene:k and HGNC:k (one
# entity only where some node says so), and diseases known only as MONDO:k.
SPELLINGS = {
    "NCBIGene": ["NCBIGene:{}", "ncbigene:{}", " NCBIGene:{} ", "NCBIGENE:{}"],
    "HGNC": ["HGNC:{}", "hgnc:{}"],
    "MONDO": ["MONDO:{}", "mondo:{} "],
}
EVIDENCE = ["PMID:1", "pmid:1", " PMID: 1", "PMID:2", "https://pubmed.ncbi.nlm.nih.gov/3/",
            "free text", {"note": "x", "score": 1}, {"score": 1, "note": "x"}]  # fmt: skip


def reference_id(raw: str) -> str:
    """The test's own normalisation, for the prefixes above."""
    prefix, _, local = raw.strip().partition(":")
    return {"ncbigene": "NCBIGene", "hgnc": "HGNC", "mondo": "MONDO"}[prefix.lower()] + ":" + local


def reference_evidence(item: Any) -> Any:
    if isinstance(item, dict):
        return json.dumps(item, sort_keys=True)
    text = item.strip()
    if text.lower().startswith("pmid"):
        return "PMID:" + text.split(":")[1].strip()
    if text.startswith("https://pubmed"):
        return "PMID:" + text.rstrip("/").rsplit("/", 1)[1]
    return text


@st.composite
def node_ids(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(sorted(SPELLINGS)))
    number = draw(st.integers(1, 4))
    return kind, draw(st.sampled_from(SPELLINGS[kind])).format(number)


@st.composite
def tool_results(draw: st.DrawFn) -> dict[str, Any]:
    nodes = []
    for kind, raw in draw(st.lists(node_ids(), min_size=1, max_size=6)):
        node: dict[str, Any] = {"id": raw, "name": draw(st.sampled_from(["p53", "TP53", ""]))}
        if kind != "MONDO" and draw(st.booleans()):
            other = "HGNC" if kind == "NCBIGene" else "NCBIGene"
            number = reference_id(raw).split(":")[1]
            field = draw(st.sampled_from(["equivalent_ids", "same_as", "xref"]))
            node[field] = [draw(st.sampled_from(SPELLINGS[other])).format(number)]
        if draw(st.booleans()):
            node["synonyms"] = draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=2))
        nodes.append(node)
    ids = [node["id"] for node in nodes]
    links = [
        {
            "source": draw(st.sampled_from(ids)),
            "target": draw(st.sampled_from(ids)),
            "label": draw(st.sampled_from(["treats", "causes"])),
            "evidence": draw(st.lists(st.sampled_from(EVIDENCE), max_size=3)),
        }
        for _ in range(draw(st.integers(0, 6)))
    ]
    return {"nodes": nodes, "links": links}


results_lists = st.lists(tool_results(), min_size=1, max_size=5)


def merge(results: list[dict[str, Any]]) -> dict[str, Any]:
    accumulator = GraphAccumulator()
    for index, result in enumerate(results):
        accumulator.add(result, f"call-{index}")
    return accumulator.to_graph()


def without_provenance(graph: dict[str, Any]) -> dict[str, Any]:
    return {
        part: [{k: v for k, v in item.items() if k != "provenance"} for item in items]
        for part, items in graph.items()
    }


def as_sets(graph: dict[str, Any]) -> tuple[frozenset, frozenset]:
    nodes = frozenset(node["id"] for node in graph["nodes"])
    links = frozenset(
        (
            link["source"],
            link["label"],
            link["target"],
            frozenset(reference_evidence(item) for item in link["evidence"]),
        )
        for link in graph["links"]
    )
    return nodes, links


def entity_classes(results: list[dict[str, Any]]) -> nx.Graph:
    """Ids linked by the equivalences the results declare (the reference union-find)."""
    classes = nx.Graph()
    for result in results:
        for node in result["nodes"]:
            own = reference_id(node["id"])
            classes.add_node(own, is_node=True)
            for field in ("equivalent_ids", "same_as"):  # an xref is a link, not a merge
                for other in node.get(field, []):
                    classes.add_edge(own, reference_id(other))
    return classes


@settings(max_examples=100, deadline=None)
@given(results_lists)
def test_adding_the_same_results_again_changes_nothing_but_provenance(results: list) -> None:
    accumulator = GraphAccumulator()
    for result in results:
        accumulator.add(result)
    once = accumulator.to_graph()
    for result in results:
        accumulator.add(result)
    assert without_provenance(accumulator.to_graph()) == without_provenance(once)


@settings(max_examples=100, deadline=None)
@given(results_lists, st.randoms(use_true_random=False))
def test_merged_sets_do_not_depend_on_input_order(results: list, random: Any) -> None:
    shuffled = list(results)
    random.shuffle(shuffled)
    assert as_sets(merge(shuffled)) == as_sets(merge(results))


@settings(max_examples=100, deadline=None)
@given(results_lists)
def test_no_evidence_item_is_lost(results: list) -> None:
    before = copy.deepcopy(results)
    graph = merge(results)
    assert results == before
    leader = {}
    for node in graph["nodes"]:
        for known in node.get("equivalent_ids", [node["id"]]):
            leader[known] = node["id"]
    evidence: dict[tuple, set] = {}
    for link in graph["links"]:
        key = (link["source"], link["label"], link["target"])
        evidence[key] = {reference_evidence(item) for item in link["evidence"]}
    for result in results:
        for link in result["links"]:
            source = leader.get(reference_id(link["source"]), reference_id(link["source"]))
            target = leader.get(reference_id(link["target"]), reference_id(link["target"]))
            expected = {reference_evidence(item) for item in link["evidence"]}
            assert expected <= evidence[(source, link["label"], target)]


@settings(max_examples=100, deadline=None)
@given(results_lists)
def test_node_count_is_the_number_of_distinct_entities(results: list) -> None:
    classes = entity_classes(results)
    entities = [
        component
        for component in nx.connected_components(classes)
        if any(classes.nodes[member].get("is_node") for member in component)
    ]
    accumulator = GraphAccumulator()
    for result in results:
        accumulator.add(result)
    assert accumulator.node_count == len(entities) == len(accumulator.to_graph()["nodes"])
    merged_classes = {
        frozenset(node.get("equivalent_ids", [node["id"]]))
        for node in accumulator.to_graph()["nodes"]
    }
    assert merged_classes == {frozenset(component) for component in entities}
