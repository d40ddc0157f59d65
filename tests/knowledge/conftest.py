"""Knowledge-base fixtures: the same tests run on the embedded Oxigraph store and on a real
Oxigraph SPARQL server (the `oxigraph` package's binary, on a free loopback port)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from graphwright.db import Database
from graphwright.knowledge.backends import KnowledgeBackend, open_backend
from graphwright.knowledge.service import KnowledgeService
from graphwright.settings import Settings
from tests.conftest import free_port

OXIGRAPH = Path(sys.executable).parent / "oxigraph"
BACKENDS = ["embedded", "oxigraph-server"]


@pytest.fixture
def oxigraph_server(tmp_path: Path) -> Iterator[str]:
    """A live Oxigraph server with its own store; yields its base URL."""
    if not OXIGRAPH.exists():
        pytest.skip(f"The Oxigraph server binary is missing at {OXIGRAPH}: pip install oxigraph")
    port = free_port()
    process = subprocess.Popen(
        [str(OXIGRAPH), "serve", "--location", str(tmp_path / "oxigraph"),
         "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/query", params={"query": "ASK {}"}, timeout=2).is_success:
                break
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"oxigraph serve did not start: {process.stderr.read()!r}")
        time.sleep(0.05)
    yield url
    process.terminate()
    process.wait(timeout=10)


def kb_settings(
    kind: str, tmp_path: Path, database_url: str, request: pytest.FixtureRequest
) -> Settings:
    extra: dict[str, object] = {}
    if kind == "oxigraph-server":
        if not database_url.startswith("sqlite"):
            # What the SPARQL server holds does not depend on the SQL database: the embedded
            # store's runs cover publication requests on PostgreSQL.
            pytest.skip("the Oxigraph server backend runs with SQLite only")
        url = request.getfixturevalue("oxigraph_server")
        extra = {"sparql_url": f"{url}/query", "sparql_update_url": f"{url}/update"}
    return Settings(
        home=tmp_path / "home", database_url=database_url, kb_sample_data=False, **extra
    )


@pytest.fixture(params=BACKENDS)
def settings(request: pytest.FixtureRequest, tmp_path: Path, database_url: str) -> Settings:
    return kb_settings(request.param, tmp_path, database_url, request)


@pytest.fixture
async def backend(settings: Settings) -> AsyncIterator[KnowledgeBackend]:
    kb = open_backend(settings)
    yield kb
    await kb.aclose()


@pytest.fixture
def knowledge(database: Database, backend: KnowledgeBackend) -> KnowledgeService:
    return KnowledgeService(database, backend, row_limit=1000, timeout=10)


DRUGS = [
    {
        "@context": "https://schema.org/",
        "@id": "http://purl.obolibrary.org/obo/CHEBI_15365",
        "@type": "Drug",
        "name": "aspirin",
        "identifier": "CHEBI:15365",
    },
    {
        "@context": "https://schema.org/",
        "@id": "http://purl.obolibrary.org/obo/CHEBI_6801",
        "@type": "Drug",
        "name": "metformin",
        "identifier": "CHEBI:6801",
    },
]
