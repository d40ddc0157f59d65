"""The Python client's cost over the REST API it wraps, in one run against one `graphwright serve`:

1. `client.chat` p50 over the raw `POST /api/chat` (stream=false) it sends, interleaved, on a
   slash command (no model): the client's own overhead (target: at most 5 ms);
2. `GraphModeGraph.to_networkx()` on a Graph Mode graph of 100k nodes and 500k edges, against
   building the same MultiDiGraph directly from the REST `/state` pages with httpx (target: at
   most 1.5x), interleaved, the best of a few of each, with the resident memory of the server
   and of this process (Linux /proc) at that size.

    PYTHONPATH=src .venv/bin/python benchmarks/client_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import networkx as nx
import orjson

from graphwright.auth.service import AuthService
from graphwright.client import Client
from graphwright.client.graph import STATE_PAGE
from graphwright.db import Database

EDGES_PER_NODE = 5
CHUNK = 20_000  # nodes per import request (with their edges), under the body size limit


@contextmanager
def server(home: Path) -> Iterator[tuple[str, str, int]]:
    """`graphwright serve` on a free port, offline; yields its URL, a token and its pid."""
    database = Database(f"sqlite:///{home / 'graphwright.db'}")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "GRAPHWRIGHT_HOME": str(home), "GRAPHWRIGHT_OFFLINE": "true"}
    process = subprocess.Popen(
        [sys.executable, "-m", "graphwright", "serve", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.3)
        yield url, AuthService(database).mint(label="client bench"), process.pid
    finally:
        database.dispose()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def chat_overhead(client: Client, http: httpx.Client, rounds: int) -> tuple[float, float]:
    """p50 ms of the raw REST call and of client.chat, interleaved."""
    raw: list[float] = []
    wrapped: list[float] = []
    body = {"message": "/help", "stream": False}
    for _ in range(3):  # warm both paths
        http.post("/api/chat", json=body).raise_for_status()
        client.chat("/help")
    for _ in range(rounds):
        start = time.perf_counter()
        http.post("/api/chat", json=body).raise_for_status()
        raw.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        client.chat("/help")
        wrapped.append((time.perf_counter() - start) * 1000)
    return statistics.median(raw), statistics.median(wrapped)


def seed(http: httpx.Client, conversation_id: str, nodes: int) -> None:
    rng = random.Random(nodes)
    for first in range(0, nodes, CHUNK):
        ids = range(first, min(first + CHUNK, nodes))
        graph = {
            "nodes": [{"id": f"N:{i}", "name": f"node {i}", "category": "Gene"} for i in ids],
            "links": [
                {"source": f"N:{i}", "target": f"N:{rng.randrange(first, i + 1)}", "label": f"r{k}"}
                for i in ids
                for k in range(EDGES_PER_NODE)
            ],
        }
        content = orjson.dumps({"graph": graph})
        path = f"/api/graph/{conversation_id}/import"
        headers = {"Content-Type": "application/json"}
        http.post(path, content=content, headers=headers, timeout=600).raise_for_status()


def direct_networkx(http: httpx.Client, conversation_id: str) -> nx.MultiDiGraph:
    """The baseline: the MultiDiGraph built straight from the REST state pages."""
    graph = nx.MultiDiGraph()
    offset = 0
    while True:
        page = http.get(
            f"/api/graph/{conversation_id}/state", params={"offset": offset, "limit": STATE_PAGE}
        ).json()["data"]
        graph.add_nodes_from((n["id"], {**n["data"], "label": n["label"], "type": n["type"]})
                             for n in page["nodes"])  # fmt: skip
        graph.add_edges_from(
            (e["source"], e["target"], e["id"],
             {**e["data"], "label": e["label"], "type": e["type"]})
            for e in page["edges"]
        )  # fmt: skip
        offset += STATE_PAGE  # nodes and edges are paged at the same offset
        if not page["metadata"]["hasMore"]:
            return graph


def memory_mb(pid: int | str = "self") -> tuple[float, float]:
    """A process's resident memory now and at its peak since `reset_peak`, in MB."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def reset_peak(pid: int | str = "self") -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # Linux: VmHWM starts again from VmRSS


def measured(work: Callable[[], nx.MultiDiGraph]) -> tuple[float, float, float]:
    """Seconds, and this process's peak and held memory growth (MB) while it holds the graph."""
    gc.collect()
    before, _ = memory_mb()
    reset_peak()
    start = time.perf_counter()
    graph = work()
    seconds = time.perf_counter() - start
    held, peak = memory_mb()
    assert graph.number_of_edges() > 0
    del graph
    return seconds, peak - before, held - before


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10k nodes, fewer chat rounds")
    parser.add_argument("--repeat", type=int, default=3, help="to_networkx runs of each")
    args = parser.parse_args()
    nodes = 10_000 if args.quick else 100_000
    rounds = 30 if args.quick else 200
    with tempfile.TemporaryDirectory() as tmp, server(Path(tmp)) as (url, token, pid):
        headers = {"Authorization": f"Bearer {token}"}
        with (
            httpx.Client(base_url=url, headers=headers, timeout=600) as http,
            Client(url, token) as client,
        ):
            raw, wrapped = chat_overhead(client, http, rounds)
            print(f"chat p50: raw REST {raw:.2f} ms, client.chat {wrapped:.2f} ms, "
                  f"overhead {wrapped - raw:+.2f} ms (target <= 5 ms)")  # fmt: skip

            conversation = client.chat("/help").conversation_id
            start = time.perf_counter()
            seed(http, conversation, nodes)
            print(f"seeded {nodes} nodes, {nodes * EDGES_PER_NODE} edges "
                  f"in {time.perf_counter() - start:.0f} s")  # fmt: skip
            graph = client.graph(conversation)
            base = direct_networkx(http, conversation)
            ours = graph.to_networkx()
            assert nx.utils.graphs_equal(ours, base)
            assert ours.number_of_edges() == nodes * EDGES_PER_NODE
            del base, ours
            server_rss, _ = memory_mb(pid)
            reset_peak(pid)
            runs: dict[str, list[tuple[float, float, float]]] = {"direct": [], "client": []}
            for i in range(args.repeat):  # interleaved, each going first in turn
                pair = [
                    ("direct", lambda: direct_networkx(http, conversation)),
                    ("client", graph.to_networkx),
                ]
                for name, work in pair[:: 1 if i % 2 == 0 else -1]:
                    runs[name].append(measured(work))
                    print(f"  {name}: {runs[name][-1][0]:.2f} s", flush=True)
            _, server_peak = memory_mb(pid)
            base_s, ours_s = (min(run[0] for run in runs[name]) for name in ("direct", "client"))
            print(
                f"to_networkx, best of {args.repeat}: direct from REST pages {base_s:.2f} s, "
                f"client {ours_s:.2f} s, ratio {ours_s / base_s:.2f}x (target <= 1.5x)"
            )
            for name, sizes in runs.items():
                peak, held = max(run[1] for run in sizes), max(run[2] for run in sizes)
                print(f"{name}: this process grew {peak:.0f} MB at most, and holds the graph "
                      f"in {held:.0f} MB")  # fmt: skip
            print(f"server resident memory: {server_rss:.0f} MB before the timed reads, "
                  f"{server_peak:.0f} MB at most during them")  # fmt: skip


if __name__ == "__main__":
    main()
