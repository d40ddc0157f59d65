"""One client per way of reaching graphwright (a live uvicorn server, and Client.local with no
server) and per database backend; each module's scenarios run against all of them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from graphwright.client import Client
from tests.conftest import BACKENDS, pg_schema_url, serve_in_thread

WAYS = [(way, backend) for way in ("server", "local") for backend in BACKENDS]


def open_client(way: str, home: Path, database_url: str) -> Iterator[Client]:
    from graphwright.app import create_app
    from graphwright.settings import Settings

    if way == "local":
        with Client.local(home=home) as client:
            yield client
        return
    app = create_app(Settings(home=home, database_url=database_url))
    with serve_in_thread(app) as url:
        token = app.state.auth_service.mint(label="client tests")
        with Client(url, token) as client:
            yield client


@pytest.fixture(scope="module", params=WAYS, ids=["-".join(w) for w in WAYS])
def client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    way, backend = request.param
    home = tmp_path_factory.mktemp(f"client-{way}")
    with pytest.MonkeyPatch.context() as env, ExitStack() as stack:
        database_url = (
            f"sqlite:///{home / 'graphwright.db'}"
            if backend == "sqlite"
            else stack.enter_context(pg_schema_url())
        )
        env.setenv("GRAPHWRIGHT_HOME", str(home))
        env.setenv("GRAPHWRIGHT_DATABASE_URL", database_url)
        env.setenv("GRAPHWRIGHT_OFFLINE", "true")
        yield from open_client(way, home, database_url)
