"""The sample KG, the TRAPI backend (recorded response), name resolution and path finding."""

from __future__ import annotations

import itertools
from pathlib import Path

import httpx
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphwright.core.graph import load_graph
from graphwright.errors import InvalidInput, NotFound
from graphwright.settings import Settings
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.kg import (
    NameResolver,
    SampleKG,
    TrapiKG,
    find_paths,
    looks_like_curie,
    path_subgraph,
)
from graphwright.sources.pubmed import SampleCorpus
from graphwright.sources.service import NAME_RESOLVER, KnowledgeGraphService
from tests.sources.support import fixture_bytes

TRAPI = fixture_bytes("trapi_response.json")
NAMERES = fixture_bytes("nameres_lookup.json")
SAMPLE = SampleKG.bundled()
KNOWN_PREFIXES = {"NCBIGene", "MONDO", "CHEBI", "DRUGBANK", "GO"}


def test_sample_kg_is_a_valid_labelled_graph() -> None:
    data = orjson.loads(
        (Path(__file__).parents[2] / "src/graphwright/sources/sample_data/kg.json").read_bytes()
    )
    graph = load_graph(data)
    assert "sample data" in data["description"]
    assert len(graph["links"]) >= 200
    assert {node["id"].split(":")[0] for node in graph["nodes"]} == KNOWN_PREFIXES
    corpus = SampleCorpus.bundled()
    cited = [item for link in graph["links"] for item in link["evidence"]]
    assert cited
    for item in cited:
        pmid = item.removeprefix("PMID:")
        assert pmid.isdigit() and pmid in corpus.citations, item


def test_resolve_prefers_exact_names_and_knows_synonyms() -> None:
    [imatinib] = SAMPLE.resolve("Gleevec", 1)
    assert (imatinib.id, imatinib.name, imatinib.score) == ("CHEBI:45783", "imatinib", 1.0)
    matches = SAMPLE.resolve("brca", 5)
    assert [m.name for m in matches[:2]] == ["BRCA1", "BRCA2"]
    assert all(m.score >= 0.5 for m in matches)
    with pytest.raises(InvalidInput):
        SAMPLE.resolve("   ", 5)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("NCBIGene:7157", True), ("ncbigene:7157", True), ("TP53", False), ("a b:c", False)],
)
def test_curie_detection(text: str, expected: bool) -> None:
    assert looks_like_curie(text) is expected


async def test_sample_neighbors_filter_by_label_and_category() -> None:
    graph = await SAMPLE.neighbors("NCBIGene:7157", label=None, category=None, limit=100)
    assert {"MONDO:0007254", "NCBIGene:4193", "GO:0006915"} <= {n["id"] for n in graph["nodes"]}
    diseases = await SAMPLE.neighbors(
        "NCBIGene:7157", label="gene associated with condition", category="Disease", limit=100
    )
    assert {link["target"] for link in diseases["links"]} == {
        "MONDO:0007254", "MONDO:0005575", "MONDO:0008903", "MONDO:0018177",
    }  # fmt: skip
    breast = next(link for link in diseases["links"] if link["target"] == "MONDO:0007254")
    assert breast["evidence"] == ["PMID:1978757"]
    with pytest.raises(NotFound, match="resolveName"):
        await SAMPLE.neighbors("NCBIGene:0", label=None, category=None, limit=5)


async def test_paths_through_the_sample_graph() -> None:
    graph = await SAMPLE.path_graph("CHEBI:45783", "NCBIGene:3815", 2)
    paths = find_paths(graph, "CHEBI:45783", "NCBIGene:3815", 2, 10)
    assert paths[0] == ["CHEBI:45783", "NCBIGene:3815"]
    assert ["CHEBI:45783", "MONDO:0011719", "NCBIGene:3815"] in paths
    sub = path_subgraph(graph, paths)
    assert {n["id"] for n in sub["nodes"]} == {step for path in paths for step in path}
    assert len(sub["links"]) == len(
        {frozenset(p) for path in paths for p in itertools.pairwise(path)}
    )


NODE_IDS = sorted(SAMPLE.nodes)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(NODE_IDS), st.sampled_from(NODE_IDS), st.integers(min_value=1, max_value=3))
def test_paths_are_real_and_short_enough(source: str, target: str, hops: int) -> None:
    graph = {
        "nodes": [SAMPLE.public_node(i) for i in NODE_IDS],
        "links": [
            {"source": s, "target": t, "label": d["label"], "evidence": d["evidence"]}
            for s, t, d in SAMPLE.graph.edges(data=True)
        ],
    }
    linked = {frozenset((s, t)) for s, t in SAMPLE.graph.edges()}
    paths = find_paths(graph, source, target, hops, 5)
    lengths = [len(path) - 1 for path in paths]
    assert lengths == sorted(lengths)
    for path in paths:
        assert path[0] == source and path[-1] == target
        assert len(path) - 1 <= hops
        assert len(set(path)) == len(path)
        assert all(frozenset(step) in linked for step in itertools.pairwise(path))


def trapi_transport(seen: list[dict]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/trapi/query"
        seen.append(orjson.loads(request.content))
        return httpx.Response(200, content=TRAPI)

    return httpx.MockTransport(handler)


async def test_trapi_one_hop_query_and_response() -> None:
    seen: list[dict] = []
    backend = TrapiKG("https://kp.example/trapi/", transport=trapi_transport(seen))
    graph = await backend.neighbors("CHEBI:45783", label="treats", category="Disease", limit=10)
    [message] = seen
    assert message["message"]["query_graph"] == {
        "nodes": {"n0": {"ids": ["CHEBI:45783"]}, "n1": {"categories": ["biolink:Disease"]}},
        "edges": {"e0": {"subject": "n0", "object": "n1", "predicates": ["biolink:treats"]}},
    }
    nodes = {node["id"]: node for node in graph["nodes"]}
    assert nodes["CHEBI:45783"] == {
        "id": "CHEBI:45783",
        "name": "imatinib",
        "category": "SmallMolecule",
    }
    cml = next(link for link in graph["links"] if link["target"] == "MONDO:0011996")
    assert cml["label"] == "treats"
    assert cml["evidence"] == ["PMID:11287972"]
    limited = await backend.neighbors("CHEBI:45783", label=None, category=None, limit=1)
    assert len(limited["links"]) == 1
    assert len(limited["nodes"]) == 2


async def test_trapi_paths_ask_one_chain_per_length() -> None:
    seen: list[dict] = []
    backend = TrapiKG("https://kp.example/trapi", transport=trapi_transport(seen))
    graph = await backend.path_graph("CHEBI:45783", "MONDO:0011996", 2)
    assert [len(m["message"]["query_graph"]["edges"]) for m in seen] == [1, 2]
    two_hops = seen[1]["message"]["query_graph"]
    assert two_hops["nodes"]["n2"] == {"ids": ["MONDO:0011996"]}
    assert find_paths(graph, "CHEBI:45783", "MONDO:0011996", 2, 5) == [
        ["CHEBI:45783", "MONDO:0011996"]
    ]


async def test_trapi_failure_falls_back_to_the_sample_graph() -> None:
    failing = httpx.MockTransport(lambda request: httpx.Response(500))
    service = KnowledgeGraphService(
        sample=SAMPLE, remote=TrapiKG("https://kp.example", transport=failing)
    )
    answer = await service.neighbors("imatinib", predicate="biolink:treats")
    assert answer.result.source == SAMPLE.label
    assert "unavailable (HTTPStatusError)" in answer.result.notes[0]
    assert {n.name for n in answer.result.neighbors} == {
        "chronic myelogenous leukemia", "gastrointestinal stromal tumor",
    }  # fmt: skip


async def test_name_resolution_service() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=NAMERES)

    service = KnowledgeGraphService.from_settings(
        Settings(offline=False, name_resolver_url="https://names.example"),
        transport=httpx.MockTransport(handler),
    )
    result = await service.resolve_name("imatinib", 5)
    assert result.source == NAME_RESOLVER
    assert [(m.id, m.category) for m in result.matches] == [
        ("CHEBI:45783", "SmallMolecule"),
        ("CHEBI:31690", None),
    ]
    assert seen[0].url.params["string"] == "imatinib"


async def test_service_resolves_names_and_reports_unknown_ones() -> None:
    service = KnowledgeGraphService(sample=SAMPLE)
    answer = await service.paths("Gleevec", "NCBIGene:25", 1)
    assert answer.result.paths == [["CHEBI:45783", "NCBIGene:25"]]
    with pytest.raises(NotFound, match="No entity named 'unobtainium'"):
        await service.neighbors("unobtainium")
    with pytest.raises(InvalidInput, match="maxHops must be between 1 and 3"):
        await service.paths("TP53", "MDM2", 4)
    with pytest.raises(InvalidInput, match="same entity"):
        await service.paths("TP53", "NCBIGene:7157", 2)


async def test_name_resolver_reports_failures() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(502))
    resolver = NameResolver("https://names.example", transport=transport)
    with pytest.raises(SourceUnavailable, match="Name resolution unavailable"):
        await resolver.resolve("x", 3)


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (b'{"message": {"knowledge_graph": null, "results": []}}', "empty"),
        (b"[]", "empty"),
        (b'{"message": {"knowledge_graph": {"nodes": [], "edges": {}}}}', "unusable"),
        (b"<html>gateway</html>", "did not answer with JSON"),
    ],
)
async def test_trapi_odd_replies(reply: bytes, outcome: str) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=reply))
    backend = TrapiKG("https://kp.example", transport=transport)
    if outcome == "empty":
        assert await backend.neighbors("X:1", label=None, category=None, limit=5) == {
            "nodes": [],
            "links": [],
        }
        return
    with pytest.raises(SourceUnavailable, match=outcome):
        await backend.neighbors("X:1", label=None, category=None, limit=5)
