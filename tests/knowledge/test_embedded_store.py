"""The embedded store's worker threads: what a query leaves behind stays in its own thread."""

from __future__ import annotations

import asyncio
import gc
import threading

import pytest

from graphwright.knowledge.backends.stores import EmbeddedStore
from graphwright.knowledge.sparql import QueryTimeout


async def _workers_done() -> None:
    while any(t.name == "graphwright-knowledge" for t in threading.enumerate()):
        await asyncio.sleep(0.02)
    await asyncio.sleep(0)  # the callback each thread queued before it ended runs now


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
async def test_a_query_stopped_mid_stream_drops_its_oxigraph_objects_in_its_own_thread() -> None:
    # Oxigraph's solution iterators must be dropped by the thread that made them; the
    # timeout's traceback held one and carried it to the event loop's thread.
    store = EmbeddedStore(None)
    triples = " ".join(f"<urn:s{i}> <urn:p> <urn:o{i}> ." for i in range(3000))
    store.store.update(f"INSERT DATA {{ {triples} }}")
    with pytest.raises(QueryTimeout):  # 9M rows, stopped between rows
        await store.query("SELECT * WHERE { ?a ?p ?b . ?c ?q ?d }", limit=10**9, timeout=0.2)
    await _workers_done()
    gc.collect()  # an iterator dropped here, off its thread, is reported (and fails the test)
