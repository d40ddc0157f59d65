"""How long a large import, or any other bulk write, holds off writes to other graphs (issue 10:
at most a second; issue 29, M7: every Graph Mode bulk write).

A writer in another process (as a second server would be) adds nodes to its own graph, one at a
time, first alone (the baseline: its writes with nothing else running), then while each bulk
write runs in this process: a 20,000-node import, a re-import that changes every row of it, a
merge of 10,000 of its nodes into one (26 s under SQLite's write lock at first), the undo and the
redo of that merge, and on a graph of 10,000 nodes and links: a batch of 10,000 addNode, updates
of its 10,000 edges, the removal of its 10,000 nodes, clearing it, and a revert to version 1. It
prints the writer's slowest and median write in each phase, and their ratio to the baseline. The
tests in `tests/graphmode/test_import_lock.py` check each write's own lock time in CPU seconds,
which load does not stretch; this script gives the wall time, which a quiet machine must keep
under a second.

Run: .venv/bin/python benchmarks/import_lock_bench.py [--database-url URL] [--nodes N]
     (default: SQLite in a temporary directory)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.schemas import AddNodeOp, EdgeUpdate, NodeInput, NodeSelection
from graphwright.graphmode.service import GraphService

BULK = 10_000  # the most one request may name (max_bulk_items)


def graph(size: int, suffix: str = "") -> dict[str, Any]:
    return {
        "nodes": [{"id": f"N:{i}", "name": f"node {i}{suffix}", "category": "Gene",
                   "evidence": [f"PMID:{i}{suffix}"]} for i in range(size)],
        "links": [{"source": f"N:{i}", "target": f"N:{(i * 7 + 1) % size}", "label": "related_to",
                   "evidence": [f"PMID:{i}{suffix}"]} for i in range(size)],
    }  # fmt: skip


def writer(url: str, graph_id: str, phase: str, stop: Connection) -> None:
    """Add nodes to the writer's graph until told to stop; send the seconds of each write."""
    database = Database(url, migrate=False)
    service = GraphService(database, create_graph_events(database))
    seconds: list[float] = []
    while not stop.poll():
        started = time.perf_counter()
        node = NodeInput(id=f"{phase}:{len(seconds)}", label="b", type="t")
        service.add_node(graph_id, node, actor="bystander")
        seconds.append(time.perf_counter() - started)
    stop.send(seconds)
    database.dispose()


def writes_during(url: str, graph_id: str, phase: str, job: Any) -> list[float]:
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=writer, args=(url, graph_id, phase, theirs))
    process.start()
    time.sleep(2.0)  # the writer is up and writing
    job()
    ours.send("stop")
    seconds = ours.recv()
    process.join()
    return seconds


def report(name: str, seconds: list[float], baseline: float) -> None:
    slowest, median = max(seconds), statistics.median(seconds)
    ratio = slowest / baseline
    print(f"{name:45} {len(seconds):6,} writes  median {median * 1000:7.1f} ms  "
          f"slowest {slowest * 1000:7.1f} ms ({ratio:5.1f}x the baseline's)")  # fmt: skip


class Phases:
    """The bulk writes, each timed from the writer's side (first alone, the baseline); the
    slowest write of each kept."""

    def __init__(self, url: str, bystander: str) -> None:
        self.url, self.bystander = url, bystander
        self.baseline = max(writes_during(url, bystander, "alone", lambda: time.sleep(5.0)))
        print(f"{'baseline: nothing else running':45} slowest {self.baseline * 1000:7.1f} ms")
        self.slowest: dict[str, float] = {}

    def measure(self, name: str, job: Callable[[], Any]) -> None:
        # The writer's node ids are unique per phase: its graph keeps every phase's nodes.
        phase = f"phase{len(self.slowest)}"
        seconds = writes_during(self.url, self.bystander, phase, job)
        self.slowest[name] = max(seconds)
        report(f"during {name}", seconds, self.baseline)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--nodes", type=int, default=20_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="import-lock-"))
    url = args.database_url or f"sqlite:///{folder / 'bench.db'}"
    database = Database(url)
    service = GraphService(database, create_graph_events(database))
    big, edits, batch, bystander = (
        f"import-lock-bench-{name}-{os.getpid()}" for name in ("big", "edits", "batch", "writer")
    )
    service.add_node(bystander, NodeInput(id="first", label="b", type="t"), actor="bystander")
    print(f"{url.split(':')[0]}, load {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    phases = Phases(url, bystander)
    phases.measure(
        f"a {args.nodes:,}-node import",
        lambda: service.import_graph(big, graph(args.nodes), actor="importer"),
    )
    phases.measure(
        "a re-import changing every row",
        lambda: service.import_graph(big, graph(args.nodes, "!"), actor="importer"),
    )
    removed = [f"N:{i}" for i in range(1, min(args.nodes, BULK + 1))]
    phases.measure(
        f"a merge of {len(removed):,} nodes into one",
        lambda: service.merge_nodes(big, "N:0", removed, actor="merger"),
    )
    phases.measure("the undo of that merge", lambda: service.undo(big, actor="merger"))
    phases.measure("its redo", lambda: service.redo(big, actor="merger"))
    additions = [
        AddNodeOp(op="addNode", node=NodeInput(id=f"A:{i}", label="a", type="t"))
        for i in range(BULK)
    ]
    phases.measure(
        f"a batch of {BULK:,} addNode", lambda: service.batch(batch, additions, actor="editor")
    )
    bulk_edits(service, phases, edits)
    worst = max(phases.slowest.values())
    print(f"target: no write held off for more than 1 s: {'met' if worst < 1.0 else 'NOT met'} "
          f"(slowest {worst:.2f} s); load {os.getloadavg()[0]:.2f}")  # fmt: skip
    for graph_id in (big, edits, batch, bystander):  # leave a database that was given as it was
        service.delete_graph(graph_id)
    database.dispose()


def bulk_edits(service: GraphService, phases: Phases, graph_id: str) -> None:
    """The bulk edits of a graph of BULK nodes and links, and its revert to version 1, the
    import: it replays all of them."""
    service.import_graph(graph_id, graph(BULK), actor="importer")
    links = service.to_graph(graph_id)["links"]
    updates = [EdgeUpdate(id=link["id"], label="s") for link in links]
    phases.measure(
        f"updates of {BULK:,} edges",
        lambda: service.update_edges(graph_id, updates, actor="editor"),
    )
    selection = NodeSelection(ids=[f"N:{i}" for i in range(BULK)])
    phases.measure(
        f"the removal of {BULK:,} nodes",
        lambda: service.remove_nodes(graph_id, selection, actor="editor"),
    )
    service.undo(graph_id, actor="editor")
    phases.measure(
        f"clearing {BULK:,} nodes and links", lambda: service.clear(graph_id, actor="editor")
    )
    phases.measure(
        "a revert of it all to version 1", lambda: service.revert(graph_id, 1, actor="editor")
    )
    summary = service.summary(graph_id)
    assert (summary.node_count, summary.edge_count) == (BULK, BULK), summary


if __name__ == "__main__":
    main()
