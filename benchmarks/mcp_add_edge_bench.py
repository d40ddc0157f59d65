"""addEdge through a real stdio MCP session: does one edit stay flat as the graph grows?

For each size (1k, 10k, 100k nodes, 5 edges per node) the graph is pre-loaded through the
service's bulk import (not through MCP), then `graphwright mcp graph` runs as a subprocess on that
SQLite database and an MCP ClientSession times single addEdge calls (p50, p99, client side).
Target: the p50 at the largest size within 2x of the p50 at 1k.

Baseline, in the same run when npm can install it: the reference MCP memory server
(`npx @modelcontextprotocol/server-memory`), its memory file pre-written with the same entities and
relations, timing one create_relations call each. It rewrites its whole file on every call. Its
figures recorded for the brief (12 / 70 / 925 ms p50 at 1k / 10k / 100k) are printed beside.

Run: .venv/bin/python benchmarks/mcp_add_edge_bench.py [--quick] [--no-memory-server]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.service import GraphService

GRAPHWRIGHT = Path(sys.executable).parent / "graphwright"
MEMORY_SERVER = "@modelcontextprotocol/server-memory"
MEMORY_SERVER_P50_MS = {1_000: 12.0, 10_000: 70.0, 100_000: 925.0}
EDGES_PER_NODE = 5
CONVERSATION = "bench"


def ring_edges(nodes: int) -> list[tuple[int, int]]:
    """Five distinct out-edges per node, to the next five nodes around a ring."""
    return [(i, (i + k) % nodes) for i in range(nodes) for k in range(1, EDGES_PER_NODE + 1)]


def preload_graphwright(database_url: str, nodes: int) -> float:
    graph = {
        "nodes": [{"id": f"G:{i}", "name": f"gene {i}", "category": "gene"} for i in range(nodes)],
        "links": [
            {"source": f"G:{a}", "target": f"G:{b}", "label": "interacts_with"}
            for a, b in ring_edges(nodes)
        ],
    }
    database = Database(database_url)
    try:
        service = GraphService(database, create_graph_events(database))
        started = time.perf_counter()
        service.import_graph(CONVERSATION, graph, actor="bench")
        return time.perf_counter() - started
    finally:
        database.dispose()


def preload_memory_file(path: Path, nodes: int) -> None:
    with path.open("wb") as out:
        lines = [
            orjson.dumps(
                {"type": "entity", "name": f"G:{i}", "entityType": "gene", "observations": []}
            )
            for i in range(nodes)
        ] + [
            orjson.dumps(
                {"type": "relation", "from": f"G:{a}", "to": f"G:{b}", "relationType": "interacts"}
            )
            for a, b in ring_edges(nodes)
        ]
        out.write(b"\n".join(lines))


async def time_calls(
    params: StdioServerParameters,
    calls: int,
    make_call: Callable[[ClientSession, int], Awaitable[Any]],
) -> list[float]:
    """Milliseconds per call after three warm-up calls, one session, calls in sequence."""
    with open(os.devnull, "w") as quiet:  # the servers' banners and npm's warnings
        async with stdio_client(params, errlog=quiet) as (read, write):
            return await _time_session(read, write, calls, make_call)


async def _time_session(
    read: Any, write: Any, calls: int, make_call: Callable[[ClientSession, int], Awaitable[Any]]
) -> list[float]:
    async with ClientSession(read, write) as session:
        await session.initialize()
        for k in range(3):
            await make_call(session, -1 - k)
        samples = []
        for k in range(calls):
            started = time.perf_counter()
            await make_call(session, k)
            samples.append((time.perf_counter() - started) * 1000)
        return samples


def graphwright_call(
    nodes: int, rng: random.Random
) -> Callable[[ClientSession, int], Awaitable[Any]]:
    async def call(session: ClientSession, k: int) -> None:
        arguments = {
            "source": f"G:{rng.randrange(nodes)}",
            "target": f"G:{rng.randrange(nodes)}",
            "label": f"bench_{k}",
        }
        result = await session.call_tool("addEdge", arguments)
        if result.is_error:
            raise RuntimeError(f"addEdge failed: {result.content}")

    return call


def memory_call(nodes: int, rng: random.Random) -> Callable[[ClientSession, int], Awaitable[Any]]:
    async def call(session: ClientSession, k: int) -> None:
        relation = {
            "from": f"G:{rng.randrange(nodes)}",
            "to": f"G:{rng.randrange(nodes)}",
            "relationType": f"bench_{k}",
        }
        result = await session.call_tool("create_relations", {"relations": [relation]})
        if result.is_error:
            raise RuntimeError(f"create_relations failed: {result.content}")

    return call


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99


async def bench_graphwright(home: Path, nodes: int, calls: int) -> dict[str, float]:
    database_url = f"sqlite:///{home / 'graphwright.db'}"
    load_seconds = preload_graphwright(database_url, nodes)
    params = StdioServerParameters(
        command=str(GRAPHWRIGHT),
        args=["mcp", "graph"],
        env={
            **os.environ,
            "GRAPHWRIGHT_HOME": str(home),
            "GRAPHWRIGHT_DATABASE_URL": database_url,
            "GRAPHWRIGHT_CONVERSATION": CONVERSATION,
        },
    )
    samples = await time_calls(params, calls, graphwright_call(nodes, random.Random(nodes)))
    p50, p99 = percentiles(samples)
    return {"p50": p50, "p99": p99, "load": load_seconds}


async def bench_memory_server(home: Path, nodes: int, calls: int) -> dict[str, float]:
    memory_file = home / "memory.jsonl"
    preload_memory_file(memory_file, nodes)
    params = StdioServerParameters(
        command="npx",
        args=["-y", MEMORY_SERVER],
        env={**os.environ, "MEMORY_FILE_PATH": str(memory_file)},
    )
    samples = await asyncio.wait_for(
        time_calls(params, calls, memory_call(nodes, random.Random(nodes))), timeout=1800
    )
    p50, p99 = percentiles(samples)
    return {"p50": p50, "p99": p99}


async def memory_server_available() -> bool:
    if shutil.which("npx") is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        try:
            await bench_memory_server(Path(tmp), 10, 1)
        except Exception as exc:  # any failure to install or start means "not measured here"
            print(f"memory server not measured here ({type(exc).__name__}: {exc})")
            return False
    return True


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k nodes, fewer calls")
    parser.add_argument("--no-memory-server", action="store_true", help="print its anchors only")
    args = parser.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    calls = 50 if args.quick else 300
    measure_memory = not args.no_memory_server and await memory_server_available()

    rows = []
    for nodes in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            ours = await bench_graphwright(Path(tmp), nodes, calls)
        theirs = None
        if measure_memory:
            with tempfile.TemporaryDirectory() as tmp:
                # It costs O(graph) per call: fewer calls at the big sizes keep the run short.
                theirs = await bench_memory_server(
                    Path(tmp), nodes, max(20, calls * 1_000 // nodes)
                )
        rows.append((nodes, ours, theirs))
        print(
            f"  measured {nodes:>7,} nodes: graphwright p50 {ours['p50']:.1f} ms"
            + (f", memory server p50 {theirs['p50']:.1f} ms" if theirs else ""),
            flush=True,
        )

    print(f"\naddEdge over stdio MCP, {calls} calls per size, SQLite, graph pre-loaded by import")
    print(
        f"{'nodes':>8} {'edges':>8} {'load s':>7} | {'graphwright p50':>15} {'p99':>7} | "
        f"{'memory srv p50':>14} {'p99':>7} {'anchor p50':>10} | {'memory srv / ours':>17}"
    )
    for nodes, ours, theirs in rows:
        anchor = MEMORY_SERVER_P50_MS[nodes]
        measured = (
            f"{theirs['p50']:>11.1f} ms {theirs['p99']:>7.1f}"
            if theirs
            else f"{'not run':>14} {'':>7}"
        )
        print(
            f"{nodes:>8,} {nodes * EDGES_PER_NODE:>8,} {ours['load']:>7.1f} | "
            f"{ours['p50']:>12.1f} ms {ours['p99']:>7.1f} | {measured} {anchor:>7.0f} ms | "
            f"{(theirs['p50'] if theirs else anchor) / ours['p50']:>16.1f}x"
        )
    first, last = rows[0][1]["p50"], rows[-1][1]["p50"]
    flat = last <= 2 * first
    print(
        f"\nflatness: p50 at {rows[-1][0]:,} nodes is {last / first:.2f}x the p50 at "
        f"{rows[0][0]:,} (target <= 2x): {'PASS' if flat else 'FAIL'}"
    )
    print(
        "anchor: reference MCP memory server (@modelcontextprotocol/server-memory) "
        "create_relations p50 recorded for the brief: 12 / 70 / 925 ms at 1k / 10k / 100k"
    )


if __name__ == "__main__":
    asyncio.run(main())
