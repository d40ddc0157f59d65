"""One Graph Mode edit on PostgreSQL, sent statement by statement (the baseline) and pipelined.

Pipelined, an edit waits for the server 3 times, where it waited 9 (tests/test_db_round_trips.py
counts them). Each wait costs the network's round trip, so the benchmark times both ways on the
same fresh database twice: on this machine, and through a proxy that holds every chunk of bytes
for a while each way, as a database on another host would.

Run: .venv/bin/python benchmarks/pipelined_edits_bench.py [--edits 300] [--delay-ms 0.5]
     (GRAPHWRIGHT_BENCH_DATABASE_URL, default postgresql+psycopg://postgres@127.0.0.1:5432/test)
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from load_bench import fresh_database  # benchmarks/, the script's directory, is on sys.path
from sqlalchemy.engine import make_url

from graphwright import db
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.schemas import NodeInput
from graphwright.graphmode.service import GraphService

PG_URL = os.environ.get(
    "GRAPHWRIGHT_BENCH_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def _forward(source: socket.socket, sink: socket.socket, delay: float) -> None:
    try:
        while data := source.recv(65536):
            time.sleep(delay)
            sink.sendall(data)
    except OSError:
        pass
    finally:
        sink.close()


@contextmanager
def delaying_proxy(url: str, delay: float) -> Iterator[str]:
    """A TCP proxy in front of the database that holds each chunk `delay` seconds each way."""
    target = make_url(url)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            server = socket.create_connection((target.host, target.port or 5432))
            server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for pair in ((client, server), (server, client)):
                threading.Thread(target=_forward, args=(*pair, delay), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield target.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
    finally:
        listener.close()


def time_edits(url: str, edits: int, *, pipelined: bool) -> list[float]:
    db.PIPELINES = pipelined  # off: `Database.write(pipelined=True)` writes as any other write
    database = db.Database(url)
    graphs = GraphService(database, create_graph_events(database))
    conversation = f"bench-{uuid.uuid4().hex[:8]}"
    for index in range(20):  # the graph exists, the pool and the statement caches are warm
        graphs.add_node(conversation, NodeInput(id=f"w:{index}", label="w", type="t"), actor="b")
    took = []
    for index in range(edits):
        node = NodeInput(id=f"n:{index}", label="TP53", type="biolink:Gene")
        started = time.perf_counter()
        graphs.add_node(conversation, node, actor="bench")
        took.append(time.perf_counter() - started)
    database.dispose()
    return took


def ms(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=300)
    parser.add_argument("--delay-ms", type=float, default=0.5, help="each way, per chunk")
    args = parser.parse_args()
    supported = db.PIPELINES
    if not supported:
        raise SystemExit("This libpq cannot pipeline (it needs 14 or later)")
    print(f"{'database':<28} {'statement by statement':>24} {'pipelined':>20} {'ratio p50':>10}")
    try:
        with fresh_database(PG_URL) as url, delaying_proxy(url, args.delay_ms / 1000) as remote:
            for where, target in (
                ("this machine", url),
                (f"{args.delay_ms:g} ms away each way", remote),
            ):
                baseline = time_edits(target, args.edits, pipelined=False)
                ours = time_edits(target, args.edits, pipelined=True)
                print(
                    f"{where:<28} p50 {ms(baseline, 50):6.2f} p99 {ms(baseline, 99):6.2f} ms"
                    f"   p50 {ms(ours, 50):6.2f} p99 {ms(ours, 99):6.2f} ms"
                    f" {ms(baseline, 50) / ms(ours, 50):9.2f}x"
                )
    finally:
        db.PIPELINES = supported


if __name__ == "__main__":
    main()
