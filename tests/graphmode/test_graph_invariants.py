"""hypothesis: any sequence of operations, then undo-all gives the empty graph, and redoing what
was undone gives the same state again; state_at agrees with the live state at every version."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphwright.errors import Conflict, InvalidInput, NotFound
from graphwright.graphmode.schemas import EdgeInput, EdgePatch, NodeInput, NodePatch, NodeSelection
from graphwright.graphmode.service import GraphService

IDS = [f"X:{i}" for i in range(5)]
ACTOR = "hypothesis"

node_ids = st.sampled_from(IDS)
operations = st.one_of(
    st.tuples(st.just("add_node"), node_ids, st.sampled_from(["gene", "drug"])),
    st.tuples(st.just("add_edge"), node_ids, node_ids, st.sampled_from(["r", "s"])),
    st.tuples(st.just("update_node"), node_ids, st.integers(0, 3)),
    st.tuples(st.just("update_edge"), st.integers(0, 9), st.sampled_from(["r", "t"])),
    st.tuples(st.just("remove_node"), node_ids),
    st.tuples(st.just("remove_edge"), st.integers(0, 9)),
    st.tuples(st.just("remove_type"), st.sampled_from(["gene", "drug"])),
    st.tuples(st.just("merge"), node_ids, node_ids),
    st.tuples(st.just("import"), st.lists(node_ids, min_size=1, max_size=3, unique=True)),
    st.tuples(st.just("clear")),
    st.tuples(st.just("undo")),
    st.tuples(st.just("redo")),
)


def snapshot(service: GraphService, conversation: str) -> tuple[Any, Any]:
    state = service.state(conversation)
    return (
        [(n.id, n.label, n.type, n.data) for n in state.nodes],
        sorted((e.id, e.source, e.target, e.label, e.type, e.data) for e in state.edges),
    )


def run(service: GraphService, conversation: str, operation: tuple) -> None:
    name, *args = operation
    edges = service.state(conversation).edges if service.version(conversation) else []
    match name:
        case "add_node":
            service.add_node(
                conversation, NodeInput(id=args[0], label=args[0], type=args[1]), actor=ACTOR
            )
        case "add_edge":
            edge = EdgeInput(source=args[0], target=args[1], label=args[2], data={"e": [1]})
            service.add_edge(conversation, edge, actor=ACTOR)
        case "update_node":
            patch = NodePatch(data={"n": args[1]}, label=f"L{args[1]}")
            service.update_node(conversation, args[0], patch, actor=ACTOR)
        case "update_edge" if edges:
            edge_id = edges[args[0] % len(edges)].id
            service.update_edge(conversation, edge_id, EdgePatch(label=args[1]), actor=ACTOR)
        case "remove_node":
            service.remove_node(conversation, args[0], actor=ACTOR)
        case "remove_edge" if edges:
            service.remove_edge(conversation, edges[args[0] % len(edges)].id, actor=ACTOR)
        case "remove_type":
            service.remove_nodes(conversation, NodeSelection(types=[args[0]]), actor=ACTOR)
        case "merge":
            service.merge_nodes(conversation, args[0], [args[1]], actor=ACTOR)
        case "import":
            graph = {
                "nodes": [{"id": i, "name": i, "category": "gene", "imp": True} for i in args[0]],
                "links": [{"source": args[0][0], "target": i, "label": "imp",
                           "evidence": ["PMID:7"]} for i in args[0]],
            }  # fmt: skip
            service.import_graph(conversation, graph, actor=ACTOR)
        case "clear":
            service.clear(conversation, actor=ACTOR)
        case "undo":
            service.undo(conversation, actor=ACTOR)
        case "redo":
            service.redo(conversation, actor=ACTOR)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(operations, min_size=1, max_size=12))
def test_undo_all_then_redo_all(service: GraphService, ops: list[tuple]) -> None:
    conversation = f"h-{uuid.uuid4().hex[:10]}"
    service.add_node(conversation, NodeInput(id="X:0", label="X:0", type="gene"), actor=ACTOR)
    states = {1: snapshot(service, conversation)}
    for operation in ops:
        try:
            run(service, conversation, operation)
        except (NotFound, Conflict, InvalidInput):
            if operation[0] == "import":
                raise  # a valid graph, which the graph may take whatever it holds
            continue  # a refused operation changes nothing, checked below
        finally:
            states[service.version(conversation)] = snapshot(service, conversation)
    for version, state in states.items():
        at = service.state_at(conversation, version)
        assert (
            [(n.id, n.label, n.type, n.data) for n in at.nodes],
            sorted((e.id, e.source, e.target, e.label, e.type, e.data) for e in at.edges),
        ) == state
    final = snapshot(service, conversation)
    undone = 0
    while True:
        try:
            service.undo(conversation, actor=ACTOR)
        except Conflict:
            break
        undone += 1
    assert snapshot(service, conversation) == ([], [])
    for _ in range(undone):
        service.redo(conversation, actor=ACTOR)
    assert snapshot(service, conversation) == final
