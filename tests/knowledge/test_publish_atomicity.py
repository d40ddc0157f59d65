"""A publish is one transaction: SIGKILL in the middle of a large one leaves all of it or none of
it, and two servers sharing one SPARQL store never take the same collection number."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pyoxigraph as ox
import pytest

from graphwright.db import Database
from graphwright.knowledge.backends.sparql_kb import SparqlKnowledgeBase
from graphwright.knowledge.backends.stores import RemoteSparqlStore
from graphwright.knowledge.jsonld import draft_assets
from graphwright.knowledge.service import KnowledgeService

ASSETS = 20_000  # five triples each, with metadata: about 190k quads in one update
CHILD = """
import sys, anyio
from pathlib import Path
from graphwright.knowledge.backends.sparql_kb import SparqlKnowledgeBase
from graphwright.knowledge.backends.stores import EmbeddedStore
from graphwright.knowledge.jsonld import draft_assets

kb_path, marker, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
ctx = {"@vocab": "http://schema.org/"}
content = [
    {"@context": ctx, "@id": f"urn:item:{i}", "@type": "Thing", "name": f"item {i}",
     "identifier": str(i), "description": "x" * 40, "position": i}
    for i in range(count)
]
drafts = draft_assets(content)


async def main():
    kb = SparqlKnowledgeBase(EmbeddedStore(kb_path))
    marker.write_text("publishing")
    await kb.publish(drafts, number=1, approved_by="t", request_id=None)
    marker.write_text("done")

anyio.run(main)
"""


def _published_quads(path: Path) -> tuple[int, int]:
    store = ox.Store(str(path))
    public = next(iter(store.query(
        "SELECT (COUNT(*) AS ?n) "
        "WHERE { GRAPH ?g { ?s ?p ?o } FILTER(STRENDS(STR(?g), '/public')) }"
    )))["n"].value  # fmt: skip
    metadata = next(iter(store.query(
        "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <metadata:graph> { ?s ?p ?o } }"
    )))["n"].value  # fmt: skip
    del store
    return int(public), int(metadata)


@pytest.mark.parametrize("delay", [0.2, 1.0, 2.5])
def test_sigkill_during_a_large_publish_leaves_all_or_nothing(tmp_path: Path, delay: float) -> None:
    marker = tmp_path / "marker"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "kb"), str(marker), str(ASSETS)],
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while not (marker.exists() and marker.read_text() == "publishing"):
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        assert time.monotonic() < deadline, "the child never started publishing"
        time.sleep(0.01)
    time.sleep(delay)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)

    public, metadata = _published_quads(tmp_path / "kb")
    finished = marker.read_text() == "done"
    assert (public, metadata > 0) in ((0, False), (ASSETS * 5, True)), (public, metadata, finished)
    if finished:
        assert public == ASSETS * 5


async def test_two_servers_sharing_one_store_never_share_a_number(
    oxigraph_server: str, database: Database
) -> None:
    """Two services (as two server instances) on one database and one SPARQL server, approving
    at the same time; the store also holds a collection this database never numbered."""

    def server() -> KnowledgeService:
        store = RemoteSparqlStore(f"{oxigraph_server}/query", f"{oxigraph_server}/update")
        return KnowledgeService(database, SparqlKnowledgeBase(store, kind="sparql"))

    first, second = server(), server()
    content = {"@context": {"@vocab": "http://schema.org/"}, "@id": "urn:a", "name": "a"}
    foreign = draft_assets(content)
    await first.backend.publish(foreign, number=1, approved_by="elsewhere", request_id=None)
    published: list[str] = []

    async def approve_many(service: KnowledgeService) -> None:
        for _ in range(8):
            request = service.request_publication(content, requested_by="t")
            published.append((await service.approve(request.id, approver="alice")).ual or "")

    async with anyio.create_task_group() as group:
        group.start_soon(approve_many, first)
        group.start_soon(approve_many, second)
    numbers = sorted(int(ual.rsplit("/", 1)[1]) for ual in published)
    assert numbers == list(range(2, 18))
    for ual in published:  # each collection holds one publish: one transaction, one asset
        metadata = await first.metadata(ual)
        assert len(metadata.knowledge_assets) == 1 and metadata.approved_by == "alice"
    await first.aclose()
    await second.aclose()
