"""TurnArtifacts: one clean set of artifacts per turn, and versions across turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types

from graphwright.artifacts.collectors import Collected, collect
from graphwright.artifacts.turn import TurnArtifacts
from graphwright.core.artifacts import BIBLIOGRAPHY, KNOWLEDGE_GRAPH, MARKDOWN, ChatArtifact
from graphwright.core.batch_merge import BatchInput, BatchMerge
from graphwright.core.formats import write_graph_pair
from tests.artifacts.support import fixture


def graph_result(graph: dict[str, Any], *, as_string: bool) -> dict[str, Any]:
    content = json.dumps(graph) if as_string else graph
    return {
        "content": [{"type": "text", "text": "graph"}],
        "artifacts": [{"type": KNOWLEDGE_GRAPH, "title": "Knowledge Graph", "content": content}],
    }


TP53 = {"id": "NCBIGene:7157", "name": "TP53"}
T2D = {"id": "MONDO:0005148", "name": "type 2 diabetes mellitus"}
METFORMIN = {"id": "CHEBI:6801", "name": "metformin"}


def link(source: dict[str, Any], target: dict[str, Any], *evidence: str) -> dict[str, Any]:
    return {
        "source": source["id"],
        "target": target["id"],
        "label": "related_to",
        "evidence": list(evidence),
    }


def run_turn(results: list[dict[str, Any] | types.CallToolResult], turn: TurnArtifacts) -> None:
    for index, result in enumerate(results):
        turn.add_result(collect(result, tool=f"tool-{index}", call_id=f"call-{index}"))


def test_three_graphs_and_two_bibliographies_make_one_graph_and_one_bibliography() -> None:
    """Acceptance: string and object graph content mixed; a legacy field and an artifact."""
    medik = fixture("seed003_medik_knowledge_graph.json")  # string content
    second = graph_result(
        {"nodes": [TP53, T2D], "links": [link(TP53, T2D, "PMID:1000003")]}, as_string=False
    )
    third = graph_result(
        {"nodes": [METFORMIN, T2D], "links": [link(METFORMIN, T2D)]}, as_string=True
    )
    pubmed = fixture("seed003_pubmed_bibliography.json")  # legacy `bibliography` field
    as_artifact = {
        "content": [{"type": "text", "text": "2 articles", "forModel": True}],
        "artifacts": [
            {
                "type": BIBLIOGRAPHY,
                "title": "Article References",
                "content": [
                    {**pubmed["bibliography"][1], "doi": "10.0000/synthetic.2"},
                    {
                        "title": "A third paper",
                        "year": "2020",
                        "pmid": "1000004",
                        "synthetic": True,
                    },
                ],
            }
        ],
    }
    turn = TurnArtifacts()
    run_turn([pubmed, medik, second, as_artifact, third], turn)
    artifacts = turn.finalize()

    assert turn.errors == []
    assert [a.type for a in artifacts] == [BIBLIOGRAPHY, KNOWLEDGE_GRAPH]
    assert [a.position for a in artifacts] == [0, 1]
    bibliography = json.loads(artifacts[0].content)
    assert [c["pmid"] for c in bibliography] == ["1000001", "1000002", "1000004"]
    assert bibliography[1]["doi"] == "10.0000/synthetic.2"
    graph = json.loads(artifacts[1].content)
    assert sorted(n["id"] for n in graph["nodes"]) == [
        "CHEBI:6801",
        "MONDO:0005148",
        "NCBIGene:7157",
    ]
    links = {(lk["source"], lk["target"], lk["label"]): lk for lk in graph["links"]}
    assert len(links) == 4
    tp53_t2d = links[("NCBIGene:7157", "MONDO:0005148", "gene_associated_with_condition")]
    assert tp53_t2d["evidence"] == ["PMID:1000001"]
    assert links[("NCBIGene:7157", "MONDO:0005148", "related_to")]["evidence"] == ["PMID:1000003"]


def test_display_order_is_bibliography_graph_then_the_rest_by_arrival() -> None:
    grant = fixture("seed003_grant_markdown.json")
    other = {"content": [], "artifacts": [{"type": "text/csv", "title": "Table", "content": "a,b"}]}
    turn = TurnArtifacts()
    run_turn(
        [
            grant,
            fixture("seed003_medik_knowledge_graph.json"),
            other,
            fixture("seed003_pubmed_bibliography.json"),
        ],
        turn,
    )
    artifacts = turn.finalize()
    assert [(a.type, a.position) for a in artifacts] == [
        (BIBLIOGRAPHY, 0),
        (KNOWLEDGE_GRAPH, 1),
        (MARKDOWN, 2),
        ("text/csv", 3),
    ]
    assert artifacts[2].language == "markdown"
    assert artifacts[2].title == "NIH Grant Details"


def test_markdown_is_one_artifact_per_source_and_a_refetch_replaces_it() -> None:
    first = fixture("seed003_grant_markdown.json")
    refetch = fixture("seed003_grant_markdown.json")
    refetch["grantMarkdown"]["content"] = "# Updated\n"
    elsewhere = fixture("seed003_grant_markdown.json")
    elsewhere["grantMarkdown"]["metadata"]["source"] = "https://reporter.nih.gov/other"
    turn = TurnArtifacts()
    run_turn([first, elsewhere, refetch], turn)
    artifacts = turn.finalize()
    assert [a.content for a in artifacts] == ["# Updated\n", elsewhere["grantMarkdown"]["content"]]
    assert len({a.artifact_id for a in artifacts}) == 2


def test_other_types_pass_through_once_per_content() -> None:
    table = {"type": "text/csv", "title": "Table", "content": "a,b\n1,2"}
    result = {"content": [], "artifacts": [table, {**table, "title": "Same table"}]}
    turn = TurnArtifacts()
    run_turn([result, result], turn)
    [artifact] = turn.finalize()
    assert (artifact.type, artifact.title, artifact.content) == ("text/csv", "Table", "a,b\n1,2")


def test_a_graph_the_merge_rejects_is_an_error_note_and_the_rest_proceeds() -> None:
    bad = graph_result({"nodes": [{"name": "no id"}], "links": []}, as_string=False)
    turn = TurnArtifacts()
    run_turn([bad, fixture("seed003_medik_knowledge_graph.json")], turn)
    [graph] = turn.finalize()
    assert json.loads(graph.content)["nodes"][0]["id"] == "NCBIGene:7157"
    [error] = turn.errors
    assert error.origin.call_id == "call-0"
    assert "has no 'id'" in error.message


def test_collector_errors_are_kept_with_the_turn() -> None:
    collected = Collected()
    broken = graph_result({"nodes": []}, as_string=True)
    broken["artifacts"][0]["content"] = "{"
    turn = TurnArtifacts()
    turn.add_result(collect(broken, tool="medik", call_id="c7"))
    turn.add_result(collected)
    assert turn.finalize() == []
    assert [e.origin.call_id for e in turn.errors] == ["c7"]


def test_carry_over_makes_a_new_version_of_the_same_graph_and_bibliography() -> None:
    first = TurnArtifacts()
    run_turn(
        [
            fixture("seed003_pubmed_bibliography.json"),
            fixture("seed003_medik_knowledge_graph.json"),
        ],
        first,
    )
    bibliography_v1, graph_v1 = first.finalize()

    second = TurnArtifacts(previous=[bibliography_v1, graph_v1])
    new_graph = graph_result(
        {"nodes": [{"id": "HGNC:7989", "name": "NR1H4"}], "links": []}, as_string=True
    )
    new_citation = {
        "content": [],
        "bibliography": [{"title": "New", "year": "2024", "pmid": "1000009", "synthetic": True}],
    }
    run_turn([new_graph, new_citation], second)
    bibliography_v2, graph_v2 = second.finalize()

    for v1, v2 in ((bibliography_v1, bibliography_v2), (graph_v1, graph_v2)):
        assert v2.artifact_id == v1.artifact_id
        assert v2.id != v1.id
        assert v2.metadata is not None and v2.metadata["previousVersionId"] == v1.id
    assert [c["pmid"] for c in json.loads(bibliography_v2.content)] == [
        "1000001",
        "1000002",
        "1000009",
    ]
    node_ids = {n["id"] for n in json.loads(graph_v2.content)["nodes"]}
    assert node_ids == {"NCBIGene:7157", "MONDO:0005148", "CHEBI:6801", "HGNC:7989"}

    third = TurnArtifacts(previous=[bibliography_v2, graph_v2])
    run_turn([new_graph], third)
    [graph_v3] = third.finalize()
    assert graph_v3.metadata is not None and graph_v3.metadata["previousVersionId"] == graph_v2.id


def test_a_turn_without_new_graphs_yields_no_new_version() -> None:
    previous = ChatArtifact.model_validate(fixture("seed003_chat_artifacts.json")[2])
    turn = TurnArtifacts(previous=[previous])
    run_turn([fixture("seed004_add_node.json")], turn)
    assert turn.finalize() == []


def test_the_chat_reads_equivalences_and_spellings_as_the_batch_merge_does(
    tmp_path: Path,
) -> None:
    """Issue 32: a tool's `equivalent_identifiers` (strings or the Node Normalizer's objects), a
    TRAPI `biolink:same_as` attribute and Bioregistry's spellings merge in a chat turn exactly
    as in the batch merge of the same graphs as KGX files."""
    robokop = {
        "nodes": [
            {"id": "MONDO:0005148", "name": "type 2 diabetes mellitus", "category": "Disease",
             "equivalent_identifiers": ["DOID:9352", {"identifier": "UMLS:C0011860"}]},
            {"id": "CHEBI:6801", "name": "metformin", "attributes": [
                {"attribute_type_id": "biolink:same_as", "value": ["PUBCHEM.COMPOUND:4091"],
                 "original_attribute_name": "equivalent_identifiers"}]},
            {"id": "http://identifiers.org/obi/OBI_0400109", "name": "a device"},
        ],
        "links": [{"source": "CHEBI:6801", "target": "MONDO:0005148", "label": "treats"}],
    }  # fmt: skip
    other = {
        "nodes": [
            {"id": "doid:9352", "name": "type 2 diabetes"},
            {"id": "CID:4091", "name": "metformin"},
            {"id": "OBI:OBI_0400109"},
        ],
        "links": [{"source": "CID:4091", "target": "doid:9352", "label": "treats"}],
    }
    turn = TurnArtifacts()
    run_turn([graph_result(robokop, as_string=False), graph_result(other, as_string=True)], turn)
    chat = json.loads(turn.finalize()[0].content)
    inputs = []
    for number, graph in enumerate((robokop, other)):
        nodes, edges = write_graph_pair(graph, "kgx-jsonl")
        (tmp_path / f"{number}n.jsonl").write_text(nodes)
        (tmp_path / f"{number}e.jsonl").write_text(edges)
        inputs.append(
            BatchInput(
                f"call-{number}",
                "kgx-jsonl",
                nodes=tmp_path / f"{number}n.jsonl",
                edges=tmp_path / f"{number}e.jsonl",
            )
        )
    with BatchMerge(inputs) as merge:
        merge.run()
        batch = merge.to_graph()
    assert sorted(n["id"] for n in chat["nodes"]) == ["CHEBI:6801", "MONDO:0005148", "OBI:0400109"]
    assert sorted(n["id"] for n in batch["nodes"]) == sorted(n["id"] for n in chat["nodes"])
    assert [(lk["source"], lk["label"], lk["target"]) for lk in chat["links"]] == [
        ("CHEBI:6801", "treats", "MONDO:0005148")
    ]
    assert [(lk["source"], lk["label"], lk["target"]) for lk in batch["links"]] == [
        ("CHEBI:6801", "treats", "MONDO:0005148")
    ]
