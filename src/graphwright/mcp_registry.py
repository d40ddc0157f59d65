"""Every MCP server graphwright ships, by name: `graphwright mcp NAME` and /mcp/NAME over HTTP.

Factories are named by import path so that starting one server imports only its own room.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette

from graphwright import mcpkit
from graphwright.errors import NotFound

SERVERS: dict[str, str] = {
    "literature": "graphwright.sources.tools:literature_server",
    "grants": "graphwright.sources.tools:grants_server",
    "kg": "graphwright.sources.tools:kg_server",
    "graph": "graphwright.graphmode.tools:graph_server",
    "artifacts": "graphwright.artifacts.tools:artifacts_server",
}


def names() -> list[str]:
    return sorted(SERVERS)


def factory(name: str) -> Callable[[], MCPServer[Any]]:
    try:
        target = SERVERS[name]
    except KeyError:
        raise NotFound(
            f"No MCP server named '{name}'. Known servers: {', '.join(names())}."
        ) from None
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def create(name: str) -> MCPServer[Any]:
    return factory(name)()


def mount_all(
    app: Starlette, *, verify_token: mcpkit.TokenVerifier | None, host: str = "127.0.0.1"
) -> list[str]:
    """Mount every server at /mcp/NAME in `app`; returns the mounted paths."""
    return [
        mcpkit.mount_http(app, name, create(name), verify_token=verify_token, host=host)
        for name in names()
    ]
