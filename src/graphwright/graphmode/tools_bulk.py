"""Graph tools for many nodes or edges at once: bulk adds, imports, removals, merges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from graphwright import mcpkit
from graphwright.core.words import plural
from graphwright.errors import InvalidInput
from graphwright.graphmode.client import GraphBackend
from graphwright.graphmode.schemas import DEGREE_MAX, NodeSelection
from graphwright.graphmode.tool_support import (
    DESTRUCTIVE,
    WRITE,
    EdgeSpec,
    ImportResult,
    ManyResult,
    NodeResult,
    NodeSpec,
    RemovalResult,
    build,
    many_result,
    quoted,
    removal_result,
)


def register_bulk(
    server: MCPServer[Any], backend: Callable[[], GraphBackend], view: mcpkit.ToolView | None
) -> None:
    """Add the bulk tools to `server`; `backend()` is the graph of the call, `view` shows the
    graph after each change."""

    @mcpkit.tool(server, name="addMultipleNodes", annotations=WRITE, view=view)
    async def add_multiple_nodes(
        nodes: Annotated[list[NodeSpec], Field(min_length=1, description="Nodes to add.")],
    ) -> Annotated[CallToolResult, ManyResult]:
        """Add many nodes at once, as one version (all or none)."""
        added, version = await backend().add_nodes([spec.to_input() for spec in nodes])
        names = ", ".join(quoted(n) for n in added[:10]) + (" ..." if len(added) > 10 else "")
        return mcpkit.tool_result(
            f"Added {len(added)} node{plural(len(added))}: {names} (version {version}).",
            structured=many_result(added, version),
        )

    @mcpkit.tool(server, name="addMultipleEdges", annotations=WRITE, view=view)
    async def add_multiple_edges(
        edges: Annotated[list[EdgeSpec], Field(min_length=1, description="Edges to add.")],
    ) -> Annotated[CallToolResult, ManyResult]:
        """Add many edges at once, as one version (all or none); every node must exist."""
        added, version = await backend().add_edges([spec.to_input() for spec in edges])
        return mcpkit.tool_result(
            f"Added {len(added)} edge{plural(len(added))} (version {version}).",
            structured=many_result(added, version),
        )

    @mcpkit.tool(server, name="importFromJSON", annotations=WRITE, view=view)
    async def import_from_json(
        graph: Annotated[
            dict[str, Any] | str,
            Field(
                description="A graph {nodes: [{id, name, category?}], links: [{source, target, "
                "label, evidence?}]}, or text in `format`."
            ),
        ],
        ctx: Context,
        format: Annotated[
            Literal["json", "trapi", "kgx-jsonl", "kgx-tsv", "graphml", "cx2"],
            Field(description="Format of a text graph."),
        ] = "json",
    ) -> Annotated[CallToolResult, ImportResult]:
        """Merge a whole graph (or a tool result) into this one, as one version: nodes with the
        same id are merged, links with the same source, target and label have their evidence
        unioned."""
        await mcpkit.progress(ctx, 0, 2, "Importing the graph")
        report, version = await backend().import_graph(graph, format)
        await mcpkit.progress(ctx, 2, 2, f"Imported the graph (version {version})")
        return mcpkit.tool_result(
            f"Imported {report.nodes_added} new node{plural(report.nodes_added)} "
            f"({report.nodes_merged} merged into existing ones) and {report.edges_added} new "
            f"edge{plural(report.edges_added)} ({report.edges_merged} merged) (version {version}).",
            structured=ImportResult(report=report, version=version),
        )

    @mcpkit.tool(server, name="bulkRemoveNodes", annotations=DESTRUCTIVE, view=view)
    async def bulk_remove_nodes(
        nodeIds: Annotated[list[str], Field(min_length=1, description="Ids of nodes to remove.")],
        preview: Annotated[bool, Field(description="Only report what would go.")] = False,
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove many nodes and their edges at once, as one version (or preview it)."""
        removal, version = await backend().remove_nodes(
            build(NodeSelection, ids=nodeIds), preview=preview
        )
        return removal_result(removal, version)

    @mcpkit.tool(server, name="bulkRemoveEdges", annotations=DESTRUCTIVE, view=view)
    async def bulk_remove_edges(
        edgeIds: Annotated[list[str], Field(min_length=1, description="Ids of edges to remove.")],
        preview: Annotated[bool, Field(description="Only report what would go.")] = False,
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove many edges at once, as one version (or preview it)."""
        removal, version = await backend().remove_edges(edgeIds, preview=preview)
        return removal_result(removal, version)

    @mcpkit.tool(server, name="removeNodesByDegree", annotations=DESTRUCTIVE, view=view)
    async def remove_nodes_by_degree(
        minDegree: Annotated[
            int | None,
            Field(ge=0, le=DEGREE_MAX, description="Remove nodes with at least this many edges."),
        ] = None,
        maxDegree: Annotated[
            int | None,
            Field(ge=0, le=DEGREE_MAX, description="Remove nodes with at most this many edges."),
        ] = None,
        degree: Annotated[
            int | None,
            Field(
                ge=0,
                le=DEGREE_MAX,
                description="Remove nodes with exactly this many edges (0: isolated).",
            ),
        ] = None,
        type: Annotated[str | None, Field(description="Only nodes of this type.")] = None,
        preview: Annotated[bool, Field(description="Only report what would go.")] = False,
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove nodes by how many edges they have, e.g. degree=0 to drop isolated nodes.
        Use preview=true first to see what would go."""
        selection = build(
            NodeSelection, min_degree=minDegree, max_degree=maxDegree, degree=degree, type=type
        )
        removal, version = await backend().remove_nodes(selection, preview=preview)
        return removal_result(removal, version)

    @mcpkit.tool(server, name="removeNodesByType", annotations=DESTRUCTIVE, view=view)
    async def remove_nodes_by_type(
        types: Annotated[
            list[str] | None, Field(description="Remove nodes of these types.")
        ] = None,
        excludeTypes: Annotated[
            list[str] | None, Field(description="Remove nodes of every type except these.")
        ] = None,
        preview: Annotated[bool, Field(description="Only report what would go.")] = False,
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove every node of some types (or of all types but some), with their edges.
        Use preview=true first to see what would go."""
        if not types and not excludeTypes:
            raise InvalidInput("Give types to remove, or excludeTypes to keep")
        selection = build(NodeSelection, types=types, exclude_types=excludeTypes)
        removal, version = await backend().remove_nodes(selection, preview=preview)
        return removal_result(removal, version)

    @mcpkit.tool(server, name="mergeNodes", annotations=DESTRUCTIVE, view=view)
    async def merge_nodes(
        keepId: Annotated[str, Field(min_length=1, description="Id of the node that stays.")],
        removeIds: Annotated[
            list[str], Field(min_length=1, description="Ids of its duplicates, merged into it.")
        ],
    ) -> Annotated[CallToolResult, NodeResult]:
        """Merge duplicate nodes into one: their edges move to the kept node, and their
        properties and evidence are unioned into it."""
        node, version = await backend().merge_nodes(keepId, removeIds)
        return mcpkit.tool_result(
            f"Merged {', '.join(repr(i) for i in removeIds)} into {quoted(node)} "
            f"('{node.id}'); their edges now point to it (version {version}).",
            structured=NodeResult(node=node, version=version),
        )

    # -- history ------------------------------------------------------------------------------
