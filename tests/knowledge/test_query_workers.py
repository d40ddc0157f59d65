"""QueryWorkers: up to `size` idle workers start ahead in a background thread; the queries that
come meanwhile use them rather than starting more; close stops those still starting; and the
time a worker takes to start (seconds on a busy machine) never counts against a query's limit."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import psutil
import pytest

from graphwright.knowledge import query_workers
from graphwright.knowledge.query_workers import QueryWorkers


def workers() -> set[int]:
    """This process's live query workers (not zombies, which other tests' children may be)."""
    found = set()
    for child in psutil.Process().children():
        try:
            if "graphwright.knowledge.query_workers" in " ".join(child.cmdline()):
                found.add(child.pid)
        except psutil.Error:  # ended, or a zombie
            continue
    return found


def wait_for_workers(count: int, before: set[int]) -> set[int]:
    deadline = time.monotonic() + 120
    while len(workers() - before) < count:
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.1)
    return workers() - before


async def test_started_ahead_workers_answer_the_first_queries() -> None:
    before = workers()
    pool = QueryWorkers(2)
    try:
        pool.start()  # returns at once: the workers start in a thread
        started = await asyncio.to_thread(wait_for_workers, 2, before)
        answers = await asyncio.gather(*(pool.check("ASK {}", timeout=30) for _ in range(4)))
        assert all(answer.kind == "ASK" for answer in answers)
        assert workers() - before == started
    finally:
        pool.close()


async def test_queries_during_the_start_wait_for_its_workers_not_start_more() -> None:
    before = workers()
    pool = QueryWorkers(2)
    try:
        pool.start()
        answers = await asyncio.gather(*(pool.check("ASK {}", timeout=120) for _ in range(6)))
        assert all(answer.kind == "ASK" for answer in answers)
        assert len(workers() - before) <= 2
    finally:
        pool.close()


def test_close_during_the_start_leaves_no_worker() -> None:
    before = workers()
    pool = QueryWorkers(2)
    pool.start()
    deadline = time.monotonic() + 30
    while not workers() - before and time.monotonic() < deadline:
        time.sleep(0.01)
    pool.close()
    deadline = time.monotonic() + 10  # the starter thread reaps the killed worker
    while workers() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers() - before == set()


async def test_a_slow_worker_start_does_not_count_against_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a loaded machine a worker's imports can take longer than a query's whole limit; the
    query still gets its full limit once its worker is ready (a CI failure: a 5 s limit spent
    starting the worker for a trivial SELECT). The worker's answer is stood in for: a real one,
    in the idle scheduling class, can itself take seconds on a loaded machine (another CI
    failure), and this test is about the start."""
    wait_ready = query_workers._Worker.wait_ready

    def slow_wait_ready(worker: query_workers._Worker) -> None:
        time.sleep(2.0)
        wait_ready(worker)

    async def answer_within_the_limit(
        worker: query_workers._Worker, request: tuple[object, ...]
    ) -> tuple[str, dict[str, object]]:
        await asyncio.sleep(0.5)
        return "ok", {"text": request[1], "form": "ask", "kind": "ASK", "variables": []}

    monkeypatch.setattr(query_workers._Worker, "wait_ready", slow_wait_ready)
    monkeypatch.setattr(query_workers._Worker, "ask", answer_within_the_limit)
    pool = QueryWorkers(1)
    try:
        answer = await pool.check("ASK {}", timeout=1.0)
        assert answer.kind == "ASK"
    finally:
        pool.close()


async def test_workers_run_only_on_cpu_the_server_leaves_idle() -> None:
    """SCHED_IDLE, not a nice value: a niced worker still holds a core for a slice each time
    the server wakes, and an edit wakes a dozen times; an idle-class one gives way at once."""
    before = workers()
    pool = QueryWorkers(1)
    try:
        answer = await pool.check("ASK {}", timeout=120)
        assert answer.kind == "ASK"
        (worker,) = workers() - before
        assert os.sched_getscheduler(worker) == os.SCHED_IDLE
    finally:
        pool.close()


async def test_workers_are_a_scheduling_group_of_the_lowest_weight() -> None:
    """The idle class yields only within a scheduling group. In the server's group a busy
    worker would keep that group's whole share against PostgreSQL's group, and the database's
    backends would wait for a CPU while edits wait for them. A worker starts a session, which is
    an autogroup of its own, and gives that group the lowest weight."""
    before = workers()
    pool = QueryWorkers(1)
    try:
        await pool.check("ASK {}", timeout=120)
        (worker,) = workers() - before
        assert os.getsid(worker) == worker
        group = Path(f"/proc/{worker}/autogroup")
        if not group.exists():
            pytest.skip("this kernel has no autogroups")
        assert group.read_text() != Path("/proc/self/autogroup").read_text()
        assert group.read_text().split()[-2:] == ["nice", "19"]
    finally:
        pool.close()
