"""What the lock tests share (`test_import_lock.py`): a writer on another graph in another
process, the CPU time of the write transactions, and a write slipped in after planning."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.schemas import NodeInput
from graphwright.graphmode.service import GraphService

# Issue 10: no other writer held off for more than a second. The import's own share is held to
# less, so that the other writer's wait (its own write included) stays under the second.
LOCK_CPU_SECONDS = 0.7


def big_graph(size: int, *, suffix: str = "") -> dict[str, Any]:
    return {
        "nodes": [
            {"id": f"N:{i}", "name": f"node {i}", "category": "Gene",
             "evidence": [f"PMID:{i}{suffix}"]}
            for i in range(size)
        ],
        "links": [
            {"source": f"N:{i}", "target": f"N:{(i * 7 + 1) % size}", "label": "related_to",
             "evidence": [f"PMID:{i}{suffix}"]}
            for i in range(size)
        ],
    }  # fmt: skip


def bystander_writes(url: str, graph_id: str, stop: Connection) -> None:
    """In a process of its own (as another server would be): add nodes to another graph until
    told to stop, then send the slowest write's seconds and the number of writes."""
    database = Database(url, migrate=False)
    service = GraphService(database, create_graph_events(database))
    slowest, count = 0.0, 0
    while not stop.poll():
        started = time.perf_counter()
        service.add_node(graph_id, NodeInput(id=f"B:{count}", label="b", type="t"), actor="b")
        slowest = max(slowest, time.perf_counter() - started)
        count += 1
    stop.send((slowest, count))
    database.dispose()


@dataclass
class Waits:
    bystander_slowest: float  # seconds the slowest write on the other graph took
    lock_cpu: float  # CPU seconds the job's write transactions used (its lock time when idle)
    lock_wall: float


def writes_during(
    service: GraphService,
    database: Database,
    job: Callable[[], Any],
    monkeypatch: Any,
    bystander_graph: str = "bystander",
) -> Waits:
    """Run `job` while another process writes to another graph, `bystander_graph` (one per
    call)."""
    cpu, wall = [0.0], [0.0]
    write = database.write

    @contextmanager
    def timed_write(*, pipelined: bool = False) -> Iterator[Any]:
        started_cpu, started = time.thread_time(), time.perf_counter()
        with write(pipelined=pipelined) as session:
            yield session
        cpu[0] += time.thread_time() - started_cpu
        wall[0] += time.perf_counter() - started

    ours, theirs = multiprocessing.get_context("fork").Pipe()
    bystander = multiprocessing.get_context("fork").Process(
        target=bystander_writes, args=(database.url, bystander_graph, theirs)
    )
    bystander.start()
    try:
        while service.version(bystander_graph) < 3:  # it is writing
            time.sleep(0.01)
        monkeypatch.setattr(database, "write", timed_write)
        job()
    finally:
        monkeypatch.setattr(database, "write", write)
        ours.send("stop")
        slowest, count = ours.recv()
        bystander.join()
    assert service.version(bystander_graph) == count
    return Waits(slowest, cpu[0], wall[0])


def check(waits: Waits, bound: float = LOCK_CPU_SECONDS) -> None:
    """The lock is held only for the database's own work, which is measured as CPU time: on an
    idle machine that is the time the lock is held. Under load the wall time stretches with the
    load, so it is printed, not judged."""
    assert waits.lock_cpu < bound, (
        f"the write transactions used {waits.lock_cpu:.2f} s of CPU "
        f"({waits.lock_wall:.2f} s wall; a write on another graph waited "
        f"{waits.bystander_slowest:.2f} s)"
    )
    print(waits)


def planned_then(
    service: GraphService, monkeypatch: Any, interleave: Callable[[], Any]
) -> list[int]:
    """Run `interleave` (another write) once, after the first planning of a write and before its
    transaction; the plannings of the write (not of `interleave`)."""
    plan = GraphService._planned
    calls: list[int] = []
    interleaving: list[int] = []

    def plan_then_interleave(self: GraphService, *args: Any, **kwargs: Any) -> Any:
        planned = plan(self, *args, **kwargs)
        if not interleaving:
            calls.append(1)
            if len(calls) == 1:
                interleaving.append(1)
                interleave()
                interleaving.clear()
        return planned

    monkeypatch.setattr(GraphService, "_planned", plan_then_interleave)
    return calls


def sorted_graph(service: GraphService) -> tuple[list[Any], list[Any]]:
    found = service.to_graph("big")  # in the order the database reads the rows
    return (
        sorted(found["nodes"], key=lambda node: node["id"]),
        sorted(found["links"], key=lambda link: link["id"]),
    )
