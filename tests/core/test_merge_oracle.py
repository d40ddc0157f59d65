"""The accumulator against its previous implementation (tests/core/merge_oracle) on 1,000 random
sequences of one to five adds (about 3,000 adds): the same output, byte for byte, after each.

The inputs are drawn from a small world so that they overlap: ids in several spellings,
declared equivalences (some refused for their categories), conflicting and list properties,
unusual labels and evidence, extra link fields, carried provenance, merged graphs added again,
and now and then an invalid result, which both must refuse with the same message.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from graphwright.core import merge_json
from graphwright.core.graph import GraphFormatError
from graphwright.core.merge import GraphAccumulator
from tests.core.merge_oracle.merge import GraphAccumulator as PreviousAccumulator

SPELLINGS = {
    "NCBIGene": ["NCBIGene:{}", "ncbigene:{}", " NCBIGene:{} ", "EntrezGene:{}",
                 "https://identifiers.org/NCBIGene:{}"],
    "HGNC": ["HGNC:{}", "hgnc:{}"],
    "UniProtKB": ["UniProtKB:P{}"],
    "MONDO": ["MONDO:{}", "mondo:{} "],
    "GO": ["GO:{}"],
    "doi": ["doi:10.1/AB{}", "DOI:10.1/ab{}"],
    "local": ["foo:{}", "gene {}"],
}  # fmt: skip
CATEGORIES = [None, "Gene", "biolink:Gene", ["biolink:Protein"], "BiologicalProcess",
              "Disease", "NotABiolinkClass", ""]  # fmt: skip
NAMES = ["p53", "TP53", "", None, "tumor protein"]
EVIDENCE = ["PMID:1", "PMID:2", "PMID:10", "pmid:1", " PMID: 2", "PMID:0",
            "https://pubmed.ncbi.nlm.nih.gov/3/", "free text", " free text", 7,
            {"note": "x", "score": 1}, {"score": 1, "note": "x"}, ["PMID:1"]]  # fmt: skip
CANONICAL_EVIDENCE = ["PMID:1", "PMID:2", "PMID:3", "PMID:44"]
LABELS = ["treats", "causes", "treats", "causes", "", None, 5, ["a"], "xref"]
EXTRA_VALUES = [1, 2.5, "a", "b", "", None, [], ["x"], ["x", "y"], {"k": 1}, True, [{"k": 1}]]
PMID_VALUES = ["PMID:1", "1", 1, "pmid: 2", ["3", "PMID:3"], "x"]
RESULT_IDS = ["call-a", "call-b", "call-c"]


def draw_id(rng: random.Random, kinds: list[str]) -> str:
    kind = rng.choice(kinds)
    return rng.choice(SPELLINGS[kind]).format(rng.randint(1, 4))


def draw_node(rng: random.Random, node_id: str, kinds: list[str]) -> dict[str, Any]:
    node: dict[str, Any] = {"id": node_id}
    if rng.random() < 0.8:
        node["name"] = rng.choice(NAMES)
    if rng.random() < 0.3:
        field = rng.choice(["category", "category", "entityType"])
        node[field] = rng.choice(CATEGORIES)
    for field in ("equivalent_ids", "same_as", "xref"):
        if rng.random() < 0.2:
            others = [draw_id(rng, kinds) for _ in range(rng.randint(0, 2))]
            node[field] = others[0] if len(others) == 1 and rng.random() < 0.5 else others
    if rng.random() < 0.05:
        node["same_as"] = rng.choice([["  "], [3], "", None])
    if rng.random() < 0.3:
        node["synonyms"] = rng.sample(["a", "b", "c", {"k": 1}], rng.randint(0, 2))
    if rng.random() < 0.2:
        node[rng.choice(["score", "description", "group"])] = rng.choice(EXTRA_VALUES)
    if rng.random() < 0.1:
        node["pmids"] = rng.choice(PMID_VALUES)
    if rng.random() < 0.08:
        node["provenance"] = rng.choice(["old-1", ["old-1", "old-2"], ["old-2", 3], []])
    if rng.random() < 0.05:
        node["conflicts"] = {"name": rng.choice([["x", "y"], ["z"]])}
    return node


def draw_link(rng: random.Random, ends: list[str], *, canonical: bool) -> dict[str, Any]:
    link: dict[str, Any] = {"source": rng.choice(ends), "target": rng.choice(ends)}
    plain = rng.random() < 0.7
    if plain or rng.random() < 0.8:
        link["label"] = rng.choice(LABELS[:4] if plain else LABELS)
    pool = CANONICAL_EVIDENCE if canonical else EVIDENCE
    if plain or rng.random() < 0.8:
        link["evidence"] = rng.sample(pool, rng.randint(0, 3))
    else:
        link["evidence"] = rng.choice([None, "PMID:5", "pmid:6", {"note": "x"}])
    if not plain:
        for field in rng.sample(["score", "primary_knowledge_source", "sources", "provenance",
                                 "qualifiers", "pmids"], rng.randint(1, 2)):  # fmt: skip
            link[field] = _link_field(rng, field)
    return link


def _link_field(rng: random.Random, field: str) -> Any:
    if field == "sources":
        role = rng.choice(["primary_knowledge_source", "aggregator_knowledge_source"])
        return [{"resource_id": rng.choice(["infores:a", "infores:b", 5]), "resource_role": role}]
    if field == "primary_knowledge_source":
        return rng.choice(["infores:a", "infores:b", "", {"id": "x"}])
    if field == "provenance":
        return rng.choice(["old-1", ["old-2", "old-1"]])
    if field == "pmids":
        return rng.choice(PMID_VALUES)
    return rng.choice(EXTRA_VALUES)


def draw_result(rng: random.Random) -> dict[str, Any]:
    kinds = rng.sample(sorted(SPELLINGS), rng.randint(1, 4))
    ids = list(dict.fromkeys(draw_id(rng, kinds) for _ in range(rng.randint(1, 7))))
    nodes = [draw_node(rng, node_id, kinds) for node_id in ids]
    if rng.random() < 0.2:  # the same entity twice in one result, maybe spelled otherwise
        nodes.append(draw_node(rng, rng.choice(ids), kinds))
    ends = ids + [draw_id(rng, kinds) for _ in range(rng.randint(0, 2))] * (rng.random() < 0.2)
    canonical = rng.random() < 0.5
    links = [draw_link(rng, ends, canonical=canonical) for _ in range(rng.randint(0, 8))]
    result: dict[str, Any] = {"nodes": nodes, "links": links}
    if rng.random() < 0.03:  # invalid: both implementations must refuse it, changing nothing
        result = rng.choice([{"nodes": [{"name": "x"}]}, {"nodes": nodes, "edges": []},
                             {"nodes": nodes, "links": [{"source": "nowhere", "target": ids[0]}]},
                             {"nodes": nodes, "links": [5]}])  # fmt: skip
    return result


def same_state(current: GraphAccumulator, previous: PreviousAccumulator) -> None:
    assert current.to_json() == previous.to_json()
    assert (current.node_count, current.link_count) == (previous.node_count, previous.link_count)
    assert current.report == previous.report


def add_both(
    current: GraphAccumulator, previous: PreviousAccumulator, graph: Any, **options: Any
) -> None:
    try:
        previous.add(graph, **options)
    except GraphFormatError as expected:
        with pytest.raises(GraphFormatError) as raised:
            current.add(graph, **options)
        assert str(raised.value) == str(expected)
    else:
        current.add(graph, **options)


def check_case(seed: int) -> None:
    rng = random.Random(seed)
    options = {"key_by_source": rng.random() < 0.3, "xref_equivalence": rng.random() < 0.2}
    current, previous = GraphAccumulator(**options), PreviousAccumulator(**options)
    for _ in range(rng.randint(1, 5)):
        choice = rng.random()
        if choice < 0.1 and previous.node_count:  # a merged graph added again
            graph: Any = previous.to_graph()
        else:
            graph = draw_result(rng)
        if rng.random() < 0.2:
            graph = orjson.dumps(graph)
        result_id = rng.choice([None, *RESULT_IDS])
        stored_ends = rng.random() < 0.1
        add_both(current, previous, graph, result_id=result_id, stored_ends=stored_ends)
        same_state(current, previous)
    assert current.to_graph() == previous.to_graph()
    probe = draw_id(rng, sorted(SPELLINGS))
    assert current.knows(probe) == previous.knows(probe)


@pytest.mark.parametrize("block", range(4))
def test_the_same_output_as_the_previous_implementation(block: int) -> None:
    for seed in range(block * 250, (block + 1) * 250):
        check_case(seed)


def test_the_same_output_when_links_are_serialised_a_few_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Slices of three links put special links (unusual labels, extra fields, folded) at the
    edges of the slices joined by Arrow."""
    monkeypatch.setattr(merge_json, "_SLICE", 3)
    for seed in range(250):
        check_case(seed)
