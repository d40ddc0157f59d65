"""Graph tools that read: the budgeted summary, search, filters, neighbours, paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from graphwright import mcpkit
from graphwright.core.words import plural
from graphwright.graphmode import analysis, summary
from graphwright.graphmode.client import GraphBackend
from graphwright.graphmode.limits import INT64_MAX
from graphwright.graphmode.tool_support import (
    NEIGHBORHOOD_NODES,
    READ,
    FoundNodes,
    GraphStateResult,
    NeighborsResult,
    NodeBrief,
    PathResult,
    TypedNodes,
    canonical,
    graph_overview,
    in_thread,
    node_line,
)


def register_reads(
    server: MCPServer[Any], backend: Callable[[], GraphBackend], view: mcpkit.ToolView | None
) -> None:
    """Add the reading tools to `server`; `backend()` is the graph of the call, `view` draws
    the whole graph next to getGraphState's summary."""

    @mcpkit.tool(server, name="getGraphState", annotations=READ, view=view)
    async def get_graph_state(
        tokenBudget: Annotated[
            int,
            Field(
                ge=summary.MIN_TOKEN_BUDGET,
                le=summary.MAX_TOKEN_BUDGET,
                description="Largest answer, in tokens (about 4 characters each).",
            ),
        ] = summary.DEFAULT_TOKEN_BUDGET,
        cursor: Annotated[
            str | None, Field(description="nextCursor of the previous answer, for the next page.")
        ] = None,
    ) -> Annotated[CallToolResult, GraphStateResult]:
        """Summarise the graph within a token budget: node and edge counts, node types, edge
        labels, the most connected nodes, and one page of nodes and edges.

        If nextCursor is set, more nodes and edges follow: call again with that cursor. To find
        particular nodes use searchNodes, filterByType or getNeighbors instead of paging.
        """
        graph = backend()
        position = summary.start(cursor)
        overview = await graph_overview(graph, with_top_nodes=cursor is None)
        window = await graph.window(position.node_index, summary.window_size(tokenBudget))
        told = summary.summarize(
            overview,
            window.nodes,
            window.edges,
            cursor=cursor,
            more_after_window=window.has_more,
            token_budget=tokenBudget,
        )
        return mcpkit.tool_result(told.text, structured=told.data)

    @mcpkit.tool(server, name="searchNodes", annotations=READ)
    async def search_nodes(
        query: Annotated[
            str | None,
            Field(description="Text in the id, label, type or properties (case-insensitive)."),
        ] = None,
        properties: Annotated[
            dict[str, Any] | None,
            Field(description='Exact property values, e.g. {"category": "biolink:Gene"}.'),
        ] = None,
        type: Annotated[str | None, Field(description="Only nodes of this type.")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="Most nodes to list.")] = 20,
    ) -> Annotated[CallToolResult, FoundNodes]:
        """Find nodes by text, by property values and/or by type; best text matches first
        (exact label or id, then label prefix, then substring, then other properties)."""
        rows = await backend().rows()
        found = analysis.search(
            rows.nodes, query=query, properties=properties, node_type=type, limit=limit
        )
        lines = [f"- {node_line(n)}" for n in found["nodes"]]
        more = f" (showing {len(lines)})" if found["truncated"] else ""
        text = f"Found {found['count']} matching node{plural(found['count'])}{more}."
        return mcpkit.tool_result("\n".join([text, *lines]), structured=found)

    @mcpkit.tool(server, name="filterByType", annotations=READ)
    async def filter_by_type(
        type: Annotated[str, Field(min_length=1, description="Node type, e.g. gene or disease.")],
        offset: Annotated[
            int, Field(ge=0, le=INT64_MAX, description="Skip this many nodes (paging).")
        ] = 0,
        limit: Annotated[int, Field(ge=1, le=1000, description="Most nodes to list.")] = 100,
    ) -> Annotated[CallToolResult, TypedNodes]:
        """List the nodes of one type (case-insensitive), in id order, a page at a time."""
        graph = backend()
        info = await graph.summary()
        counts = info.node_types if info else {}
        stored = [name for name in counts if name.casefold() == type.casefold()]
        page = await graph.window(offset, limit, stored) if stored else None
        found = TypedNodes(
            type=type,
            count=sum(counts[name] for name in stored),
            offset=offset,
            nodes=[NodeBrief.model_validate(node) for node in page.nodes] if page else [],
            truncated=bool(page and page.has_more),
        )
        lines = [f"- {node_line(node)}" for node in (page.nodes if page else [])]
        shown = f"{offset + 1}-{offset + len(lines)}" if lines else "none"
        text = f"{found.count} node{plural(found.count)} of type '{type}' (showing {shown})."
        return mcpkit.tool_result("\n".join([text, *lines]), structured=found)

    @mcpkit.tool(server, name="getNeighbors", annotations=READ)
    async def get_neighbors(
        nodeId: Annotated[str, Field(min_length=1, description="Id of the node.")],
        depth: Annotated[int, Field(ge=1, le=3, description="How many hops away.")] = 1,
        direction: Annotated[
            Literal["out", "in", "both"],
            Field(description="Follow edges out of the node, into it, or both."),
        ] = "both",
        limit: Annotated[int, Field(ge=1, le=500, description="Most neighbours to list.")] = 50,
    ) -> Annotated[CallToolResult, NeighborsResult]:
        """The nodes connected to a node (within `depth` hops), each with the edge reaching it."""
        rows = await backend().neighborhood(nodeId, depth, NEIGHBORHOOD_NODES)
        found = analysis.neighbors(
            rows.nodes,
            rows.edges,
            canonical(rows.nodes, nodeId),
            depth=depth,
            direction=direction,
            limit=limit,
        )
        lines = [
            f"- {node_line(n)} via {n['via']['label'] or 'edge'} '{n['via']['id']}'"
            + (f", {n['distance']} hops" if n["distance"] > 1 else "")
            for n in found["neighbors"]
        ]
        name = found["node"]["label"] or found["node"]["id"]
        count = found["count"]
        text = f"'{name}' has {count} neighbour{plural(count)} within {depth} hop{plural(depth)}."
        return mcpkit.tool_result("\n".join([text, *lines]), structured=found)

    @mcpkit.tool(server, name="findPath", annotations=READ)
    async def find_path(
        source: Annotated[str, Field(min_length=1, description="Id of the start node.")],
        target: Annotated[str, Field(min_length=1, description="Id of the end node.")],
        followDirection: Annotated[
            bool, Field(description="Only walk edges from source to target direction.")
        ] = False,
    ) -> Annotated[CallToolResult, PathResult]:
        """The shortest path between two nodes, as the nodes and the edges walked."""
        rows = await backend().rows()
        path = await in_thread(
            analysis.shortest_path,
            rows.nodes,
            rows.edges,
            canonical(rows.nodes, source),
            canonical(rows.nodes, target),
            follow_direction=followDirection,
        )
        steps = [path["nodes"][0]["label"] or path["nodes"][0]["id"]]
        for edge, node in zip(path["edges"], path["nodes"][1:], strict=True):
            steps.append(f"-[{edge['label'] or 'edge'}]- {node['label'] or node['id']}")
        text = f"Shortest path ({path['length']} step{plural(path['length'])}): {' '.join(steps)}"
        return mcpkit.tool_result(text, structured=path)
