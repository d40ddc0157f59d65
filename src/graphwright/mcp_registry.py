"""Every MCP server graphwright ships, by name: `graphwright mcp NAME` and /mcp/NAME over HTTP.

Factories are named by import path so that starting one server imports only its own room. Each
factory takes `settings=` (default: from the environment).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from graphwright.errors import NotFound
from graphwright.settings import Settings

if TYPE_CHECKING:  # the names alone (`graphwright mcp list`, --help) need no MCP SDK
    from mcp.server.mcpserver import MCPServer
    from starlette.applications import Starlette

    from graphwright import mcp_http

SERVERS: dict[str, str] = {
    "literature": "graphwright.sources.tools:literature_server",
    "grants": "graphwright.sources.tools:grants_server",
    "kg": "graphwright.sources.tools:kg_server",
    "graph": "graphwright.graphmode.tools:graph_server",
    "artifacts": "graphwright.artifacts.tools:artifacts_server",
    "knowledge": "graphwright.knowledge.tools:knowledge_server",
    "miner": "graphwright.miner.tools:miner_server",
}


# Served to MCP clients (`graphwright mcp artifacts`, /mcp/artifacts) but not offered in the
# chat, which makes a conversation's artifacts itself: its tools are plumbing to a model there.
NOT_IN_CHAT = frozenset({"artifacts"})


def names() -> list[str]:
    return sorted(SERVERS)


def factory(name: str) -> Callable[..., MCPServer[Any]]:
    try:
        target = SERVERS[name]
    except KeyError:
        raise NotFound(
            f"No MCP server named '{name}'. Known servers: {', '.join(names())}."
        ) from None
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def create(name: str, *, settings: Settings | None = None) -> MCPServer[Any]:
    return factory(name)(settings=settings)


def mount_all(
    app: Starlette,
    *,
    verify_token: mcp_http.TokenVerifier | None,
    host: str = "127.0.0.1",
    settings: Settings | None = None,
    servers: Mapping[str, MCPServer[Any]] | None = None,
) -> list[str]:
    """Mount every server at /mcp/NAME in `app`; returns the mounted paths.

    `servers` are servers the caller built itself, by name (e.g. on the app's own services, so
    that its live subscribers see their writes); the others are created from `settings`.
    """
    from graphwright import mcp_http

    quotas = settings or Settings()
    built = dict(servers or {})
    if unknown := sorted(built.keys() - SERVERS.keys()):
        raise NotFound(f"No MCP server named {unknown}. Known servers: {', '.join(names())}.")
    return [
        mcp_http.mount_http(
            app,
            name,
            built.get(name) or create(name, settings=settings),
            verify_token=verify_token,
            host=host,
            sessions_per_token=quotas.mcp_sessions_per_token,
            max_sessions=quotas.mcp_sessions_max,
        )
        for name in names()
    ]
