"""Graph Mode fixtures: the service on the test database, an app client, a live uvicorn server."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.service import GraphService
from graphwright.settings import Settings
from tests.conftest import serve_in_thread


@pytest.fixture
def service(database: Database) -> GraphService:
    return GraphService(database, create_graph_events(database))


@pytest.fixture
def app(database: Database, tmp_path: Path) -> FastAPI:
    settings = Settings(home=tmp_path, database_url=database.url, max_body_bytes=100_000)
    return create_app(settings, database=database)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def token(app: FastAPI) -> str:
    return app.state.auth_service.mint(label="tester")


@pytest.fixture
def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class LiveServer:
    url: str
    app: FastAPI


@pytest.fixture
def live_server(app: FastAPI) -> Iterator[LiveServer]:
    """The app on a real uvicorn server in a thread."""
    with serve_in_thread(app) as url:
        yield LiveServer(url, app)
