"""The embedded store's worker threads: what a query leaves behind stays in its own thread."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import threading
import time
from pathlib import Path

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


def _open_files_under(folder: Path) -> list[str]:
    paths = []
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            paths.append(os.readlink(fd))
    return [p for p in paths if p.startswith(str(folder))]


async def test_closing_the_store_closes_its_files_while_it_is_still_referenced(
    tmp_path: Path,
) -> None:
    # A closed app that is still referenced (a test's fixture, an embedding program) kept every
    # RocksDB file open: a test process ran out of descriptors for select().
    store = EmbeddedStore(tmp_path / "kb")
    await store.update("INSERT DATA { <urn:s> <urn:p> <urn:o> }")
    await store.user_query("ASK { ?s ?p ?o }", limit=1, timeout=30)
    assert _open_files_under(tmp_path)
    await store.aclose()
    assert _open_files_under(tmp_path) == []


def test_a_long_answer_arrives_whole_on_uvloop(tmp_path: Path) -> None:
    # `graphwright serve` runs on uvloop, which leaves a watched pipe non-blocking: an answer
    # longer than the pipe's buffer failed half-read ("The query stopped its worker").
    uvloop = pytest.importorskip("uvloop")

    async def long_answer() -> int:
        store = EmbeddedStore(tmp_path / "kb")
        triples = " ".join(f'<urn:s{i}> <urn:p> "{"x" * 100}{i}" .' for i in range(2000))
        await store.update(f"INSERT DATA {{ {triples} }}")
        try:
            answer = await store.user_query("SELECT * { ?s ?p ?o }", limit=5000, timeout=60)
        finally:
            await store.aclose()
        return len(answer.rows)

    assert uvloop.run(long_answer()) == 2000


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_temporary_store_dropped_unclosed_is_removed_without_an_error() -> None:
    # A test that never closed its temporary store left its folder to the garbage collector,
    # while RocksDB could still write in it: the removal failed ("Directory not empty"), and the
    # unraisable error failed whichever test was running then.
    store = EmbeddedStore(None)
    folder = Path(store._temporary.name) / "store"  # type: ignore[union-attr]
    stop = threading.Event()

    def keep_writing() -> None:  # as RocksDB's own threads may
        index = 0
        while not stop.is_set():
            with contextlib.suppress(OSError):
                (folder / f"late-{index}").touch()
            index += 1

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        time.sleep(0.05)
        del store
        gc.collect()
    finally:
        stop.set()
        writer.join()
