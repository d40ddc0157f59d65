"""A live graphwright server for the chat tests: real uvicorn, real MCP servers over stdio.

The server runs in the module's event loop, so a test can swap the chat model (the scripted fake)
between turns. graphwright's own MCP servers come from the registry (less `grants`), plus the tiny
`flaky` test server from tests/fixtures/chat; they start once per module, on first use.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import pytest_asyncio
import uvicorn
from fastapi import FastAPI

from graphwright.app import create_app
from graphwright.chat.service import ChatService
from graphwright.settings import Settings
from tests.conftest import free_port

FLAKY = Path(__file__).parents[1] / "fixtures" / "chat" / "flaky_server.py"


@dataclass
class Live:
    app: FastAPI
    client: httpx.AsyncClient
    token: str

    @property
    def service(self) -> ChatService:
        return self.app.state.chat_service

    async def chat(self, **body: Any) -> dict[str, Any]:
        """One turn with stream=false: the final response."""
        response = await self.client.post("/api/chat", json={**body, "stream": False})
        assert response.status_code == 200, response.text
        return response.json()["data"]

    async def stream(self, **body: Any) -> list[tuple[str, dict[str, Any]]]:
        """One turn as SSE: every event, in order."""
        events: list[tuple[str, dict[str, Any]]] = []
        async with self.client.stream("POST", "/api/chat", json=body) as response:
            assert response.status_code == 200, await response.aread()
            assert response.headers["content-type"].startswith("text/event-stream")
            kind = None
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    kind = line.removeprefix("event:").strip()
                elif line.startswith("data:") and kind is not None:
                    events.append((kind, orjson.loads(line.removeprefix("data:").strip())))
                    kind = None
        return events


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def live(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Live]:
    home = tmp_path_factory.mktemp("chat-home")
    port = free_port()
    servers = {
        "flaky": {"command": sys.executable, "args": [str(FLAKY)], "timeout": 20},
        "grants": {"disabled": True},  # not used here; one process less to start
    }
    (home / "mcp_servers.json").write_text(json.dumps({"mcpServers": servers}))
    settings = Settings(
        home=home, offline=True, api_url=f"http://127.0.0.1:{port}", model=None, mcp_config=None
    )
    app = create_app(settings)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.02)
    token = app.state.auth_service.mint(label="chat tests")
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=120
    ) as client:
        yield Live(app, client, token)
    server.should_exit = True
    await serving
