"""MCP Apps (`io.modelcontextprotocol/ui`, 2026-01-26): graphwright's interactive views.

Three `ui://` views, each a self-contained HTML document served as `text/html;profile=mcp-app`:
the knowledge graph, the bibliography and Graph Mode's live graph with undo and redo. Tools link
their view through `_meta.ui.resourceUri` (`extension.ServerViews`); a linked tool's result keeps
its full content for every client, and for clients with MCP Apps also carries the view's data
(`payloads`). The views speak the bridge through `static/bridge.js` (documented there).
"""

from graphwright.mcp_apps.extension import VIEW_META, ServerViews, ViewLink
from graphwright.mcp_apps.payloads import (
    ConversationDrawings,
    bibliography_payload,
    knowledge_graph_payload,
)
from graphwright.mcp_apps.views import (
    BIBLIOGRAPHY_VIEW,
    GRAPH_MODE_VIEW,
    KNOWLEDGE_GRAPH_VIEW,
    VIEWS,
    View,
)

__all__ = [
    "BIBLIOGRAPHY_VIEW",
    "GRAPH_MODE_VIEW",
    "KNOWLEDGE_GRAPH_VIEW",
    "VIEWS",
    "VIEW_META",
    "ConversationDrawings",
    "ServerViews",
    "View",
    "ViewLink",
    "bibliography_payload",
    "knowledge_graph_payload",
]
