"""Issue 29, M5: two servers sharing one database and one SPARQL store approve at once; every
approval publishes, with its own collection number (none fails on a race the server resolves)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from graphwright.db import Database
from graphwright.knowledge.backends import open_backend
from graphwright.knowledge.service import KnowledgeService
from graphwright.settings import Settings
from tests.knowledge.conftest import DRUGS

PER_SERVER = 15


def approve_all(database_url: str, sparql: str, request_ids: list[str], start: threading.Barrier,
                out: list[Any]) -> None:  # fmt: skip
    """One server: its own engine, store client and event loop, as another process has."""

    async def run() -> list[Any]:
        settings = Settings(database_url=database_url, sparql_url=f"{sparql}/query",
                            sparql_update_url=f"{sparql}/update", kb_sample_data=False)  # fmt: skip
        db, backend = Database(database_url), open_backend(settings)
        service = KnowledgeService(db, backend, row_limit=100, timeout=10)
        start.wait()
        try:
            return await asyncio.gather(
                *(service.approve(i, approver="alice") for i in request_ids),
                return_exceptions=True,
            )
        finally:
            await backend.aclose()
            db.dispose()

    out.extend(asyncio.run(run()))


def test_two_servers_approving_at_once_publish_every_request(
    database: Database, database_url: str, oxigraph_server: str
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite serialises writers: the race needs PostgreSQL's concurrency")
    filer = KnowledgeService(database, open_backend(Settings(database_url=database_url,
                             sparql_url=f"{oxigraph_server}/query", kb_sample_data=False)),
                             row_limit=10, timeout=10)  # fmt: skip
    ids = [
        filer.request_publication({**DRUGS[i % 2], "name": f"drug {i}"}, requested_by="t").id
        for i in range(2 * PER_SERVER)
    ]
    start, outcomes = threading.Barrier(2), [[], []]
    servers = [
        threading.Thread(
            target=approve_all, args=(database_url, oxigraph_server, ids[n::2], start, outcomes[n])
        )
        for n in range(2)
    ]
    for server in servers:
        server.start()
    for server in servers:
        server.join()
    done = outcomes[0] + outcomes[1]
    failures = [o for o in done if isinstance(o, BaseException)]
    assert failures == [], failures
    assert {o.status for o in done} == {"published"}
    assert len({o.ual for o in done}) == 2 * PER_SERVER
