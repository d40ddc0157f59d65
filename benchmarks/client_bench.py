"""The Python client's cost over the REST API it wraps, in one run against one `graphwright serve`:

1. `client.chat` p50 over the raw `POST /api/chat` (stream=false) it sends, interleaved, on a
   slash command (no model): the client's own overhead (target: at most 5 ms);
2. `GraphModeGraph.to_networkx()` on a Graph Mode graph of 100k nodes and 500k edges, against
   building the same MultiDiGraph directly from the REST `/state` pages with httpx (target: at
   most 1.5x).

    PYTHONPATH=src .venv/bin/python benchmarks/client_bench.py [--quick]
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import networkx as nx
import orjson

from graphwright.auth.service import AuthService
from graphwright.client import Client
from graphwright.db import Database

EDGES_PER_NODE = 5
CHUNK = 20_000  # nodes per import request (with their edges), under the body size limit


@contextmanager
def server(home: Path) -> Iterator[tuple[str, str]]:
    """`graphwright serve` on a free port, offline; yields its URL and a token."""
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
        yield url, AuthService(database).mint(label="client bench")
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
            f"/api/graph/{conversation_id}/state", params={"offset": offset, "limit": 10_000}
        ).json()["data"]
        graph.add_nodes_from((n["id"], {**n["data"], "label": n["label"], "type": n["type"]})
                             for n in page["nodes"])  # fmt: skip
        graph.add_edges_from(
            (e["source"], e["target"], e["id"],
             {**e["data"], "label": e["label"], "type": e["type"]})
            for e in page["edges"]
        )  # fmt: skip
        offset += 10_000  # nodes and edges are paged at the same offset
        if not page["metadata"]["hasMore"]:
            return graph


def timed(work: Callable[[], nx.MultiDiGraph]) -> tuple[float, nx.MultiDiGraph]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10k nodes, fewer chat rounds")
    args = parser.parse_args()
    nodes = 10_000 if args.quick else 100_000
    rounds = 30 if args.quick else 200
    with tempfile.TemporaryDirectory() as tmp, server(Path(tmp)) as (url, token):
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
            base_times, our_times = [], []
            for _ in range(3):  # interleaved; the best of each
                base_s, base = timed(lambda: direct_networkx(http, conversation))
                ours_s, ours = timed(graph.to_networkx)
                base_times.append(base_s)
                our_times.append(ours_s)
            base_s, ours_s = min(base_times), min(our_times)
            assert ours.number_of_edges() == base.number_of_edges() == nodes * EDGES_PER_NODE
            print(f"to_networkx: direct from REST pages {base_s:.2f} s, client {ours_s:.2f} s, "
                  f"ratio {ours_s / base_s:.2f}x (target <= 1.5x)")  # fmt: skip


if __name__ == "__main__":
    main()
