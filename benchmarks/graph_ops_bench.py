"""Graph Mode through the real HTTP API on uvicorn: does a single edit stay flat as the graph grows?

`graphwright serve` runs in a subprocess (its own GRAPHWRIGHT_HOME in a temporary directory); the
benchmark talks to it with httpx, one keep-alive connection, as a viewer or the MCP server would.
For each graph size (1k, 10k, 100k nodes, 5 edges per node, loaded by one `import`):
- single add-edge: p50 and p99 over many POST /edges. Targets: p50 at 100k within 2x of 1k.
- undo and redo (of one add-edge): p50 and p99, same target.
- bulk import (the load itself): 100k nodes + 500k edges under 30 s on SQLite; the PostgreSQL
  figure is printed too when PostgreSQL answers.
- state paged 10k at a time (nodes and edges side by side) over the whole 100k graph: every
  page under 1 s.
Baseline: the reference MCP memory server (`@modelcontextprotocol/server-memory`), one
create_relations call through a real MCP client, measured on this machine for the brief at
12 / 70 / 925 ms p50 for 1k / 10k / 100k entities (Node.js is not available to rerun it here).
It rewrites its whole file on every call, so it grows with the graph.

Run: .venv/bin/python benchmarks/graph_ops_bench.py [--quick] [--no-postgres]
     (PostgreSQL: GRAPHWRIGHT_BENCH_DATABASE_URL, default postgresql+psycopg://postgres@127.0.0.1:5432/test)
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx
import orjson
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from graphwright.auth.service import AuthService
from graphwright.db import Database

PG_URL = os.environ.get(
    "GRAPHWRIGHT_BENCH_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
MEMORY_SERVER_P50_MS = {1_000: 12.0, 10_000: 70.0, 100_000: 925.0}
EDGES_PER_NODE = 5
PAGE = 10_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def server(database_url: str, home: Path) -> Iterator[tuple[str, str]]:
    """`graphwright serve` on a free port; yields its URL and a token."""
    database = Database(database_url)
    token = AuthService(database).mint(label="bench")
    database.dispose()
    port = free_port()
    env = {**os.environ, "GRAPHWRIGHT_HOME": str(home), "GRAPHWRIGHT_DATABASE_URL": database_url}
    process = subprocess.Popen(
        [sys.executable, "-c", "from graphwright.cli import app; app()", "serve", "--port",
         str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield url, token
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


@contextmanager
def postgres_schema() -> Iterator[str | None]:
    try:
        admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            schema = f"bench_{uuid.uuid4().hex[:10]}"
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except OperationalError:
        yield None
        return
    sep = "&" if "?" in PG_URL else "?"
    try:
        yield f"{PG_URL}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def make_graph(nodes: int) -> bytes:
    rng = random.Random(nodes)
    return orjson.dumps(
        {
            "graph": {
                "nodes": [
                    {"id": f"N:{i}", "name": f"node {i}", "category": "gene" if i % 3 else "drug"}
                    for i in range(nodes)
                ],
                "links": [
                    {"source": f"N:{i}", "target": f"N:{rng.randrange(nodes)}",
                     "label": f"rel{k}", "evidence": [f"PMID:{i * 10 + k}"]}
                    for i in range(nodes)
                    for k in range(EDGES_PER_NODE)
                ],
            }
        }
    )  # fmt: skip


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99


def timed(http: httpx.Client, method: str, path: str, **kwargs: object) -> float:
    start = time.perf_counter()
    response = http.request(method, path, **kwargs)  # type: ignore[arg-type]
    elapsed = (time.perf_counter() - start) * 1000
    if response.status_code >= 300:
        raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:300]}")
    return elapsed


def load(http: httpx.Client, conversation: str, nodes: int) -> float:
    body = make_graph(nodes)
    start = time.perf_counter()
    response = http.post(
        f"/api/graph/{conversation}/import",
        content=body,
        headers={"content-type": "application/json"},
        timeout=600,
    )
    if response.status_code != 200:
        raise RuntimeError(f"import failed: {response.status_code} {response.text[:300]}")
    return time.perf_counter() - start


def edit_latencies(
    http: httpx.Client, conversation: str, nodes: int, samples: int
) -> dict[str, tuple[float, float]]:
    base = f"/api/graph/{conversation}"
    rng = random.Random(7)
    adds, undos, redos = [], [], []
    for i in range(samples):
        edge = {"source": f"N:{rng.randrange(nodes)}", "target": f"N:{rng.randrange(nodes)}",
                "label": f"bench{i}"}  # fmt: skip
        adds.append(timed(http, "POST", f"{base}/edges", json=edge))
    for _ in range(samples):
        undos.append(timed(http, "POST", f"{base}/undo"))
        redos.append(timed(http, "POST", f"{base}/redo"))
    return {"add-edge": percentiles(adds), "undo": percentiles(undos), "redo": percentiles(redos)}


def page_times(http: httpx.Client, conversation: str, nodes: int) -> list[float]:
    return [
        timed(http, "GET", f"/api/graph/{conversation}/state?limit={PAGE}&offset={offset}")
        for offset in range(0, nodes * EDGES_PER_NODE, PAGE)
    ]


def run_backend(
    name: str, database_url: str, sizes: list[int], samples: int, full: bool
) -> dict[int, dict[str, object]]:
    results: dict[int, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as home, server(database_url, Path(home)) as (url, token):
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
            for nodes in sizes:
                conversation = f"bench-{nodes}"
                import_s = load(http, conversation, nodes)
                row: dict[str, object] = {"import_s": import_s}
                if full:
                    row.update(edit_latencies(http, conversation, nodes, samples))
                    if nodes >= PAGE:
                        row["pages_ms"] = page_times(http, conversation, nodes)
                results[nodes] = row
                print(f"  [{name}] {nodes:>7,} nodes loaded in {import_s:6.1f} s", flush=True)
    return results


def report(name: str, results: dict[int, dict[str, object]]) -> bool:
    sizes = sorted(results)
    smallest, largest = sizes[0], sizes[-1]
    passed = True
    print(f"\n{name}: single operations through HTTP (ms)")
    print(f"{'nodes':>8} {'edges':>8} | {'add-edge p50':>12} {'p99':>7} | "
          f"{'memory server p50':>17} {'ratio':>6} | {'undo p50':>8} {'p99':>7} | "
          f"{'redo p50':>8} {'p99':>7}")  # fmt: skip
    for nodes in sizes:
        row = results[nodes]
        add, undo, redo = row["add-edge"], row["undo"], row["redo"]  # type: ignore[misc]
        anchor = MEMORY_SERVER_P50_MS.get(nodes)
        anchor_text = f"{anchor:17.0f}" if anchor else f"{'-':>17}"
        ratio = f"{anchor / add[0]:5.0f}x" if anchor else f"{'-':>6}"
        print(f"{nodes:>8,} {nodes * EDGES_PER_NODE:>8,} | {add[0]:12.1f} {add[1]:7.1f} | "
              f"{anchor_text} {ratio} | {undo[0]:8.1f} {undo[1]:7.1f} | "
              f"{redo[0]:8.1f} {redo[1]:7.1f}")  # fmt: skip
    for op in ("add-edge", "undo", "redo"):
        growth = results[largest][op][0] / results[smallest][op][0]  # type: ignore[index]
        ok = growth <= 2.0
        passed &= ok
        print(f"  {op} p50 at {largest:,} / at {smallest:,}: {growth:.2f}x "
              f"(target <= 2x) {'PASS' if ok else 'FAIL'}")  # fmt: skip
    pages = results[largest].get("pages_ms")
    if pages:
        worst = max(pages) / 1000  # type: ignore[arg-type]
        ok = worst < 1.0
        passed &= ok
        print(f"  state paged {PAGE:,} at a time over {largest:,} nodes and "
              f"{largest * EDGES_PER_NODE:,} edges: {len(pages)} pages, slowest {worst:.2f} s "
              f"(target < 1 s) {'PASS' if ok else 'FAIL'}")  # fmt: skip
    return passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 5k nodes, fewer samples")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    args = parser.parse_args()
    sizes = [1_000, 5_000] if args.quick else [1_000, 10_000, 100_000]
    samples = 40 if args.quick else 200
    largest = sizes[-1]

    print(f"graphwright Graph Mode over HTTP: sizes {sizes}, {samples} samples per operation")
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        sqlite = run_backend("SQLite", sqlite_url, sizes, samples, full=True)
    passed = report("SQLite", sqlite)
    sqlite_import = float(sqlite[largest]["import_s"])  # type: ignore[arg-type]
    limit = 30.0 if largest == 100_000 else 30.0 * largest / 100_000
    ok = sqlite_import < limit
    passed &= ok
    print(f"\nbulk import of {largest:,} nodes + {largest * EDGES_PER_NODE:,} edges "
          f"(one POST /import, merge included):")  # fmt: skip
    print(
        f"  SQLite      {sqlite_import:6.1f} s (target < {limit:.0f} s) {'PASS' if ok else 'FAIL'}"
    )
    if not args.no_postgres:
        with postgres_schema() as pg_url:
            if pg_url is None:
                print("  PostgreSQL  not reachable, skipped")
            else:
                pg = run_backend("PostgreSQL", pg_url, [largest], samples, full=False)
                print(f"  PostgreSQL  {float(pg[largest]['import_s']):6.1f} s")  # type: ignore[arg-type]
    print("\nbaseline: reference MCP memory server create_relations p50, measured for the brief: "
          "12 ms (1k), 70 ms (10k), 925 ms (100k)")  # fmt: skip
    print("ALL TARGETS MET" if passed else "SOME TARGETS MISSED")


if __name__ == "__main__":
    main()
