"""History in words: every kind of change written for a person, from the real service on both
backends, and the words reaching the REST and MCP doors."""

from __future__ import annotations

from fastapi.testclient import TestClient

from graphwright.graphmode.history_words import describe, diff_sections, with_id
from graphwright.graphmode.schemas import (
    ChangesetSummary,
    EdgeInput,
    EdgePatch,
    NodeInput,
    NodePatch,
    NodeSelection,
    Position,
)
from graphwright.graphmode.service import GraphService

C = "words"
ACTOR = "test"
INTERNAL = ("unstash", "resultId", "import-", "add_node", "addNode", "cmd-")


def gene(node_id: str, label: str, kind: str = "Gene") -> NodeInput:
    return NodeInput(id=node_id, label=label, type=kind)


def words(service: GraphService, limit: int = 1) -> list[str]:
    return [item.description for item in service.history(C, limit=limit).items]


def test_each_change_is_written_in_words(service: GraphService) -> None:
    service.add_node(C, gene("NCBIGene:4609", "MYC"), actor=ACTOR)
    assert words(service) == ["added node MYC (Gene)"]
    service.add_nodes(
        C, [gene("NCBIGene:7157", "TP53"), gene("NCBIGene:1026", "CDKN1A")], actor=ACTOR
    )
    assert words(service) == ["added nodes TP53 (Gene), CDKN1A (Gene)"]
    edge, _ = service.add_edge(
        C, EdgeInput(source="NCBIGene:7157", target="NCBIGene:4609", label="regulates"), actor=ACTOR
    )
    assert words(service) == ["linked TP53 to MYC (regulates)"]
    service.add_edge(
        C, EdgeInput(source="NCBIGene:7157", target="NCBIGene:1026", label="activates"), actor=ACTOR
    )
    service.update_edge(C, edge.id, EdgePatch(label="represses"), actor=ACTOR)
    assert words(service) == ["changed the link TP53 to MYC (represses)"]
    service.update_node(C, "NCBIGene:4609", NodePatch(label="c-Myc"), actor=ACTOR)
    assert words(service) == ["changed node c-Myc (Gene)"]
    service.update_node(C, "NCBIGene:4609", NodePatch(position=Position(x=1, y=2)), actor=ACTOR)
    assert words(service) == ["moved node c-Myc (Gene)"]
    service.remove_node(C, "NCBIGene:1026", actor=ACTOR)
    assert words(service) == ["deleted node CDKN1A (Gene) and 1 link with them"]
    service.remove_edge(C, edge.id, actor=ACTOR)
    assert words(service) == ["removed the link TP53 to c-Myc (represses)"]
    service.merge_nodes(C, "NCBIGene:7157", ["NCBIGene:4609"], actor=ACTOR)
    assert words(service) == ["merged c-Myc (Gene) into TP53 (Gene)"]
    service.revert(C, 1, actor=ACTOR)
    assert words(service) == ["went back to version 1"]
    service.clear(C, actor=ACTOR)
    assert words(service) == ["cleared the graph (1 node and 0 links)"]
    service.remove_nodes(C, NodeSelection(types=["Gene"]), actor=ACTOR)
    for line in words(service, 100):
        assert not any(term in line for term in INTERNAL), line


def test_an_import_is_counted_in_words(service: GraphService) -> None:
    graph = {
        "nodes": [{"id": f"X:{i}", "name": f"x{i}", "category": "Gene"} for i in range(12)],
        "links": [{"source": f"X:{i}", "target": f"X:{i + 1}", "label": "r"} for i in range(9)],
    }
    service.import_graph(C, graph, actor=ACTOR)
    assert words(service) == ["imported 12 nodes and 9 links"]
    again = [{"id": f"X:{i}", "name": f"x{i}", "category": "Gene"} for i in (10, 11)]
    service.import_graph(C, {"nodes": again, "links": []}, actor=ACTOR)
    assert words(service) == [
        "imported 0 nodes and 0 links, merged 2 nodes into ones already there"
    ]


def test_undo_and_redo_name_the_change_they_undid(service: GraphService) -> None:
    service.add_node(C, gene("NCBIGene:4609", "MYC"), actor=ACTOR)
    service.add_node(C, gene("NCBIGene:7157", "TP53"), actor=ACTOR)
    undone, _ = service.undo(C, actor=ACTOR)
    assert undone.description == "undid: added node TP53 (Gene)"
    redone, _ = service.redo(C, actor=ACTOR)
    assert redone.description == "redid: added node TP53 (Gene)"
    # the changes undone are read even when the page leaves them out
    assert words(service, 2) == ["redid: added node TP53 (Gene)", "undid: added node TP53 (Gene)"]
    assert service.changeset(C, 3).description == "undid: added node TP53 (Gene)"


def test_bulk_changes_are_counted_past_a_few_names(service: GraphService) -> None:
    service.add_nodes(C, [gene(f"X:{i}", f"x{i}") for i in range(5)], actor=ACTOR)
    assert words(service) == ["added 5 nodes"]


def test_a_change_recorded_before_the_words_is_described_by_its_counts() -> None:
    old = ChangesetSummary(
        version=4, kind="edit", command="batch", actor="a", created_at="2026-01-01T00:00:00Z",
        summary={"add_node": 2, "remove_edge": 1},
    )  # fmt: skip
    assert describe(old) == "added 2 nodes, removed 1 link"
    undo = old.model_copy(update={"version": 5, "kind": "undo", "target_version": 4})
    assert describe(undo, old) == "undid: added 2 nodes, removed 1 link"
    assert describe(undo) == "undid: the change of version 4"


def test_diffs_name_nodes_with_their_ids(service: GraphService) -> None:
    service.add_nodes(C, [gene("NCBIGene:4609", "MYC"), gene("NCBIGene:7157", "TP53")], actor=ACTOR)
    service.add_edge(
        C, EdgeInput(source="NCBIGene:7157", target="NCBIGene:4609", label="regulates"), actor=ACTOR
    )
    service.remove_node(C, "NCBIGene:4609", actor=ACTOR)
    sections = dict(diff_sections(service.diff(C, 1, 3)))
    assert sections["Nodes removed"] == ["MYC (NCBIGene:4609), Gene"]
    assert sections["Links removed"] == []
    assert dict(diff_sections(service.diff(C, 2, 3)))["Links removed"] == [
        "TP53 (NCBIGene:7157) → MYC (NCBIGene:4609) (regulates)"
    ]
    assert with_id("X:1", "X:1") == "X:1"


def test_rest_history_carries_the_words(client: TestClient, auth: dict[str, str]) -> None:
    node = {"id": "NCBIGene:4609", "label": "MYC", "type": "Gene"}
    assert client.post("/api/graph/rest/nodes", json=node, headers=auth).status_code == 201
    assert client.post("/api/graph/rest/undo", headers=auth).status_code == 200
    page = client.get("/api/graph/rest/history", headers=auth).json()["data"]
    assert [i["description"] for i in page["items"]] == [
        "undid: added node MYC (Gene)",
        "added node MYC (Gene)",
    ]
