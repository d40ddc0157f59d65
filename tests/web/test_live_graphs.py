"""The shared live snapshot follows the graph change by change, and agrees with a fresh read."""

from __future__ import annotations

from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.schemas import EdgeInput, NodeInput, NodePatch, NodeSelection
from graphwright.graphmode.service import GraphService
from graphwright.web.live_graphs import LiveGraphs


def view(live: LiveGraphs, cid: str) -> tuple[int, dict, dict]:
    snapshot = live.current(cid)
    nodes = {k: (v["label"], v["type"], v["position"]) for k, v in snapshot.nodes.items()}
    edges = {k: (v["source"], v["target"], v["label"]) for k, v in snapshot.edges.items()}
    return snapshot.version, nodes, edges


def test_a_snapshot_follows_every_kind_of_change(database: Database) -> None:
    graphs = GraphService(database, create_graph_events(database))
    live = LiveGraphs(graphs)
    assert view(live, "c") == (0, {}, {})
    graphs.import_graph(
        "c",
        {"nodes": [{"id": "A:1", "name": "a"}, {"id": "B:1", "name": "b"}],
         "links": [{"source": "A:1", "target": "B:1", "label": "binds"}]},
        actor="t",
    )  # fmt: skip
    assert view(live, "c")[0] == 1
    steps = [
        lambda: graphs.add_node("c", NodeInput(id="C:1", label="c", type="gene"), actor="t"),
        lambda: graphs.add_edge("c", EdgeInput(source="C:1", target="A:1", label="x"), actor="t"),
        lambda: graphs.update_node("c", "A:1", NodePatch(label="A!", type="t2"), actor="t"),
        lambda: graphs.remove_node("c", "B:1", actor="t"),
        lambda: graphs.undo("c", actor="t"),
        lambda: graphs.redo("c", actor="t"),
        lambda: graphs.merge_nodes("c", "A:1", ["C:1"], actor="t"),
        lambda: graphs.remove_nodes("c", NodeSelection(types=["t2"]), actor="t"),
        lambda: graphs.undo("c", actor="t"),
        lambda: graphs.clear("c", actor="t"),
        lambda: graphs.undo("c", actor="t"),
    ]
    for step in steps:
        step()
        followed = view(live, "c")
        fresh = view(LiveGraphs(graphs), "c")
        assert followed == fresh
    assert view(live, "c")[0] == 12
