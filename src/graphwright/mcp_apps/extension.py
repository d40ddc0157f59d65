"""The MCP Apps extension of a graphwright server: its views and the tools linked to them.

Built on the SDK's `mcp.server.apps.Apps`, which serves the `ui://` resources and advertises
`io.modelcontextprotocol/ui`. A server makes one, links its views, passes it to
`mcpkit.new_server(extensions=[...])`, and names a link when it registers a tool:

    apps = ServerViews()
    graph_view = apps.link(KNOWLEDGE_GRAPH_VIEW, knowledge_graph_payload)
    server = mcpkit.new_server("kg", instructions=..., extensions=[apps])
    mcpkit.add_tool(server, query_neighbors, annotations=..., view=graph_view)

The tool then carries `_meta.ui.resourceUri`, and each of its successful results gains the
view's payload under `_meta["graphwright/view"]`, but only for clients that negotiated MCP
Apps: other clients get the result as before, without the cost of the payload.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.apps import Apps, ResourceCsp, client_supports_apps
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.resources import FunctionResource
from mcp_types import CallToolRequestParams, CallToolResult

from graphwright.mcp_apps.views import View, document

VIEW_META = "graphwright/view"
NO_OUTSIDE_ORIGINS = ResourceCsp(
    connect_domains=[], resource_domains=[], frame_domains=[], base_uri_domains=[]
)
RESOURCE_META = {"ui": {"csp": NO_OUTSIDE_ORIGINS.model_dump(by_alias=True), "prefersBorder": True}}

Payload = Callable[[CallToolResult], Awaitable[dict[str, Any] | None]]


@dataclass
class ViewLink:
    """One view of one server, and the payload its linked tools' results carry."""

    view: View
    payload: Payload
    tools: dict[str, ViewLink] = field(repr=False)

    def bind(self, tool_name: str) -> dict[str, Any]:
        """Link the tool `tool_name` to the view; returns the tool's `_meta`."""
        self.tools[tool_name] = self
        return {"ui": {"resourceUri": self.view.uri}}


class ServerViews(Apps):
    def __init__(self) -> None:
        super().__init__()
        self._views: set[str] = set()
        self._tools: dict[str, ViewLink] = {}

    def link(self, view: View, payload: Payload) -> ViewLink:
        if view.uri not in self._views:
            self._views.add(view.uri)
            self.add_resource(
                FunctionResource(
                    uri=view.uri,
                    name=view.name,
                    title=view.title,
                    description=view.description,
                    meta=RESOURCE_META,
                    fn=lambda: document(view),
                )
            )
        return ViewLink(view, payload, self._tools)

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        result = await call_next(ctx)
        link = self._tools.get(params.name)
        if (
            link is None
            or not isinstance(result, CallToolResult)
            or result.is_error
            or not client_supports_apps(ctx)
        ):
            return result
        payload = await link.payload(result)
        if payload is None:
            return result
        return result.model_copy(update={"meta": {**(result.meta or {}), VIEW_META: payload}})
