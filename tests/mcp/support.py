"""Helpers for driving graphwright's MCP servers through a real MCP ClientSession."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

GRAPHWRIGHT = Path(sys.executable).parent / "graphwright"


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on a free loopback port; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # uvicorn failed to start: raise its error
        await asyncio.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@asynccontextmanager
async def stdio_session(name: str, env: dict[str, str]) -> AsyncIterator[ClientSession]:
    """An initialised session with `graphwright mcp NAME`, run with exactly `env`."""
    params = StdioServerParameters(command=str(GRAPHWRIGHT), args=["mcp", name], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    """An initialised session with the server at `url` (streamable HTTP, bearer token)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
