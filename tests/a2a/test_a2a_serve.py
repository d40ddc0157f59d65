"""`graphwright serve` as an A2A agent, in its own process: a turn, then a restart that keeps it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from a2a.types import GetTaskRequest, TaskState

from graphwright.auth.service import AuthService
from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from graphwright.db import Database
from tests.a2a.conftest import FLAKY, a2a_client, collect, user_message
from tests.conftest import free_port

GRAPHWRIGHT = Path(sys.executable).with_name("graphwright")
START_SECONDS = 90


class Serve:
    """`graphwright serve` on a free port, started and stopped on demand."""

    def __init__(self, home: Path, database_url: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = home / "mcp_servers.json"
        servers = {
            "flaky": {"command": sys.executable, "args": [str(FLAKY)]},
            "grants": {"disabled": True},
        }
        config.write_text(json.dumps({"mcpServers": servers}))
        self.env = {
            **os.environ,
            "GRAPHWRIGHT_HOME": str(home),
            "GRAPHWRIGHT_DATABASE_URL": database_url,
            "GRAPHWRIGHT_OFFLINE": "true",
            "GRAPHWRIGHT_MCP_CONFIG": str(config),
            "GRAPHWRIGHT_PORT": str(self.port),
        }
        self.env.pop("GRAPHWRIGHT_MODEL", None)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(GRAPHWRIGHT), "serve"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(self.process.stderr.read().decode())  # type: ignore[union-attr]
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise AssertionError(f"graphwright serve did not start within {START_SECONDS} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)
        self.process = None

    def token(self) -> str:
        database = Database(self.env["GRAPHWRIGHT_DATABASE_URL"])
        try:
            return AuthService(database).mint(label="serve test")
        finally:
            database.dispose()


@pytest.fixture
def serve(tmp_path: Path, database_url: str) -> Iterator[Serve]:
    server = Serve(tmp_path, database_url)
    yield server
    server.stop()


async def test_a_task_of_graphwright_serve_survives_a_restart(serve: Serve) -> None:
    token = serve.token()
    serve.start()
    client = await a2a_client(serve.url, token, streaming=False)
    [event] = await collect(client, user_message("/kg.queryNeighbors TP53"))
    task = event.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert KNOWLEDGE_GRAPH in {part.media_type for a in task.artifacts for part in a.parts}
    # A turn still running at shutdown is cancelled, not left `working` with nothing behind it.
    slow = user_message("/flaky.sleep 300")
    slow.configuration.return_immediately = True
    [started] = await collect(client, slow)
    for _ in range(200):  # bounded: until the turn is running
        state = (await client.get_task(GetTaskRequest(id=started.task.id))).status.state
        if state == TaskState.TASK_STATE_WORKING:
            break
        await asyncio.sleep(0.05)
    await client.close()
    serve.stop()

    serve.start()
    client = await a2a_client(serve.url, token, streaming=False)
    again = await client.get_task(GetTaskRequest(id=task.id))
    assert again == task
    stopped = await client.get_task(GetTaskRequest(id=started.task.id))
    assert stopped.status.state == TaskState.TASK_STATE_CANCELED
    await client.close()
