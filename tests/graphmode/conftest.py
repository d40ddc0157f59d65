"""Graph Mode fixtures: the service on the test database, an app client, a live uvicorn server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from graphwright.app import create_app
from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.service import GraphService
from graphwright.settings import Settings
from tests.conftest import free_port


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
    server: uvicorn.Server


@pytest.fixture
def live_server(app: FastAPI) -> Iterator[LiveServer]:
    """The app on a real uvicorn server in a thread."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.05)
    yield LiveServer(url, app, server)
    server.should_exit = True
    thread.join(timeout=10)
