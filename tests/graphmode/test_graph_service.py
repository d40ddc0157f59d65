"""GraphService on a real database: operations, undo/redo, history, time travel, merge, import."""

from __future__ import annotations

import pytest

from graphwright.errors import Conflict, InvalidInput, NotFound
from graphwright.graphmode.schemas import (
    AddEdgeOp,
    AddNodeOp,
    EdgeInput,
    EdgePatch,
    EdgeUpdate,
    NodeInput,
    NodePatch,
    NodeSelection,
    RemoveNodeOp,
)
from graphwright.graphmode.service import GraphService

C = "conv-1"
ACTOR = "test"


def gene(node_id: str, label: str | None = None, kind: str = "gene") -> NodeInput:
    return NodeInput(id=node_id, label=label or node_id, type=kind)


def link(source: str, target: str, label: str = "related_to", **data: object) -> EdgeInput:
    return EdgeInput(source=source, target=target, label=label, data=dict(data))


def small_graph(service: GraphService) -> None:
    service.add_nodes(C, [gene("A:1"), gene("B:1"), gene("C:1", kind="disease")], actor=ACTOR)
    service.add_edges(C, [link("A:1", "B:1"), link("B:1", "C:1"), link("C:1", "A:1")], actor=ACTOR)


def snapshot(service: GraphService) -> tuple[list[tuple], list[tuple]]:
    state = service.state(C)
    return (
        [(n.id, n.label, n.type, n.data, n.position) for n in state.nodes],
        sorted((e.id, e.source, e.target, e.label, e.type, e.data) for e in state.edges),
    )


def test_add_node_normalises_curie_and_generates_missing_ids(service: GraphService) -> None:
    node, version = service.add_node(C, gene("ncbigene:7157", "TP53"), actor=ACTOR)
    assert (node.id, version) == ("NCBIGene:7157", 1)
    generated, version = service.add_node(C, NodeInput(label="x", type="other"), actor=ACTOR)
    assert generated.id.startswith("node_") and version == 2
    assert service.get_node(C, "NCBIGENE:7157").label == "TP53"


def test_duplicate_node_id_is_a_conflict_naming_it(service: GraphService) -> None:
    service.add_node(C, gene("A:1"), actor=ACTOR)
    with pytest.raises(Conflict, match="'A:1'"):
        service.add_node(C, gene("A:1"), actor=ACTOR)
    assert service.version(C) == 1


def test_edge_to_missing_node_is_rejected_naming_it(service: GraphService) -> None:
    service.add_node(C, gene("A:1"), actor=ACTOR)
    with pytest.raises(NotFound, match="no node 'B:2'"):
        service.add_edge(C, link("A:1", "B:2"), actor=ACTOR)
    assert service.version(C) == 1


def test_reads_of_unknown_conversation_are_not_found(service: GraphService) -> None:
    with pytest.raises(NotFound, match="no graph"):
        service.state("nobody")
    assert service.version("nobody") == 0


def test_update_node_merges_data_and_removes_null_keys(service: GraphService) -> None:
    service.add_node(
        C, NodeInput(id="A:1", label="a", type="gene", data={"x": 1, "y": 2}), actor=ACTOR
    )
    node, _ = service.update_node(
        C, "A:1", NodePatch(label="A", data={"y": None, "z": 3}), actor=ACTOR
    )
    assert (node.label, node.data) == ("A", {"x": 1, "z": 3})
    service.undo(C, actor=ACTOR)
    assert service.get_node(C, "A:1").data == {"x": 1, "y": 2}


def test_remove_node_removes_its_edges_and_undo_restores_them(service: GraphService) -> None:
    small_graph(service)
    before = snapshot(service)
    removal, _ = service.remove_node(C, "B:1", actor=ACTOR)
    assert removal.node_ids == ["B:1"] and removal.edge_count == 2
    state = service.state(C)
    assert [(e.source, e.target) for e in state.edges] == [("C:1", "A:1")]
    service.undo(C, actor=ACTOR)
    assert snapshot(service) == before


def test_update_and_remove_edge(service: GraphService) -> None:
    small_graph(service)
    edge = service.state(C).edges[0]
    updated, _ = service.update_edge(C, edge.id, EdgePatch(label="inhibits"), actor=ACTOR)
    assert updated.label == "inhibits"
    service.remove_edge(C, edge.id, actor=ACTOR)
    with pytest.raises(NotFound, match=edge.id):
        service.get_edge(C, edge.id)
    with pytest.raises(NotFound):
        service.update_edges(C, [EdgeUpdate(id="nope", label="x")], actor=ACTOR)


def test_versions_are_gapless_and_history_records_each_operation(service: GraphService) -> None:
    small_graph(service)
    service.remove_node(C, "A:1", actor="alice")
    page = service.history(C, limit=10)
    assert [item.version for item in page.items] == [3, 2, 1]
    assert (page.items[0].command, page.items[0].actor) == ("removeNode", "alice")
    detail = service.changeset(C, 3)
    assert detail.forward == [{"op": "remove_node", "id": "A:1"}]
    assert [op["op"] for op in detail.inverse] == ["add_node", "add_edge", "add_edge"]


def test_expected_version_mismatch_changes_nothing(service: GraphService) -> None:
    service.add_node(C, gene("A:1"), actor=ACTOR)
    with pytest.raises(Conflict) as caught:
        service.add_node(C, gene("B:1"), actor=ACTOR, expected_version=0)
    assert caught.value.current_version == 1
    service.add_node(C, gene("B:1"), actor=ACTOR, expected_version=1)
    assert service.version(C) == 2


def test_undo_redo_and_new_edit_drops_redo_branch(service: GraphService) -> None:
    service.add_node(C, gene("A:1"), actor=ACTOR)
    service.add_node(C, gene("B:1"), actor=ACTOR)
    undone, version = service.undo(C, actor=ACTOR)
    assert (undone.kind, undone.target_version, version) == ("undo", 2, 3)
    assert [n.id for n in service.state(C).nodes] == ["A:1"]
    redone, version = service.redo(C, actor=ACTOR)
    assert (redone.target_version, version) == (2, 4)
    assert [n.id for n in service.state(C).nodes] == ["A:1", "B:1"]
    service.undo(C, actor=ACTOR)
    service.undo(C, actor=ACTOR)
    assert service.state(C).nodes == []
    with pytest.raises(Conflict, match="Nothing to undo"):
        service.undo(C, actor=ACTOR)
    service.add_node(C, gene("Z:1"), actor=ACTOR)
    newest = service.history(C, limit=1).items[0]
    assert newest.dropped_versions == [1, 2]
    with pytest.raises(Conflict, match="Nothing to redo"):
        service.redo(C, actor=ACTOR)


def test_bulk_remove_by_type_with_preview(service: GraphService) -> None:
    small_graph(service)
    preview, version = service.remove_nodes(
        C, NodeSelection(types=["gene"]), actor=ACTOR, preview=True
    )
    assert (preview.preview, preview.node_ids, preview.edge_count) == (True, ["A:1", "B:1"], 3)
    assert version == 2 and service.version(C) == 2
    kept, _ = service.remove_nodes(C, NodeSelection(exclude_types=["disease"]), actor=ACTOR)
    assert kept.node_ids == ["A:1", "B:1"]
    assert [n.id for n in service.state(C).nodes] == ["C:1"]


def test_bulk_remove_by_degree(service: GraphService) -> None:
    small_graph(service)
    service.add_node(C, gene("D:1"), actor=ACTOR)
    service.add_edge(C, link("A:1", "D:1"), actor=ACTOR)
    preview, _ = service.remove_nodes(C, NodeSelection(min_degree=3), actor=ACTOR, preview=True)
    assert preview.node_ids == ["A:1"]
    exact, _ = service.remove_nodes(C, NodeSelection(degree=1), actor=ACTOR, preview=True)
    assert exact.node_ids == ["D:1"]
    typed, _ = service.remove_nodes(C, NodeSelection(max_degree=2, type="disease"), actor=ACTOR)
    assert typed.node_ids == ["C:1"]
    with pytest.raises(ValueError, match="exactly one"):
        NodeSelection(ids=["A:1"], min_degree=1)


def test_bulk_remove_edges_preview_then_apply(service: GraphService) -> None:
    small_graph(service)
    ids = [e.id for e in service.state(C).edges][:2]
    preview, _ = service.remove_edges(C, ids, actor=ACTOR, preview=True)
    assert preview.edge_ids == sorted(ids) and len(service.state(C).edges) == 3
    service.remove_edges(C, ids, actor=ACTOR)
    assert len(service.state(C).edges) == 1


def test_batch_is_atomic(service: GraphService) -> None:
    service.add_node(C, gene("A:1"), actor=ACTOR)
    ops = [
        AddNodeOp(op="addNode", node=gene("B:1")),
        AddEdgeOp(op="addEdge", edge=link("A:1", "B:1")),
        RemoveNodeOp(op="removeNode", id="MISSING:1"),
    ]
    with pytest.raises(NotFound, match="MISSING:1"):
        service.batch(C, ops, actor=ACTOR)
    assert service.version(C) == 1 and len(service.state(C).nodes) == 1
    results, version = service.batch(C, ops[:2], actor=ACTOR)
    assert version == 2 and len(results) == 2
    service.undo(C, actor=ACTOR)
    assert [n.id for n in service.state(C).nodes] == ["A:1"]


def test_state_filters_and_pages(service: GraphService) -> None:
    small_graph(service)
    page = service.state(C, limit=2)
    assert [n.id for n in page.nodes] == ["A:1", "B:1"] and page.metadata.has_more
    assert len(page.edges) == 2
    rest = service.state(C, offset=2, limit=2)
    assert [n.id for n in rest.nodes] == ["C:1"] and not rest.metadata.has_more
    assert len(rest.edges) == 1
    assert {e.id for e in page.edges + rest.edges} == {e.id for e in service.state(C).edges}
    assert page.metadata.edge_count == 3
    genes = service.state(C, node_types=["gene"])
    assert [(e.source, e.target) for e in genes.edges] == [("A:1", "B:1")]
    chosen = service.state(C, ids=["B:1", "C:1"])
    assert [(e.source, e.target) for e in chosen.edges] == [("B:1", "C:1")]
    assert service.state(C, edge_types=["nothing"]).edges == []


def test_state_at_diff_and_revert(service: GraphService) -> None:
    small_graph(service)
    service.update_node(C, "A:1", NodePatch(label="renamed"), actor=ACTOR)
    service.remove_node(C, "C:1", actor=ACTOR)
    at_two = service.state_at(C, 2)
    assert [n.label for n in at_two.nodes] == ["A:1", "B:1", "C:1"] and len(at_two.edges) == 3
    assert service.state_at(C, 0).nodes == []
    diff = service.diff(C, 2, 4)
    assert [n.id for n in diff.nodes_removed] == ["C:1"]
    assert [(c.before.label, c.after.label) for c in diff.nodes_changed] == [("A:1", "renamed")]
    assert len(diff.edges_removed) == 2
    with pytest.raises(NotFound, match="Version 9"):
        service.state_at(C, 9)
    summary, version = service.revert(C, 2, actor=ACTOR)
    assert (summary.command, version) == ("revert", 5)
    assert snapshot(service)[0] == [
        (n.id, n.label, n.type, n.data, n.position) for n in at_two.nodes
    ]
    assert len(service.state(C).edges) == 3
    service.undo(C, actor=ACTOR)
    assert [n.id for n in service.state(C).nodes] == ["A:1", "B:1"]


def test_clear_is_one_small_changeset_and_undoable(service: GraphService) -> None:
    small_graph(service)
    before = snapshot(service)
    removal, _ = service.clear(C, actor=ACTOR)
    assert (removal.node_count, removal.edge_count) == (3, 3)
    assert service.state(C).nodes == []
    assert service.changeset(C, 3).inverse == [{"op": "unstash", "scope": "all", "version": 3}]
    assert len(service.state_at(C, 2).edges) == 3
    service.undo(C, actor=ACTOR)
    assert snapshot(service) == before
    service.redo(C, actor=ACTOR)
    assert service.state(C).nodes == []


def test_import_merges_by_core_rules_and_undo_redo(service: GraphService) -> None:
    service.add_node(
        C, NodeInput(id="NCBIGene:7157", label="TP53", type="gene", data={"a": 1}), actor=ACTOR
    )
    service.add_node(C, NodeInput(id="MONDO:1", label="d", type="disease"), actor=ACTOR)
    service.add_edge(
        C, link("NCBIGene:7157", "MONDO:1", "associated_with", evidence=["PMID:1"]), actor=ACTOR
    )
    incoming = {
        "nodes": [
            {"id": "ncbigene:7157", "name": "TP53", "category": "gene", "b": 2},
            {"id": "MONDO:1", "name": "d"},
            {"id": "CHEBI:9", "name": "drug", "category": "drug"},
        ],
        "links": [
            {"source": "ncbigene:7157", "target": "MONDO:1", "label": "associated_with",
             "evidence": ["PMID:2", "PMID:1"]},
            {"source": "CHEBI:9", "target": "NCBIGene:7157", "label": "inhibits"},
        ],
    }  # fmt: skip
    report, version = service.import_graph(C, incoming, actor=ACTOR)
    assert (report.nodes_added, report.nodes_merged) == (1, 2)
    assert (report.edges_added, report.edges_merged) == (1, 1)
    tp53 = service.get_node(C, "NCBIGene:7157")
    assert tp53.data["a"] == 1 and tp53.data["b"] == 2
    merged_edge = next(e for e in service.state(C).edges if e.label == "associated_with")
    assert merged_edge.data["evidence"] == ["PMID:1", "PMID:2"]
    assert len(service.changeset(C, version).forward) < 10  # new rows are not listed
    service.undo(C, actor=ACTOR)
    state = service.state(C)
    assert [n.id for n in state.nodes] == ["MONDO:1", "NCBIGene:7157"]
    assert "b" not in state.nodes[1].data
    assert [e.data["evidence"] for e in state.edges] == [["PMID:1"]]
    assert len(service.state_at(C, version).nodes) == 3
    service.redo(C, actor=ACTOR)
    assert len(service.state(C).nodes) == 3 and len(service.state(C).edges) == 2


def test_an_import_naming_a_node_leaves_its_other_edges_alone(service: GraphService) -> None:
    """Importing a node the graph holds failed with "link 0 points to missing node 'B:1'" when
    that node had an edge to a node the import did not name."""
    for node_id in ("A:1", "B:1"):
        service.add_node(C, gene(node_id), actor=ACTOR)
    service.add_edge(C, link("A:1", "B:1"), actor=ACTOR)
    before = service.state(C)
    report, _ = service.import_graph(
        C, {"nodes": [{"id": "A:1", "name": "A:1", "x": 1}], "links": []}, actor=ACTOR
    )
    assert (report.nodes_added, report.nodes_merged) == (0, 1)
    state = service.state(C)
    assert service.get_node(C, "A:1").data["x"] == 1
    assert state.edges == before.edges


def test_an_import_keeps_the_id_of_a_stored_node_that_declares_equivalents(
    service: GraphService,
) -> None:
    """make test, stop 37 (hypothesis): X:3 had absorbed X:0 (so declares it equivalent), X:0 was
    added again, and importing X:3 merged it under the id X:0, its class's first id: the import
    inserted a second X:0 (UNIQUE violation). A stored node keeps its id, and two stored nodes are
    never made one by what one of them declares."""
    for node_id in ("X:3", "X:0"):
        service.add_node(C, gene(node_id), actor=ACTOR)
    service.add_edge(C, link("X:3", "X:0"), actor=ACTOR)
    service.merge_nodes(C, "X:3", ["X:0"], actor=ACTOR)
    service.add_node(C, gene("X:0", "again"), actor=ACTOR)
    service.add_edge(C, link("X:3", "X:0", "again"), actor=ACTOR)
    before = service.state(C)
    incoming = {
        "nodes": [{"id": "X:3", "name": "X:3", "category": "gene", "new": 1},
                  {"id": "X:5", "name": "X:5", "category": "gene", "equivalent_ids": ["X:6"]}],
        "links": [{"source": "X:3", "target": "X:5", "label": "imp"}],
    }  # fmt: skip
    report, _ = service.import_graph(C, incoming, actor=ACTOR)
    assert (report.nodes_added, report.nodes_merged) == (1, 1)
    state = service.state(C)
    nodes = {n.id: n for n in state.nodes}
    assert sorted(nodes) == ["X:0", "X:3", "X:5"]
    assert nodes["X:3"].data["new"] == 1
    assert nodes["X:3"].data["equivalent_ids"] == before.nodes[1].data["equivalent_ids"]
    assert nodes["X:0"] == next(n for n in before.nodes if n.id == "X:0")
    assert nodes["X:5"].data["equivalent_ids"] == ["X:5", "X:6"]
    assert [e for e in state.edges if e.label != "imp"] == before.edges
    assert [(e.source, e.target) for e in state.edges if e.label == "imp"] == [("X:3", "X:5")]


def test_import_rejects_bad_graph_without_change(service: GraphService) -> None:
    service.add_node(C, gene("A:1"), actor=ACTOR)
    with pytest.raises(InvalidInput, match="missing node"):
        service.import_graph(
            C, {"nodes": [{"id": "X:1"}], "links": [{"source": "X:1", "target": "Y:1"}]},
            actor=ACTOR,
        )  # fmt: skip
    assert service.version(C) == 1


def test_merge_nodes_repoints_edges_and_unions_evidence(service: GraphService) -> None:
    service.add_nodes(
        C,
        [
            NodeInput(id="NCBIGene:7157", label="TP53", type="gene", data={"syn": ["p53"]}),
            NodeInput(id="HGNC:11998", label="TP53", type="gene", data={"syn": ["TRP53"]}),
            gene("MONDO:1", kind="disease"),
            gene("CHEBI:1", kind="drug"),
        ],
        actor=ACTOR,
    )
    service.add_edges(
        C,
        [
            link("NCBIGene:7157", "MONDO:1", "associated_with", evidence=["PMID:1"]),
            link("HGNC:11998", "MONDO:1", "associated_with", evidence=["PMID:2"]),
            link("CHEBI:1", "HGNC:11998", "inhibits"),
        ],
        actor=ACTOR,
    )
    before = snapshot(service)
    kept, _ = service.merge_nodes(C, "NCBIGene:7157", ["HGNC:11998"], actor=ACTOR)
    assert kept.data["syn"] == ["p53", "TRP53"]
    assert "HGNC:11998" in kept.data["equivalent_ids"]
    state = service.state(C)
    assert [n.id for n in state.nodes] == ["CHEBI:1", "MONDO:1", "NCBIGene:7157"]
    edges = {(e.source, e.label, e.target): e.data for e in state.edges}
    assert set(edges) == {
        ("NCBIGene:7157", "associated_with", "MONDO:1"),
        ("CHEBI:1", "inhibits", "NCBIGene:7157"),
    }
    assert edges[("NCBIGene:7157", "associated_with", "MONDO:1")]["evidence"] == [
        "PMID:1",
        "PMID:2",
    ]
    service.undo(C, actor=ACTOR)
    assert snapshot(service) == before
    with pytest.raises(InvalidInput):
        service.merge_nodes(C, "MONDO:1", ["MONDO:1"], actor=ACTOR)


def test_neighbors_and_search(service: GraphService) -> None:
    small_graph(service)
    service.add_node(C, gene("Z:9", "lonely"), actor=ACTOR)
    around = service.neighbors(C, "A:1")
    assert [n.id for n in around.nodes] == ["A:1", "B:1", "C:1"]
    assert [n.id for n in service.search_nodes(C, "LONE")] == ["Z:9"]


def test_import_and_export_other_formats(service: GraphService) -> None:
    small_graph(service)
    exported = service.export(C, "kgx-jsonl")
    assert b"A:1" in (exported if isinstance(exported, bytes) else exported.encode())
    report, _ = service.import_graph("copy", exported, fmt="kgx-jsonl", actor=ACTOR)
    assert (report.nodes_added, report.edges_added) == (3, 3)
    copied = service.state("copy")
    assert [n.id for n in copied.nodes] == ["A:1", "B:1", "C:1"]
    assert {(e.source, e.target) for e in copied.edges} == {
        ("A:1", "B:1"),
        ("B:1", "C:1"),
        ("C:1", "A:1"),
    }
    with pytest.raises(InvalidInput):
        service.export(C, "no-such-format")
