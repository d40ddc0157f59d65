"""The official MCP conformance suite (npm @modelcontextprotocol/conformance, on Node 22) against
every server mounted at /mcp/NAME, for the scenarios that apply to any server.

The suite cannot send a bearer token, so it talks to a test-only proxy that adds one and passes
everything else (Host and Origin too, for the DNS-rebinding scenario) through unchanged, streams
included. `make test` installs the suite into .mcp-conformance/ (git-ignored).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.types import Receive, Scope, Send

from graphwright import mcp_registry
from graphwright.app import create_app
from graphwright.db import Database
from graphwright.settings import Settings
from tests.mcp.support import serving

REPO = Path(__file__).parents[2]
BIN = REPO / ".mcp-conformance" / "node_modules" / ".bin"
# The scenarios any server can pass. The others call the suite's own fixtures (test_* tools,
# prompts and resources, `test_reconnection` for server-sse-polling) or completion/complete,
# which a server without the completions capability rightly answers "Method not found".
SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "logging-set-level",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]
HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"content-length", b"host"}

pytestmark = pytest.mark.skipif(
    not (BIN / "conformance").exists() or not (BIN / "node").exists(),
    reason="run `make conformance` (npm) to install the MCP conformance suite and Node 22",
)


def token_proxy(upstream: str, token: str) -> Any:
    """An ASGI app forwarding every request to `upstream` with `Authorization: Bearer token`."""
    client = httpx.AsyncClient(base_url=upstream, timeout=None)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
        headers.append((b"authorization", f"Bearer {token}".encode()))
        path = scope["raw_path"].decode() + (
            "?" + scope["query_string"].decode() if scope["query_string"] else ""
        )
        request = client.build_request(scope["method"], path, headers=headers, content=body)
        response = await client.send(request, stream=True)
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status_code,
                    "headers": [
                        (k, v) for k, v in response.headers.raw if k.lower() not in HOP_BY_HOP
                    ],
                }
            )
            async with anyio.create_task_group() as group:

                async def until_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(until_disconnect)
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
                group.cancel_scope.cancel()
        finally:
            await response.aclose()

    return app


@asynccontextmanager
async def mounted(tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    database = Database(f"sqlite:///{tmp_path / 'c.db'}")
    settings = Settings(home=tmp_path, database_url=database.url, offline=True)
    app = create_app(settings, database=database)
    token = app.state.auth_service.mint(label="conformance", conversation_id="conformance")
    try:
        async with serving(app) as url:
            yield url, token
    finally:
        database.dispose()


async def run_suite(url: str, scenario: str, out: Path) -> dict[str, Any]:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    process = await asyncio.create_subprocess_exec(
        str(BIN / "conformance"), "server", "--url", url, "--scenario", scenario,
        "--output-dir", str(out), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, env=env,
    )  # fmt: skip
    output, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    checks = [json.loads(p.read_text()) for p in out.rglob("checks.json")]
    return {"code": process.returncode, "output": output.decode(), "checks": checks}


async def test_every_mounted_server_passes_the_conformance_scenarios(tmp_path: Path) -> None:
    failures = []
    async with mounted(tmp_path) as (upstream, token), serving(token_proxy(upstream, token)) as url:
        proxy = url.replace("127.0.0.1", "localhost")
        for name in mcp_registry.names():
            for scenario in SCENARIOS:
                out = tmp_path / "results" / name / scenario
                result = await run_suite(f"{proxy}/mcp/{name}", scenario, out)
                failed = [
                    check
                    for checks in result["checks"]
                    for check in checks
                    if check.get("status") == "FAILURE"
                ]
                if result["code"] != 0 or failed or not result["checks"]:
                    failures.append((name, scenario, failed or result["output"][-1500:]))
    assert not failures, json.dumps(failures, indent=1)[:8000]
