"""The Python client's scenarios, each against a live server and Client.local, on every backend."""

from __future__ import annotations

import networkx as nx
import pytest

import graphwright
from graphwright.client import (
    Bibliography,
    Client,
    InvalidRequest,
    KnowledgeGraph,
    NotFound,
    Unauthorized,
    VersionConflict,
)


def test_importing_graphwright_loads_no_client() -> None:
    import subprocess
    import sys

    code = "import sys, graphwright; print('graphwright.client' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert loaded.stdout.strip() == "False"
    assert graphwright.Client is Client


def test_a_slash_command_turn_gives_a_knowledge_graph(client: Client) -> None:
    turn = client.chat("/kg.queryNeighbors TP53")

    assert turn.status == "complete"
    assert "TP53" in turn.text
    assert [call.tool for call in turn.tool_calls] == ["kg.queryNeighbors"]
    kg = turn.artifact(KnowledgeGraph)
    assert isinstance(kg, KnowledgeGraph)
    graph = kg.to_networkx()
    assert isinstance(graph, nx.MultiDiGraph)
    assert graph.nodes["NCBIGene:7157"]["name"] == "TP53"
    assert graph.has_edge("NCBIGene:7157", "NCBIGene:4193", key="interacts with")
    nodes, edges = kg.to_pandas()
    assert len(nodes) == graph.number_of_nodes() and len(edges) == graph.number_of_edges()
    pl_nodes, pl_edges = kg.to_polars()
    assert pl_nodes.height == len(nodes) and set(pl_edges.columns) >= {"source", "target"}


def test_a_turn_continues_its_conversation(client: Client) -> None:
    first = client.chat("/kg.queryNeighbors TP53")
    second = client.chat("/kg.queryNeighbors MDM2", conversation=first.conversation_id)
    assert second.conversation_id == first.conversation_id
    messages = client.conversation(first.conversation_id)["messages"]
    assert len(messages) == 4


def test_stream_yields_the_turn_as_events(client: Client) -> None:
    events = list(client.stream("/kg.queryNeighbors TP53"))
    kinds = [event.type for event in events]
    assert kinds[0] == "status" and kinds[-1] == "done"
    assert events[-1].data["conversationId"]


def test_a_bibliography_gives_a_table_bibtex_and_ris(client: Client) -> None:
    turn = client.chat("/literature.searchPubMed TP53")
    bibliography = turn.artifact(Bibliography)
    assert isinstance(bibliography, Bibliography)
    table = bibliography.to_pandas()
    assert len(table) == len(bibliography.records) > 0
    assert {"title", "authors", "year", "pmid"} <= set(table.columns)
    assert bibliography.to_bibtex().lstrip().startswith("@")
    assert "TY  - " in bibliography.to_ris()


def test_graph_mode_edits_versions_and_errors(client: Client) -> None:
    turn = client.chat("/kg.queryNeighbors TP53")
    graph = client.graph_mode(turn.conversation_id)
    seeded = graph.to_networkx()
    assert seeded.number_of_nodes() == 12 and graph.version is not None
    start = graph.summary()["version"]

    graph.add_node("HGNC:1", "NEW1", "Gene", {"score": 0.5})
    graph.update_node("HGNC:1", label="renamed")
    edge = graph.add_edge("HGNC:1", "NCBIGene:7157", "interacts with")
    assert graph.node("HGNC:1")["label"] == "renamed"
    graph.add_nodes([{"id": "HGNC:2", "label": "B", "type": "Gene"}])
    graph.delete_edge(edge["id"])
    graph.delete_node("HGNC:2")
    assert graph.version == start + 6

    graph.undo()
    assert graph.node("HGNC:2")["label"] == "B"
    graph.redo()
    with pytest.raises(NotFound):
        graph.node("HGNC:2")
    assert len(graph.history(limit=100)["items"]) >= 6
    diff = graph.diff(start, start + 1)
    assert "HGNC:1" in str(diff)

    with pytest.raises(VersionConflict) as stale:
        graph.add_node("HGNC:3", "C", "Gene", expected_version=start)
    assert stale.value.current_version == graph.summary()["version"]
    with pytest.raises(InvalidRequest):
        graph.add_node("HGNC:4", "", "Gene")

    nodes, edges = graph.to_pandas()
    assert nodes.loc[nodes["id"] == "HGNC:1", "score"].item() == 0.5
    assert len(edges) == graph.summary()["edgeCount"]


def test_a_networkx_graph_goes_back_into_graph_mode(client: Client) -> None:
    turn = client.chat("/kg.queryNeighbors TP53")
    graph = client.graph_mode(turn.conversation_id)
    mine = graph.to_networkx()
    mine.add_node("HGNC:10", label="X", type="Gene", rank=3)
    mine.add_edge("HGNC:10", "NCBIGene:7157", key="my-edge", label="regulates")

    graph.add_networkx(mine)
    assert graph.add_networkx(mine) == []  # all of it is there now

    back = graph.to_networkx()
    assert back.nodes["HGNC:10"]["label"] == "X" and back.nodes["HGNC:10"]["type"] == "Gene"
    assert back.nodes["HGNC:10"]["rank"] == 3
    assert back.edges["HGNC:10", "NCBIGene:7157", "my-edge"]["label"] == "regulates"
    assert back.number_of_nodes() == mine.number_of_nodes()
    polar_nodes, _ = graph.to_polars()
    assert "HGNC:10" in polar_nodes["id"].to_list()


def test_the_knowledge_base_publishes_after_approval(client: Client) -> None:
    jsonld = {
        "@context": {"schema": "http://schema.org/"},
        "@id": "urn:example:client-test",
        "schema:name": "client test",
    }
    request = client.kb.request_publication(jsonld, title="client test")
    assert request["status"] == "pending"
    published = client.kb.approve(request["id"])
    assert published["status"] == "published"
    ual = published["ual"]
    assert client.kb.get(ual)
    frame = client.kb.query(
        "SELECT ?name WHERE { GRAPH ?g "
        "{ <urn:example:client-test> <http://schema.org/name> ?name } }"
    )
    assert frame["name"].tolist() == ["client test"]


def test_to_networkx_reads_every_page(client: Client) -> None:
    from graphwright.client import graph as graph_module

    turn = client.chat("/kg.queryNeighbors TP53")
    graph = client.graph_mode(turn.conversation_id)
    extra = [
        {"source": "NCBIGene:7157", "target": "NCBIGene:672", "label": f"r{i}"} for i in range(6)
    ]
    graph.add_edges(extra)  # 18 edges, 12 nodes: edge pages go on after the nodes run out
    page = graph_module.STATE_PAGE
    graph_module.STATE_PAGE = 3
    try:
        whole = graph.to_networkx()
    finally:
        graph_module.STATE_PAGE = page
    assert (whole.number_of_nodes(), whole.number_of_edges()) == (12, 18)


def test_a_wrong_token_is_unauthorized(client: Client) -> None:
    good = client.token
    assert good
    client._transport.set_token("gw_not-a-token")
    try:
        with pytest.raises(Unauthorized):
            client.conversations()
    finally:
        client._transport.set_token(good)
