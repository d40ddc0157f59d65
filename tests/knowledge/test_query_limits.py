"""Issue 29.2: a query's time limit stops its work. Hostile queries (cheap to write, endless to
answer) run in worker processes that are killed at the limit; the event loop never waits on
them, and a server full of them still stops on SIGTERM.

Bounds are generous (a loaded 2-core CI machine); the precise /health p99 under 50 hostile
queries is measured by benchmarks/sparql_hostile_bench.py."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest
from fastapi import FastAPI

from graphwright.app import create_app
from graphwright.auth.service import AuthService
from graphwright.db import Database
from graphwright.settings import Settings
from tests.conftest import free_port, wait_until_serving
from tests.mcp.support import serving

LIMIT = 4.0
GRAPHWRIGHT = Path(sys.executable).parent / "graphwright"


def hostile_query(seed: int = 0) -> str:
    """Five VALUES blocks of 60: 7.8e8 solutions to count, from 1.5 KB of text."""
    values = " ".join(str(n + seed) for n in range(60))
    blocks = " ".join(f"VALUES ?v{i} {{ {values} }}" for i in range(5))
    return f"SELECT (COUNT(*) AS ?n) WHERE {{ {blocks} }}"


def query_workers() -> list[psutil.Process]:
    return [
        child
        for child in psutil.Process().children(recursive=True)
        if "graphwright.knowledge.query_workers" in " ".join(child.cmdline())
    ]


@pytest.fixture
def app(tmp_path: Path, database: Database) -> FastAPI:
    settings = Settings(
        home=tmp_path / "home",
        database_url=database.url,
        kb_sample_data=False,
        kb_query_timeout_seconds=LIMIT,
    )
    return create_app(settings, database=database)


async def test_a_query_stops_at_its_limit_and_its_worker_is_killed(app: FastAPI) -> None:
    token = app.state.auth_service.mint(label="alice")
    auth = {"Authorization": f"Bearer {token}"}
    async with (
        serving(app) as url,
        httpx.AsyncClient(base_url=url, headers=auth, timeout=60) as rest,
    ):
        for _ in range(5):  # a worker started and its store opened, outside the measure
            warm = await rest.get("/api/knowledge/sparql", params={"query": "ASK {}"})
            if warm.status_code == 200:
                break
        assert warm.status_code == 200, warm.text
        started = time.monotonic()
        answer = await rest.post("/api/knowledge/query", json={"query": hostile_query()})
        elapsed = time.monotonic() - started
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["code"] == "query_timeout"
        assert elapsed < LIMIT + 2, elapsed  # the limit + 1 s, with room for CI load
        # The worker that ran it is gone: nothing keeps a core busy after the limit.
        busy = query_workers()
        before = {p.pid: sum(p.cpu_times()[:2]) for p in busy if p.is_running()}
        await asyncio.sleep(1.0)
        spent = sum(
            sum(p.cpu_times()[:2]) - before[p.pid]
            for p in busy
            if p.pid in before and p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        )
        assert spent < 0.3, spent


async def test_the_event_loop_keeps_beating_while_50_hostile_queries_run(app: FastAPI) -> None:
    token = app.state.auth_service.mint(label="alice")
    auth = {"Authorization": f"Bearer {token}"}
    gaps: list[float] = []

    async def heartbeat(stop: asyncio.Event) -> None:
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(0.05)
            now = time.monotonic()
            gaps.append(now - last - 0.05)
            last = now

    async with (
        serving(app) as url,
        httpx.AsyncClient(base_url=url, headers=auth, timeout=120) as rest,
    ):
        stop = asyncio.Event()
        beating = asyncio.create_task(heartbeat(stop))
        started = time.monotonic()
        hostile = [
            asyncio.create_task(rest.post("/api/knowledge/query", json={"query": hostile_query(i)}))
            for i in range(50)
        ]
        healthy = 0
        while not all(task.done() for task in hostile):
            health = await rest.get("/health", timeout=5)
            healthy += health.status_code == 200
            await asyncio.sleep(0.1)
        elapsed = time.monotonic() - started
        stop.set()
        await beating
    answers = [task.result() for task in hostile]
    assert {a.status_code for a in answers} == {422}
    assert {a.json()["error"]["code"] for a in answers} == {"query_timeout"}
    # Each waits at most its limit (waiting for a free worker counts), so all 50 end together.
    assert elapsed < LIMIT + 10, elapsed
    assert healthy > 0
    # The loop never waited on a query or its check (before the fix: 14 s and more). The 50
    # clients share this loop and the machine may be busy, so the bound is generous; the
    # precise /health p99 is measured by benchmarks/sparql_hostile_bench.py.
    assert max(gaps) < 5.0, max(gaps)


def test_sigterm_stops_a_server_running_hostile_queries(database_url: str, tmp_path: Path) -> None:
    database = Database(database_url)
    token = AuthService(database).mint()
    database.dispose()
    port = free_port()
    env = {
        **os.environ,
        "GRAPHWRIGHT_HOME": str(tmp_path / "home"),
        "GRAPHWRIGHT_DATABASE_URL": database_url,
        "GRAPHWRIGHT_KB_SAMPLE_DATA": "false",
        "GRAPHWRIGHT_KB_QUERY_TIMEOUT_SECONDS": "60",
    }
    server = subprocess.Popen(
        [str(GRAPHWRIGHT), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url, server, timeout=90)
        workers_of = psutil.Process(server.pid)

        async def flood() -> None:
            async with httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120
            ) as rest:
                tasks = [
                    asyncio.create_task(
                        rest.post("/api/knowledge/query", json={"query": hostile_query(i)})
                    )
                    for i in range(10)
                ]
                # Until the queries are running in their workers.
                for _ in range(300):
                    if any(
                        "query_workers" in " ".join(c.cmdline()) and c.cpu_percent(0.05) > 0
                        for c in workers_of.children(recursive=True)
                    ):
                        break
                    await asyncio.sleep(0.1)
                started = time.monotonic()
                server.send_signal(signal.SIGTERM)
                await asyncio.to_thread(server.wait, 30)
                assert time.monotonic() - started < 5
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run(flood())
        assert server.returncode is not None
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
