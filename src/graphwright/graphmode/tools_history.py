"""Graph tools over versions (undo, redo, history, revert) and analysis."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from graphwright import mcpkit
from graphwright.core.words import plural
from graphwright.errors import InvalidInput
from graphwright.graphmode import analysis, community_pages
from graphwright.graphmode.client import GraphBackend
from graphwright.graphmode.limits import INT64_MAX, MAX_VERSION
from graphwright.graphmode.schemas import (
    HistoryPage,
    NodePatch,
    Position,
    UpdateNodeOp,
)
from graphwright.graphmode.tool_support import (
    DESTRUCTIVE,
    DESTRUCTIVE_IDEMPOTENT,
    READ,
    WRITE_IDEMPOTENT,
    CentralityResult,
    ChangeResult,
    CommunitiesResult,
    LayoutResult,
    StructureResult,
    change_result,
    history_line,
    in_thread,
    node_line,
    structure_text,
)


def register_history(
    server: MCPServer[Any], backend: Callable[[], GraphBackend], view: mcpkit.ToolView | None
) -> None:
    """Add the version and analysis tools to `server`; `backend()` is the graph of the call,
    `view` shows the graph after undo, redo, a revert or a layout."""

    @mcpkit.tool(server, name="undo", annotations=DESTRUCTIVE, view=view)
    async def undo() -> Annotated[CallToolResult, ChangeResult]:
        """Undo the latest change still in effect (itself recorded as a new version)."""
        change, version = await backend().undo()
        return change_result("Undid", change, version)

    @mcpkit.tool(server, name="redo", annotations=DESTRUCTIVE, view=view)
    async def redo() -> Annotated[CallToolResult, ChangeResult]:
        """Redo the change undone last (only right after undo; a new edit drops the redo)."""
        change, version = await backend().redo()
        return change_result("Redid", change, version)

    @mcpkit.tool(server, name="getHistory", annotations=READ)
    async def get_history(
        offset: Annotated[
            int, Field(ge=0, le=INT64_MAX, description="Skip this many newest changes.")
        ] = 0,
        limit: Annotated[int, Field(ge=1, le=200, description="How many changes.")] = 20,
    ) -> Annotated[CallToolResult, HistoryPage]:
        """The graph's change log, newest first: version, command, who, when, what."""
        page = await backend().history(offset, limit)
        lines = [history_line(item) for item in page.items]
        text = f"The graph is at version {page.version}; {page.total} change{plural(page.total)}."
        return mcpkit.tool_result("\n".join([text, *lines]), structured=page)

    @mcpkit.tool(server, name="revertToVersion", annotations=DESTRUCTIVE_IDEMPOTENT, view=view)
    async def revert_to_version(
        version: Annotated[
            int, Field(ge=0, le=MAX_VERSION, description="The version to go back to.")
        ],
    ) -> Annotated[CallToolResult, ChangeResult]:
        """Make the graph what it was at an earlier version, as one new version (undoable)."""
        change, new_version = await backend().revert(version)
        return mcpkit.tool_result(
            f"Reverted the graph to version {version}; it is now at version {new_version}.",
            structured=ChangeResult(change=change, version=new_version),
        )

    # -- analysis -----------------------------------------------------------------------------

    async def read_for_analysis(ctx: Context, graph: GraphBackend | None = None) -> Any:
        await mcpkit.progress(ctx, 0, 2, "Reading the graph")
        rows = await (graph or backend()).rows()
        await mcpkit.progress(ctx, 1, 2, f"Analysing {len(rows.nodes)} nodes")
        return rows

    @mcpkit.tool(server, name="analyzeStructure", annotations=READ)
    async def analyze_structure(ctx: Context) -> Annotated[CallToolResult, StructureResult]:
        """Graph metrics: size, density, connected components, diameter of the largest
        component (approximate on large graphs, and then marked so) and the degree spread."""
        rows = await read_for_analysis(ctx)
        found = await in_thread(analysis.structure, rows.nodes, rows.edges)
        return mcpkit.tool_result(structure_text(found), structured=found)

    @mcpkit.tool(server, name="findCentrality", annotations=READ)
    async def find_centrality(
        measure: Annotated[
            Literal["degree", "betweenness", "pagerank"],
            Field(description="degree (hubs), betweenness (bridges) or pagerank (influence)."),
        ] = "degree",
        top: Annotated[int, Field(ge=1, le=100, description="How many nodes to list.")] = 10,
        *,
        ctx: Context,
    ) -> Annotated[CallToolResult, CentralityResult]:
        """The most central nodes by degree, betweenness (sampled on large graphs, and then
        marked approximate) or PageRank."""
        rows = await read_for_analysis(ctx)
        found = await in_thread(
            analysis.centrality, rows.nodes, rows.edges, measure=measure, top=top
        )
        approx = " (approximate: sampled)" if found["approximate"] else ""
        lines = [f"- {node_line(n)}: {n['score']}" for n in found["top"]]
        text = f"Top {len(lines)} nodes by {measure}{approx}:"
        return mcpkit.tool_result("\n".join([text, *lines]), structured=found)

    @mcpkit.tool(server, name="detectCommunities", annotations=READ)
    async def detect_communities(
        resolution: Annotated[
            float,
            Field(
                gt=0,
                le=community_pages.MAX_RESOLUTION,
                description="Above 1: more, smaller communities.",
            ),
        ] = 1.0,
        seed: Annotated[
            int,
            Field(
                ge=0, le=INT64_MAX, description="Random seed; the same seed gives the same answer."
            ),
        ] = 0,
        limit: Annotated[
            int,
            Field(
                ge=1,
                le=community_pages.MAX_LIMIT,
                description="Most communities on this page (a long page is cut shorter).",
            ),
        ] = community_pages.DEFAULT_LIMIT,
        cursor: Annotated[
            str | None,
            Field(
                description="nextCursor of the previous answer, for the next page; it keeps "
                "that answer's seed and resolution."
            ),
        ] = None,
        *,
        ctx: Context,
    ) -> Annotated[CallToolResult, CommunitiesResult]:
        """Group nodes into communities (Louvain), largest first, each with its size, node
        types and up to 20 best-connected members; a page at a time.

        If nextCursor is set, more communities follow: call again with that cursor.
        """
        position = community_pages.CommunityCursor.decode(cursor) if cursor else None
        if position is not None:
            resolution, seed = position.resolution, position.seed
        rows = await read_for_analysis(ctx)
        if position is not None:
            position.check_version(rows.version)
        found = await in_thread(
            analysis.communities, rows.nodes, rows.edges, resolution=resolution, seed=seed
        )
        result = community_pages.result_page(
            found,
            version=rows.version,
            seed=seed,
            resolution=resolution,
            offset=position.offset if position else 0,
            limit=limit,
        )
        return mcpkit.tool_result(community_pages.communities_text(result), structured=result)

    @mcpkit.tool(server, name="applyLayout", annotations=WRITE_IDEMPOTENT, view=view)
    async def apply_layout(
        layout: Annotated[
            Literal["force", "hierarchical", "circular"],
            Field(
                description="force (related nodes close together), hierarchical (layers along "
                "edge direction) or circular."
            ),
        ] = "force",
        *,
        ctx: Context,
    ) -> Annotated[CallToolResult, LayoutResult]:
        """Compute node positions and save them as one new version (undo restores the old ones)."""
        graph = backend()
        rows = await read_for_analysis(ctx, graph)
        if not rows.nodes:
            raise InvalidInput("The graph has no nodes to lay out")
        positions = await in_thread(analysis.layout, rows.nodes, rows.edges, kind=layout)
        operations = [
            UpdateNodeOp(op="updateNode", id=node_id, patch=NodePatch(position=Position(**xy)))
            for node_id, xy in positions.items()
        ]
        _, version = await graph.batch(operations)
        return mcpkit.tool_result(
            f"Applied the {layout} layout to {len(positions)} nodes (version {version}).",
            structured=LayoutResult(layout=layout, nodeCount=len(positions), version=version),
        )
