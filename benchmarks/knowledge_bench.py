"""Knowledge base: graphwright's embedded store against the seed fork's approach, in one run.

The DKG node fork sent every query to a live node over HTTP; a local Oxigraph server on loopback
stands in for it (the same engine, so the difference is the round trip and the protocol).

1. Publish 1,000 knowledge assets of 10 triples each, one approved request per asset, through
   KnowledgeService: p50 and p95 per asset. Target: p50 under 20 ms on the embedded store.
2. A selective lookup by subject on a store of 1M triples in the DKG layout: p50.
   Target: under 10 ms.
3. The DKG's current-graph pattern on the same store, cut at the default row limit: p50.

Run: .venv/bin/python benchmarks/knowledge_bench.py [--assets 1000] [--triples 1000000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx
import pyoxigraph as ox

from graphwright.db import Database
from graphwright.knowledge import layout, vocab
from graphwright.knowledge.backends.sparql_kb import SparqlKnowledgeBase
from graphwright.knowledge.backends.stores import EmbeddedStore, RemoteSparqlStore
from graphwright.knowledge.jsonld import draft_assets
from graphwright.knowledge.service import KnowledgeService
from graphwright.knowledge.ual import Ual

OXIGRAPH = Path(sys.executable).parent / "oxigraph"
TRIPLES_PER_ASSET = 10
BIG = "urn:big:"  # subjects of the large store, apart from the published ones
BENCH_TIME = datetime.now(UTC).replace(microsecond=0)


def asset(i: int, prefix: str = "urn:item:") -> dict[str, object]:
    """A JSON-LD object that expands to exactly 10 triples."""
    return {
        "@context": {"@vocab": "http://schema.org/"},
        "@id": f"{prefix}{i}",
        "@type": "Thing",
        **{f"p{k}": f"value {k} of item {i}" for k in range(TRIPLES_PER_ASSET - 1)},
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def timed(calls: int, call: Callable[[int], Awaitable[object]]) -> list[float]:
    times = []
    for i in range(calls):
        started = time.perf_counter()
        await call(i)
        times.append((time.perf_counter() - started) * 1000)
    return times


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = random.randint(20000, 40000)
    process = subprocess.Popen(
        [str(OXIGRAPH), "serve", "--location", str(folder), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/query", params={"query": "ASK {}"}, timeout=2).is_success:
                return process, url
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("oxigraph serve did not start")


def dkg_layout_nquads(collections: int) -> bytes:
    """`collections` one-asset collections in the DKG layout, as one N-Quads document."""
    lines = []
    for number in range(1, collections + 1):
        ual = Ual(vocab.LOCAL_CHAIN, vocab.LOCAL_CONTRACT, number)
        ka = ual.asset(1)
        graph = f"<{ka.public_graph}>"
        for s, p, o in draft_assets(asset(number, BIG))[0].public:
            lines.append(f"{s} {p} {o} {graph} .")
        lines.append(
            f"<{vocab.CURRENT_GRAPH}> <{vocab.HAS_NAMED_GRAPH}> {graph} <{vocab.CURRENT_GRAPH}> ."
        )
        record = layout.CollectionRecord(ual, vocab.LOCAL_PUBLISHER_ADDRESS, number, "0x00",
                                         BENCH_TIME, None, None, None, True)  # fmt: skip
        lines += [
            line[:-1] + f"<{vocab.METADATA_GRAPH}> ."
            for line in layout.metadata_lines(record, [ka])
        ]
    return ("\n".join(lines) + "\n").encode()


async def bench_publish(label: str, service: KnowledgeService, assets: int) -> list[float]:
    async def publish(i: int) -> None:
        request = service.request_publication(asset(i), requested_by="bench")
        await service.approve(request.id, approver="bench")

    times = await timed(assets, publish)
    p50, p95 = statistics.median(times), percentile(times, 0.95)
    print(f"  {label:<34} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms")
    return times


async def bench_queries(
    label: str, service: KnowledgeService, collections: int
) -> tuple[float, float]:
    rng = random.Random(7)

    async def lookup(_: int) -> None:
        subject = f"{BIG}{rng.randint(1, collections)}"
        answer = await service.query(f"SELECT ?p ?o WHERE {{ GRAPH ?g {{ <{subject}> ?p ?o }} }}")
        assert len(answer.rows) == TRIPLES_PER_ASSET, answer.rows

    async def pattern(_: int) -> None:
        answer = await service.query(vocab.CURRENT_PATTERN)
        assert answer.truncated and len(answer.rows) == service.row_limit

    await timed(20, lookup)  # warm caches
    lookups = await timed(300, lookup)
    patterns = await timed(5, pattern)  # the seed's answer is every row: slow to repeat
    print(f"  {label:<34} lookup p50 {statistics.median(lookups):7.2f} ms   "
          f"DKG pattern p50 {statistics.median(patterns):7.2f} ms")  # fmt: skip
    return statistics.median(lookups), statistics.median(patterns)


async def main(assets: int, triples: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        db = Database(f"sqlite:///{root / 'bench.db'}")
        server, url = start_server(root / "server")
        try:
            embedded = KnowledgeService(db, SparqlKnowledgeBase(EmbeddedStore(root / "kb")))
            remote = KnowledgeService(db, SparqlKnowledgeBase(
                RemoteSparqlStore(f"{url}/query", f"{url}/update"), kind="sparql"))  # fmt: skip

            print(f"Publish {assets} assets of {TRIPLES_PER_ASSET} triples, one request each")
            server_times = await bench_publish("Oxigraph server over HTTP (seed)", remote, assets)
            local_times = await bench_publish("graphwright embedded store", embedded, assets)
            ratio = statistics.median(server_times) / statistics.median(local_times)
            print(f"  ratio {ratio:.1f}x; target p50 < 20 ms: "
                  f"{'met' if statistics.median(local_times) < 20 else 'NOT met'}")  # fmt: skip
            await embedded.aclose()
            await remote.aclose()

            collections = triples // (TRIPLES_PER_ASSET + 8)
            print(f"\nLoading {collections:,} one-asset collections "
                  f"({triples:,} triples with their metadata) into both stores…")  # fmt: skip
            data = dkg_layout_nquads(collections)
            store = ox.Store(str(root / "big"))
            store.bulk_load(data, ox.RdfFormat.N_QUADS)
            del store
            headers = {"Content-Type": "application/n-quads"}
            loaded = httpx.post(f"{url}/store", content=data, headers=headers, timeout=3600)
            loaded.raise_for_status()
            print(f"  {len(data) / 1e6:.0f} MB of N-Quads loaded")

            big = KnowledgeService(db, SparqlKnowledgeBase(EmbeddedStore(root / "big")))
            big_remote = KnowledgeService(db, SparqlKnowledgeBase(
                RemoteSparqlStore(f"{url}/query", f"{url}/update"), kind="sparql"))  # fmt: skip
            print("Queries (row limit 1000)")
            seed = await bench_queries("Oxigraph server over HTTP (seed)", big_remote, collections)
            ours = await bench_queries("graphwright embedded store", big, collections)
            verdict = "met" if ours[0] < 10 else "NOT met"
            lookup_ratio, pattern_ratio = seed[0] / ours[0], seed[1] / ours[1]
            print(f"  lookup ratio {lookup_ratio:.1f}x, pattern ratio {pattern_ratio:.1f}x;"
                  f" target lookup p50 < 10 ms: {verdict}")  # fmt: skip
            await big.aclose()
            await big_remote.aclose()
        finally:
            server.terminate()
            server.wait()
            db.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=1000)
    parser.add_argument("--triples", type=int, default=1_000_000)
    args = parser.parse_args()
    anyio.run(main, args.assets, args.triples)
