"""The Translator Node Normalizer client, on recorded responses in the documented shape."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import pytest

from graphwright.core.merge import GraphAccumulator
from graphwright.sources.errors import SourceUnavailable
from graphwright.sources.node_normalizer import NodeNormalizer, normalize_graphs

RECORDED = orjson.loads(
    (Path(__file__).parent.parent / "fixtures" / "sources" / "node_normalizer.json").read_bytes()
)
URL = "https://nodenorm.example/1.5"


def recorded(requests: list[dict]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.method == "POST"
        assert request.url.path == "/1.5/get_normalized_nodes"
        body = orjson.loads(request.content)
        requests.append(body)
        return httpx.Response(200, json={curie: RECORDED.get(curie) for curie in body["curies"]})

    return httpx.MockTransport(handler)


async def test_answers_are_parsed_batched_and_cached() -> None:
    requests: list[dict] = []
    client = NodeNormalizer(URL, transport=recorded(requests), batch_size=2)
    answers = await client.normalize(["NCBIGene:7157", "MONDO:0005148", "myLab:42"])
    assert answers["myLab:42"] is None
    tp53 = answers["NCBIGene:7157"]
    assert tp53 is not None
    assert tp53.id == "NCBIGene:7157"
    assert tp53.label == "TP53"
    assert "UniProtKB:P04637" in tp53.equivalent_ids
    assert tp53.categories[0] == "biolink:Gene"
    assert [len(request["curies"]) for request in requests] == [2, 1]
    assert requests[0]["conflate"] is True and requests[0]["drug_chemical_conflate"] is True
    await client.normalize(["MONDO:0005148", "myLab:42", "CHEBI:6801"])
    assert [request["curies"] for request in requests[2:]] == [["CHEBI:6801"]]


@pytest.mark.parametrize(
    ("transport", "message"),
    [
        (httpx.MockTransport(lambda request: httpx.Response(503)), "unavailable"),
        (httpx.MockTransport(lambda request: httpx.Response(200, content=b"<html>")), "JSON"),
        (httpx.MockTransport(lambda request: httpx.Response(200, json=[1])), "JSON list"),
    ],
)
async def test_failures_name_the_service(transport: httpx.MockTransport, message: str) -> None:
    with pytest.raises(SourceUnavailable, match=message):
        await NodeNormalizer(URL, transport=transport).normalize(["NCBIGene:7157"])


async def test_a_timeout_is_a_source_unavailable() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(SourceUnavailable, match="ReadTimeout"):
        await NodeNormalizer(URL, transport=httpx.MockTransport(slow)).normalize(["A:1"])


GRAPHS = [
    ("genes.json", {"nodes": [{"id": "HGNC:11998", "name": "TP53", "category": "Gene"}]}),
    (
        "kp.json",
        {
            "nodes": [
                {"id": "ncbigene:7157", "category": "Gene"},
                {"id": "UniProtKB:P04637", "category": "Protein"},
            ]
        },
    ),
]


async def test_merging_with_the_normalizer_joins_ids_of_one_entity() -> None:
    client = NodeNormalizer(URL, transport=recorded([]))
    graphs, note = await normalize_graphs([(n, {**g, "links": []}) for n, g in GRAPHS], client)
    assert note is None
    accumulator = GraphAccumulator()
    for name, graph in graphs:
        accumulator.add(graph, name)
    [node] = accumulator.to_graph()["nodes"]
    assert node["id"] == "NCBIGene:7157"
    assert {"HGNC:11998", "UniProtKB:P04637", "PR:P04637"} <= set(node["equivalent_ids"])


async def test_offline_the_merge_keeps_the_equivalences_of_the_input() -> None:
    down = NodeNormalizer(URL, transport=httpx.MockTransport(lambda r: httpx.Response(502)))
    named = [(n, {**g, "links": []}) for n, g in GRAPHS]
    graphs, note = await normalize_graphs(named, down)
    assert graphs == named
    assert note is not None and "equivalences in the input only" in note


async def test_the_kg_tools_add_equivalent_ids_when_asked() -> None:
    from graphwright.sources import kg
    from graphwright.sources.service import KnowledgeGraphService

    service = KnowledgeGraphService(
        sample=kg.SampleKG.bundled(), normalizer=NodeNormalizer(URL, transport=recorded([]))
    )
    plain = await service.neighbors("NCBIGene:7157", limit=5)
    asked = await service.neighbors("NCBIGene:7157", limit=5, normalize=True)
    tp53 = next(node for node in asked.graph["nodes"] if node["id"] == "NCBIGene:7157")
    assert "HGNC:11998" in tp53["equivalent_ids"]
    assert [n["id"] for n in asked.graph["nodes"]] == [n["id"] for n in plain.graph["nodes"]]
    offline = KnowledgeGraphService(sample=kg.SampleKG.bundled())
    answer = await offline.neighbors("NCBIGene:7157", limit=5, normalize=True)
    assert any("Node Normalizer is off" in note for note in answer.result.notes)
