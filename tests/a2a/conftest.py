"""A live graphwright for the A2A tests: real uvicorn, graphwright's MCP servers over stdio, tasks
in a2a-sdk's DatabaseTaskStore on the app's database (SQLite, and PostgreSQL when
GRAPHWRIGHT_TEST_DATABASE_URL is set), reached through a2a-sdk's own client."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import uvicorn
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse
from fastapi import FastAPI

from graphwright.app import create_app
from graphwright.chat.service import ChatService
from graphwright.settings import Settings
from tests.conftest import BACKENDS, free_port, pg_schema_url

CONNECT_TIMEOUT = 60.0
READ_TIMEOUT = 180.0
START_SECONDS = 60.0


@pytest.fixture(scope="module", params=BACKENDS)
def module_database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """An empty database for one test module, once per backend under test."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('a2a-db') / 'test.db'}"
        return
    with pg_schema_url() as url:
        yield url


@dataclass
class LiveServer:
    app: FastAPI
    url: str
    server: uvicorn.Server
    serving: asyncio.Task[None]

    async def stop(self) -> None:
        self.server.should_exit = True
        await asyncio.wait_for(self.serving, 60)


async def serve(app: FastAPI, port: int) -> LiveServer:
    """Run `app` under uvicorn in this event loop until it has started."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    serving = asyncio.create_task(server.serve())
    async with asyncio.timeout(START_SECONDS):
        while not server.started:
            if serving.done():
                serving.result()
            await asyncio.sleep(0.02)
    return LiveServer(app, f"http://127.0.0.1:{port}", server, serving)


FLAKY = Path(__file__).parents[1] / "fixtures" / "chat" / "flaky_server.py"


def graphwright_settings(home: Path, port: int, database_url: str, **extra: Any) -> Settings:
    servers = {
        "flaky": {"command": sys.executable, "args": [str(FLAKY)], "timeout": 60},
        "grants": {"disabled": True},  # not used here; one process less to start
    }
    (home / "mcp_servers.json").write_text(json.dumps({"mcpServers": servers, **extra}))
    return Settings(
        home=home,
        offline=True,
        api_url=f"http://127.0.0.1:{port}",
        port=port,
        model=None,
        database_url=database_url,
    )


def http_client(token: str | None = None, **headers: str) -> httpx.AsyncClient:
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.AsyncClient(
        headers=headers, timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT)
    )


async def a2a_client(url: str, token: str | None, *, streaming: bool = True) -> Client:
    """a2a-sdk's client, from the agent's card."""
    config = ClientConfig(streaming=streaming, httpx_client=http_client(token))
    return await ClientFactory(config).create_from_url(url)


def user_message(
    text: str | None = None,
    *,
    context_id: str | None = None,
    message_id: str | None = None,
    parts: list[Part] | None = None,
    metadata: dict[str, Any] | None = None,
) -> SendMessageRequest:
    message = Message(
        role=Role.ROLE_USER,
        message_id=message_id or uuid.uuid4().hex,
        context_id=context_id,
        parts=parts if parts is not None else [Part(text=text)],
        metadata=metadata,
    )
    return SendMessageRequest(message=message)


async def collect(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    """Every event the agent streams for `request`, in order."""
    return [event async for event in client.send_message(request)]


@dataclass
class Agent:
    """The live graphwright and a token for it."""

    live: LiveServer
    token: str

    @property
    def url(self) -> str:
        return self.live.url

    @property
    def chat(self) -> ChatService:
        return self.live.app.state.chat_service

    def mint(self, **kwargs: Any) -> str:
        return self.live.app.state.auth_service.mint(**kwargs)

    async def client(self, *, token: str | None = "", streaming: bool = True) -> Client:
        return await a2a_client(self.url, self.token if token == "" else token, streaming=streaming)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str
) -> AsyncIterator[Agent]:
    home = tmp_path_factory.mktemp("a2a-home")
    port = free_port()
    app = create_app(graphwright_settings(home, port, module_database_url))
    live = await serve(app, port)
    try:
        yield Agent(live, app.state.auth_service.mint(label="a2a tests"))
    finally:
        await live.stop()
