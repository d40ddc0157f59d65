"""How long a large import holds off writes to other graphs (issue 10: at most a second).

A writer in another process (as a second server would be) adds nodes to its own graph, one at a
time, first alone (the baseline: its writes with nothing else running), then while a 20,000-node
import, a re-import that changes every row of it, and a merge of 10,000 of its nodes into one
(issue 29, M7: 26 s under SQLite's write lock at first) run in this process. It prints the
writer's slowest and median write in each phase, and their ratio to the baseline. The test
`tests/graphmode/test_import_lock.py` checks the import's own lock time in CPU seconds, which
load does not stretch; this script gives the wall time, which a quiet machine must keep under a
second.

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
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.schemas import NodeInput
from graphwright.graphmode.service import GraphService

MERGED = 10_000  # nodes merged into one: the most one request may name (max_bulk_items)


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
    print(f"{name:38} {len(seconds):6,} writes  median {median * 1000:7.1f} ms  "
          f"slowest {slowest * 1000:7.1f} ms ({ratio:5.1f}x the baseline's)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--nodes", type=int, default=20_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="import-lock-"))
    url = args.database_url or f"sqlite:///{folder / 'bench.db'}"
    database = Database(url)
    service = GraphService(database, create_graph_events(database))
    big, bystander = (f"import-lock-bench-{name}-{os.getpid()}" for name in ("big", "writer"))
    service.add_node(bystander, NodeInput(id="first", label="b", type="t"), actor="bystander")
    print(f"{url.split(':')[0]}, load {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    alone = writes_during(url, bystander, "alone", lambda: time.sleep(5.0))
    baseline = max(alone)
    report("baseline: nothing else running", alone, baseline)
    imported = writes_during(
        url, bystander, "import",
        lambda: service.import_graph(big, graph(args.nodes), actor="importer"),
    )  # fmt: skip
    report(f"during a {args.nodes:,}-node import", imported, baseline)
    changed = writes_during(
        url, bystander, "reimport",
        lambda: service.import_graph(big, graph(args.nodes, "!"), actor="importer"),
    )  # fmt: skip
    report("during a re-import changing every row", changed, baseline)
    removed = [f"N:{i}" for i in range(1, min(args.nodes, MERGED + 1))]
    merged = writes_during(
        url, bystander, "merge",
        lambda: service.merge_nodes(big, "N:0", removed, actor="merger"),
    )  # fmt: skip
    report(f"during a merge of {len(removed):,} nodes into one", merged, baseline)
    worst = max(max(imported), max(changed), max(merged))
    print(f"target: no write held off for more than 1 s: {'met' if worst < 1.0 else 'NOT met'} "
          f"(slowest {worst:.2f} s)")  # fmt: skip
    for graph_id in (big, bystander):  # leave a database that was given as it was
        service.delete_graph(graph_id)
    database.dispose()


if __name__ == "__main__":
    main()
