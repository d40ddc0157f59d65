"""Where SPARQL runs: an embedded Oxigraph store on disk, or any SPARQL 1.1 server by URL.

Both answer `query` (read-only, limited in rows and time) and `update` (one transaction), so the
DKG layout in `SparqlKnowledgeBase` is written once for both.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar, cast

import anyio
import httpx
import pyoxigraph as ox

from graphwright.errors import InvalidInput, Unavailable
from graphwright.knowledge.schemas import QueryAnswer
from graphwright.knowledge.sparql import (
    Deadline,
    QueryTimeout,
    answer_from_oxigraph,
    check_query,
    graph_answer,
)

T = TypeVar("T")


class TripleStore(Protocol):
    description: str

    async def query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer: ...

    async def update(self, sparql: str) -> None: ...

    async def dump(self) -> bytes:
        """Every quad, as N-Quads."""
        ...

    async def aclose(self) -> None: ...


class StoreUnavailable(Unavailable):
    """The knowledge base cannot be reached or opened (HTTP 503)."""


class EmbeddedStore:
    """A pyoxigraph Store on disk (or in memory, for tests).

    Its work runs in daemon threads, at most `concurrency` at a time, so that a slow query never
    blocks the event loop. A query cannot be stopped from Python: one past its time limit runs on
    in the background, holding its slot until it ends (so such queries cannot pile up), and never
    holds up the process's exit.
    """

    def __init__(self, path: Path | None, *, concurrency: int = 2) -> None:
        self.description = f"embedded Oxigraph store at {path}" if path else "in-memory store"
        try:
            if path is None:
                self._store = ox.Store()
            else:
                path.mkdir(parents=True, exist_ok=True)
                self._store = ox.Store(str(path))
        except OSError as exc:
            raise StoreUnavailable(
                f"Cannot open the knowledge base at {path}: {exc}. Another graphwright process "
                "may hold it; stop it, or point this one at the server with "
                "GRAPHWRIGHT_SPARQL_URL or the API"
            ) from None
        self._slots = asyncio.Semaphore(concurrency)

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

    async def update(self, sparql: str) -> None:
        await self._run(lambda: self._store.update(sparql))

    async def dump(self) -> bytes:
        return await self._run(lambda: self._store.dump(format=ox.RdfFormat.N_QUADS))

    async def aclose(self) -> None:
        await self._run(self._store.flush)

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

    async def query(self, sparql: str, *, limit: int, timeout: float) -> QueryAnswer:
        form = check_query(sparql)
        accept = "application/n-triples" if form == "graph" else "application/sparql-results+json"
        response = await self._post_query(sparql, accept, timeout=timeout)
        deadline = Deadline(timeout)
        if form == "graph":
            triples = ox.parse(response.content, ox.RdfFormat.N_TRIPLES)
            return graph_answer(triples, limit=limit, deadline=deadline)
        result = ox.parse_query_results(response.content, ox.QueryResultsFormat.JSON)
        return answer_from_oxigraph(result, limit=limit, deadline=deadline)

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

    async def aclose(self) -> None:
        await self._client.aclose()
