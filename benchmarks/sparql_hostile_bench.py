"""/health while hostile SPARQL queries run (issue 29.2), in one run: baseline and under load.

A real uvicorn server with the embedded store and a 10 s query limit. /health is timed 200
times with nothing else running (baseline), then 200 times while 50 hostile queries (five
VALUES blocks of 60, 7.8e8 solutions each) wait for or run in the query workers. Prints p50 and
p99 of both and their ratio. Target: p99 under 100 ms with the hostile queries.

Run: .venv/bin/python benchmarks/sparql_hostile_bench.py [--hostile 50] [--probes 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import uvicorn

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.settings import Settings


def hostile_query(seed: int) -> str:
    values = " ".join(str(n + seed) for n in range(60))
    blocks = " ".join(f"VALUES ?v{i} {{ {values} }}" for i in range(5))
    return f"SELECT (COUNT(*) AS ?n) WHERE {{ {blocks} }}"


def p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * 0.99))]


async def probe(rest: httpx.AsyncClient, probes: int) -> list[float]:
    times = []
    for _ in range(probes):
        started = time.perf_counter()
        (await rest.get("/health")).raise_for_status()
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.02)
    return times


async def main(hostile: int, probes: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        settings = Settings(
            home=root / "home",
            database_url=f"sqlite:///{root / 'bench.db'}",
            kb_sample_data=False,
            kb_query_timeout_seconds=10,
        )
        database = Database(settings.resolved_database_url)
        app = create_app(settings, database=database)
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        token = app.state.auth_service.mint(label="bench")
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        ) as rest:
            await rest.get("/api/knowledge/sparql", params={"query": "ASK {}"})  # warm workers
            baseline = await probe(rest, probes)
            queries = [
                asyncio.create_task(
                    rest.post("/api/knowledge/query", json={"query": hostile_query(i)})
                )
                for i in range(hostile)
            ]
            await asyncio.sleep(0.5)
            loaded = await probe(rest, probes)
            codes = {(await task).status_code for task in queries}
        server.should_exit = True
        await serving
        database.dispose()
    base_p50, base_p99 = statistics.median(baseline), p99(baseline)
    load_p50, load_p99 = statistics.median(loaded), p99(loaded)
    print(f"/health, {probes} probes each; hostile queries answered {sorted(codes)}")
    print(f"  baseline (no queries)      p50 {base_p50:7.2f} ms   p99 {base_p99:7.2f} ms")
    print(f"  with {hostile} hostile queries   p50 {load_p50:7.2f} ms   p99 {load_p99:7.2f} ms")
    verdict = "met" if load_p99 < 100 else "NOT met"
    print(f"  ratio p99 {load_p99 / base_p99:.1f}x; target p99 < 100 ms under load: {verdict}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hostile", type=int, default=50)
    parser.add_argument("--probes", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.hostile, args.probes))
