"""Where SPARQL runs: an embedded Oxigraph store on disk, or any SPARQL 1.1 server by URL.

Both answer `query` (graphwright's own read-only queries, limited in rows and time),
`user_query` (a person's or a model's query: checked by the parser and run where the limit
stops it, see `query_workers.py`) and `update` (one transaction), so the DKG layout in
`SparqlKnowledgeBase` is written once for both.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar, cast

import anyio
import httpx
import pyoxigraph as ox

from graphwright.errors import InvalidInput, Unavailable
from graphwright.knowledge.query_check import Form
from graphwright.knowledge.query_workers import QueryWorkers
from graphwright.knowledge.schemas import QueryAnswer
from graphwright.knowledge.sparql import (
    Deadline,
    QueryTimeout,
    answer_from_oxigraph,
    graph_answer,
)

T = TypeVar("T")
SPARQL_JSON = "application/sparql-results+json"
N_TRIPLES = "application/n-triples"


class TripleStore(Protocol):
    description: str

    async def query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        """graphwright's own SELECT or ASK (text it wrote itself)."""
        ...

    async def user_query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        """A query from a person or a model: checked, and stopped at its time limit."""
        ...

    async def update(self, sparql: str) -> None: ...

    async def dump(self) -> bytes:
        """Every quad, as N-Quads."""
        ...

    def start_query_workers(self) -> None:
        """Start the worker processes of `user_query` now, in the background, not on first use."""
        ...

    async def aclose(self) -> None: ...


class StoreUnavailable(Unavailable):
    """The knowledge base cannot be reached or opened (HTTP 503)."""


class EmbeddedStore:
    """A pyoxigraph Store on disk (a temporary folder when no path is given, for tests).

    graphwright's own work runs in daemon threads, at most `concurrency` at a time, so that it
    never blocks the event loop. Queries from people and models run in worker processes on a
    read-only checkpoint of the store, taken after each write when the next such query comes,
    so that one past its time limit is stopped by killing its worker.
    """

    def __init__(self, path: Path | None, *, concurrency: int = 2) -> None:
        self.description = f"embedded Oxigraph store at {path}" if path else "temporary store"
        # A temporary store dropped without `aclose` is removed by the garbage collector while
        # RocksDB's threads may still write in it: what they add meanwhile is left behind.
        self._temporary = (
            None
            if path
            else tempfile.TemporaryDirectory(prefix="graphwright-kb-", ignore_cleanup_errors=True)
        )
        path = path or Path(self._temporary.name) / "store"  # type: ignore[union-attr]
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._store = ox.Store(str(path))
        except OSError as exc:
            raise StoreUnavailable(
                f"Cannot open the knowledge base at {path}: {exc}. Another graphwright process "
                "may hold it; stop it, or point this one at the server with "
                "GRAPHWRIGHT_SPARQL_URL or the API"
            ) from None
        self._slots = asyncio.Semaphore(concurrency)
        self._workers = QueryWorkers(concurrency)
        self._snapshots = path.with_name(f"{path.name}.snapshots")
        shutil.rmtree(self._snapshots, ignore_errors=True)  # a stopped server's checkpoints
        self._writes = 0
        self._snapshot: tuple[int, Path] | None = None
        self._snapshot_lock = asyncio.Lock()
        self._readers: dict[Path, int] = {}

    @property
    def store(self) -> ox.Store:
        return self._store

    async def query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        deadline = Deadline(timeout)

        def run() -> QueryAnswer:
            return answer_from_oxigraph(self._store.query(sparql), limit=limit, deadline=deadline)

        with anyio.move_on_after(timeout):
            return await self._run(run)
        raise QueryTimeout(timeout)

    async def user_query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        snapshot = await self._take_snapshot()
        self._readers[snapshot] = self._readers.get(snapshot, 0) + 1
        try:
            return await self._workers.run(sparql, snapshot, limit=limit, timeout=timeout)
        finally:
            self._readers[snapshot] -= 1
            if not self._readers[snapshot]:
                del self._readers[snapshot]
                if self._snapshot is None or self._snapshot[1] != snapshot:
                    await asyncio.to_thread(shutil.rmtree, snapshot, True)

    async def update(self, sparql: str) -> None:
        try:
            await self._run(lambda: self._store.update(sparql))
        finally:
            self._writes += 1

    async def dump(self) -> bytes:
        return await self._run(lambda: self._store.dump(format=ox.RdfFormat.N_QUADS))

    def start_query_workers(self) -> None:
        self._workers.start()

    async def aclose(self) -> None:
        self._workers.close()
        await self._run(self._store.flush)
        shutil.rmtree(self._snapshots, ignore_errors=True)
        # Oxigraph closes its files when the Store is dropped: an app that has shut down but is
        # still referenced (tests, an embedding program) must not keep them open.
        del self._store
        if self._temporary is not None:
            self._temporary.cleanup()

    async def _take_snapshot(self) -> Path:
        """A read-only checkpoint of the store as of its last write (hard links: cheap)."""
        async with self._snapshot_lock:
            if self._snapshot is not None and self._snapshot[0] == self._writes:
                return self._snapshot[1]
            writes = self._writes
            target = self._snapshots / str(writes)
            self._snapshots.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread(shutil.rmtree, target, True)
            await self._run(lambda: self._store.backup(str(target)))
            previous, self._snapshot = self._snapshot, (writes, target)
            if previous is not None and previous[1] not in self._readers:
                await asyncio.to_thread(shutil.rmtree, previous[1], True)
            return target

    async def _run(self, work: Callable[[], T]) -> T:
        await self._slots.acquire()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def finish(result: T | None, error: BaseException | None) -> None:
            self._slots.release()
            if future.done():  # the caller stopped waiting
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(cast(T, result))

        def target() -> None:
            try:
                result, error = work(), None
            except BaseException as exc:
                result, error = None, exc
                # Oxigraph's iterators must die in the thread that made them, not with the
                # traceback in the event loop's thread: drop the frames' locals here
                _clear_frames(exc)
            with contextlib.suppress(RuntimeError):  # the loop has closed: no one is waiting
                loop.call_soon_threadsafe(finish, result, error)

        threading.Thread(target=target, name="graphwright-knowledge", daemon=True).start()
        return await future


def _read_answer(content: bytes, graph: bool, limit: int, deadline: Deadline) -> QueryAnswer:
    """A SPARQL server's answer: N-Triples for a graph, SPARQL JSON results otherwise."""
    if graph:
        triples = ox.parse(content, ox.RdfFormat.N_TRIPLES)
        return graph_answer(triples, limit=limit, deadline=deadline)
    result = ox.parse_query_results(content, ox.QueryResultsFormat.JSON)
    return answer_from_oxigraph(result, limit=limit, deadline=deadline)


def _clear_frames(error: BaseException | None) -> None:
    """Clear the locals of every frame in `error`'s traceback and in those it was chained to."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)
        error = error.__cause__ or error.__context__


class RemoteSparqlStore:
    """A SPARQL 1.1 server: the Protocol for queries, SPARQL Update for writes."""

    def __init__(
        self,
        query_url: str,
        update_url: str | None,
        *,
        headers: dict[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.description = f"SPARQL server at {query_url}"
        self.query_url = query_url
        self.update_url = update_url
        self._client = client or httpx.AsyncClient(headers=headers, timeout=30.0)
        self._workers = QueryWorkers()

    async def query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        return await self._answer(sparql, None, limit=limit, timeout=timeout)

    async def user_query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        checked = await self._workers.check(sparql, timeout=timeout)
        return await self._answer(sparql, checked.form, limit=limit, timeout=timeout)

    async def _answer(
        self, sparql: str, form: Form | None, *, limit: int, timeout: float
    ) -> QueryAnswer:
        """The answer to a query of the given form; with none (graphwright's own queries), in
        whichever form the server answers."""
        accept = {
            "graph": N_TRIPLES,
            None: f"{SPARQL_JSON}, {N_TRIPLES};q=0.9",
        }.get(form, SPARQL_JSON)
        response = await self._post_query(sparql, accept, timeout=timeout)
        deadline = Deadline(timeout)
        answered = response.headers.get("content-type", "").split(";")[0].strip()
        graph = form == "graph" or (form is None and answered == N_TRIPLES)
        # The answer's size is the query's choice: it is read in a thread, off the event loop.
        return await asyncio.to_thread(_read_answer, response.content, graph, limit, deadline)

    async def _post_query(self, sparql: str, accept: str, *, timeout: float) -> httpx.Response:
        try:
            response = await self._client.post(
                self.query_url,
                data={"query": sparql},
                headers={"Accept": accept},
                timeout=timeout,
            )
        except httpx.TimeoutException:
            raise QueryTimeout(timeout) from None
        except httpx.HTTPError as exc:
            raise StoreUnavailable(f"The SPARQL server at {self.query_url} failed: {exc}") from None
        self._raise_for(response)
        return response

    async def update(self, sparql: str) -> None:
        if not self.update_url:
            raise InvalidInput(
                "This knowledge base is read-only: set GRAPHWRIGHT_SPARQL_UPDATE_URL to publish"
            )
        try:
            response = await self._client.post(
                self.update_url,
                content=sparql.encode(),
                headers={"Content-Type": "application/sparql-update"},
            )
        except httpx.HTTPError as exc:
            message = f"The SPARQL server at {self.update_url} failed: {exc}"
            raise StoreUnavailable(message) from None
        self._raise_for(response)

    async def dump(self) -> bytes:
        response = await self._post_query(
            "SELECT ?s ?p ?o ?g WHERE { GRAPH ?g { ?s ?p ?o } }",
            "application/sparql-results+json",
            timeout=600.0,
        )
        solutions = ox.parse_query_results(response.content, ox.QueryResultsFormat.JSON)
        quads = (ox.Quad(row["s"], row["p"], row["o"], row["g"]) for row in solutions)
        return ox.serialize(quads, format=ox.RdfFormat.N_QUADS)

    @staticmethod
    def _raise_for(response: httpx.Response) -> None:
        if response.status_code == 400:
            raise InvalidInput(f"The SPARQL server refused the request: {response.text[:500]}")
        if response.status_code >= 400:
            raise StoreUnavailable(
                f"The SPARQL server answered {response.status_code}: {response.text[:500]}"
            )

    def start_query_workers(self) -> None:
        self._workers.start()

    async def aclose(self) -> None:
        self._workers.close()
        await self._client.aclose()
