"""The MCP client manager over the remote transports (streamable HTTP with headers, and SSE),
against a real MCP server app on uvicorn, and a server that cannot start."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from graphwright import mcp_registry
from graphwright.chat.config import StdioServer, load_mcp_servers
from graphwright.chat.mcp_manager import McpManager
from graphwright.mcp_http import BearerAuth
from graphwright.settings import Settings
from tests.mcp.support import serving

FLAKY = Path(__file__).parents[1] / "fixtures" / "chat" / "flaky_server.py"
SECRET = "s3cret-token"

pytestmark = pytest.mark.asyncio(loop_scope="module")


def flaky_module() -> Any:
    spec = importlib.util.spec_from_file_location("flaky_server", FLAKY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def remote_urls() -> AsyncIterator[dict[str, str]]:
    http_server = flaky_module().server
    sse_server = flaky_module().server
    streamable = BearerAuth(http_server.streamable_http_app(), lambda token: token == SECRET)
    async with serving(streamable) as http_url, serving(sse_server.sse_app()) as sse_url:
        yield {"http": f"{http_url}/mcp", "sse": f"{sse_url}/sse"}


async def test_remote_servers_over_streamable_http_and_sse(
    remote_urls: dict[str, str], tmp_path: Path
) -> None:
    entries: dict[str, Any] = {name: {"disabled": True} for name in mcp_registry.names()}
    entries["web"] = {
        "url": remote_urls["http"],
        "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
    }
    entries["legacy"] = {"url": remote_urls["sse"], "transport": "sse"}
    entries["locked"] = {"url": remote_urls["http"]}  # no token: refused
    config = tmp_path / "mcp_servers.json"
    config.write_text(json.dumps({"mcpServers": entries}))
    servers = load_mcp_servers(
        Settings(home=tmp_path, mcp_config=config), environ={"REMOTE_TOKEN": SECRET}
    )
    assert set(servers) == {"web", "legacy", "locked"}
    manager = McpManager(servers)
    try:
        specs, failures = await manager.tools()
        assert set(failures) == {"locked"}
        assert "could not start" in failures["locked"]
        names = {spec.qualified for spec in specs}
        assert {"web__echo", "legacy__echo"} <= names
        for server in ("web", "legacy"):
            outcome = await manager.call_tool(server, "echo", {"text": f"via {server}"})
            assert outcome.result is not None, outcome.error
            assert outcome.result.content[0].text == f"via {server}"
        unknown = await manager.call_tool("nowhere", "echo", {})
        assert unknown.error == "No MCP server named 'nowhere' is configured"
    finally:
        await manager.aclose()


async def test_a_server_that_cannot_start_is_reported_not_raised(tmp_path: Path) -> None:
    manager = McpManager({"broken": StdioServer(command=str(tmp_path / "no-such-program"))})
    specs, failures = await manager.tools()
    assert specs == [] and "No such file" in failures["broken"]
    outcome = await manager.call_tool("broken", "queryNeighbors", {"curieOrName": "TP53"})
    assert outcome.result is None and "could not start" in (outcome.error or "")
    await manager.aclose()
