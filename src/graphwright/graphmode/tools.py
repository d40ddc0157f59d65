"""The `graph` MCP server (seed 004): build, edit, undo, read and analyse a conversation's graph.

Thin: each tool parses its arguments, asks the backend (`client.py`, chosen per call by
`backend_resolver.py`) or the pure functions (`analysis.py`, `summary.py`) and words the
result. Which graph a call touches comes from seed 004's `databaseContext` argument, which a
middleware lifts out of the arguments before they are validated, so it never appears in the
input schemas the model sees.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp_types import CallToolResult

from graphwright import mcpkit
from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from graphwright.errors import GraphwrightError
from graphwright.graphmode.backend_resolver import BackendResolver
from graphwright.graphmode.client import GraphBackend
from graphwright.graphmode.tool_support import INSTRUCTIONS, lift_database_context, resolve_backend
from graphwright.graphmode.tools_bulk import register_bulk
from graphwright.graphmode.tools_edits import register_edits
from graphwright.graphmode.tools_history import register_history
from graphwright.graphmode.tools_reads import register_reads
from graphwright.mcp_apps import (
    GRAPH_MODE_VIEW,
    KNOWLEDGE_GRAPH_VIEW,
    ConversationDrawings,
    ServerViews,
)
from graphwright.settings import Settings, get_settings


def graph_server(
    resolver: BackendResolver | None = None, *, settings: Settings | None = None
) -> MCPServer[Any]:
    """The Graph Mode MCP server; `resolver` defaults to one built from the settings."""
    backends = resolver or BackendResolver(settings or get_settings())

    def backend() -> GraphBackend:
        return resolve_backend(backends)

    drawings = ConversationDrawings()

    async def whole_graph(_result: CallToolResult) -> dict[str, Any]:
        return await drawings.payload(backend())

    views = ServerViews()
    graph_view = views.link(KNOWLEDGE_GRAPH_VIEW, whole_graph)
    editing_view = views.link(GRAPH_MODE_VIEW, whole_graph)
    server = mcpkit.new_server("graph", instructions=INSTRUCTIONS, extensions=[views])
    server.middleware.append(lift_database_context)

    @server.resource(
        "graph://{conversationId}",
        name="graph",
        title="Whole conversation graph",
        description="The conversation's whole graph as knowledge-graph JSON {nodes, links}.",
        mime_type=KNOWLEDGE_GRAPH,
    )
    async def graph_resource(conversationId: str) -> str:
        try:
            return await resolve_backend(backends, conversationId).export()
        except GraphwrightError as exc:
            raise ResourceError(str(exc)) from exc

    register_reads(server, backend, graph_view)
    for register in (register_edits, register_bulk, register_history):
        register(server, backend, editing_view)
    return server
