"""Graph tools that add, change and remove one node or edge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from graphwright import mcpkit
from graphwright.core.words import plural
from graphwright.errors import InvalidInput
from graphwright.graphmode.client import GraphBackend
from graphwright.graphmode.schemas import (
    EdgePatch,
    NodePatch,
    Position,
)
from graphwright.graphmode.tool_support import (
    DESTRUCTIVE,
    WRITE,
    WRITE_IDEMPOTENT,
    EdgeResult,
    EdgeSpec,
    NodeResult,
    NodeSpec,
    RemovalResult,
    build,
    quoted,
    removal_summary,
)


def register_edits(
    server: MCPServer[Any], backend: Callable[[], GraphBackend], view: mcpkit.ToolView | None
) -> None:
    """Add the nodes and edges tools to `server`; `backend()` is the graph of the call, `view`
    shows the graph after each change."""

    @mcpkit.tool(server, name="addNode", annotations=WRITE, view=view)
    async def add_node(
        label: Annotated[str, Field(min_length=1, description="Display name, e.g. 'TP53'.")],
        type: Annotated[
            str,
            Field(min_length=1, description="gene, protein, disease, drug, pathway or other."),
        ],
        data: Annotated[
            dict[str, Any] | None,
            Field(description="More properties: category, description, evidence, ..."),
        ] = None,
        position: Annotated[Position | None, Field(description="Where to draw it: {x, y}.")] = None,
        canonicalId: Annotated[
            str | None,
            Field(description="The node's id as a CURIE, e.g. NCBIGene:7157; made up if absent."),
        ] = None,
    ) -> Annotated[CallToolResult, NodeResult]:
        """Add a node to the conversation's knowledge graph.

        Give a canonicalId (CURIE) when you know one, so that later edges and merges can refer
        to it. Fails if a node with that id exists already. Returns the node with its id.
        """
        spec = build(
            NodeSpec, label=label, type=type, data=data, position=position, canonicalId=canonicalId
        )
        node, version = await backend().add_node(spec.to_input())
        return mcpkit.tool_result(
            f"Added node {quoted(node)} ({node.type}) with id '{node.id}' (version {version}).",
            structured=NodeResult(node=node, version=version),
        )

    @mcpkit.tool(server, name="addEdge", annotations=WRITE, view=view)
    async def add_edge(
        source: Annotated[str, Field(min_length=1, description="Id of the source node.")],
        target: Annotated[str, Field(min_length=1, description="Id of the target node.")],
        label: Annotated[
            str | None, Field(description="Relation, e.g. inhibits, encodes, associated_with.")
        ] = None,
        type: Annotated[
            str | None, Field(description="Kind: biological, pharmacological, clinical, ...")
        ] = None,
        data: Annotated[
            dict[str, Any] | None, Field(description="More properties, e.g. evidence.")
        ] = None,
    ) -> Annotated[CallToolResult, EdgeResult]:
        """Add an edge from one node to another, by node id.

        Both nodes must exist (add them first with addNode). Returns the edge with its id.
        """
        graph = backend()
        spec = build(EdgeSpec, source=source, target=target, label=label, type=type, data=data)
        edge, version = await graph.add_edge(spec.to_input())
        start, end = await graph.get_node(edge.source), await graph.get_node(edge.target)
        labelled = f" with label '{edge.label}'" if edge.label else ""
        return mcpkit.tool_result(
            f"Added edge from {quoted(start)} to {quoted(end)}{labelled}. "
            f"Edge id '{edge.id}' (version {version}).",
            structured=EdgeResult(edge=edge, version=version),
        )

    @mcpkit.tool(server, name="removeNode", annotations=DESTRUCTIVE, view=view)
    async def remove_node(
        nodeId: Annotated[str, Field(min_length=1, description="Id of the node to remove.")],
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove a node and every edge connected to it (undo brings them back)."""
        graph = backend()
        node = await graph.get_node(nodeId)
        removal, version = await graph.remove_node(node.id)
        edges = f"{removal.edge_count} connected edge{plural(removal.edge_count)}"
        return mcpkit.tool_result(
            f"Removed node {quoted(node)} and its {edges} (version {version}).",
            structured=removal_summary(removal, version),
        )

    @mcpkit.tool(server, name="removeEdge", annotations=DESTRUCTIVE, view=view)
    async def remove_edge(
        edgeId: Annotated[str, Field(min_length=1, description="Id of the edge to remove.")],
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove one edge by its id; the two nodes it joined stay. Undo brings it back."""
        graph = backend()
        edge = await graph.get_edge(edgeId)
        start, end = await graph.get_node(edge.source), await graph.get_node(edge.target)
        removal, version = await graph.remove_edge(edge.id)
        return mcpkit.tool_result(
            f"Removed edge connecting {quoted(start)} to {quoted(end)} (version {version}).",
            structured=removal_summary(removal, version),
        )

    @mcpkit.tool(server, name="updateNode", annotations=WRITE_IDEMPOTENT, view=view)
    async def update_node(
        nodeId: Annotated[str, Field(min_length=1, description="Id of the node to change.")],
        label: Annotated[str | None, Field(min_length=1, description="New display name.")] = None,
        type: Annotated[str | None, Field(min_length=1, description="New type.")] = None,
        data: Annotated[
            dict[str, Any] | None,
            Field(
                description="Properties to set, merged key by key; a key set to null is removed."
            ),
        ] = None,
        position: Annotated[Position | None, Field(description="New position {x, y}.")] = None,
    ) -> Annotated[CallToolResult, NodeResult]:
        """Change some fields of a node; fields not given stay as they are."""
        patch = build(NodePatch, label=label, type=type, data=data, position=position)
        changed = sorted(patch.model_fields_set)
        if not changed:
            raise InvalidInput("Give at least one of label, type, data or position to change")
        node, version = await backend().update_node(nodeId, patch)
        return mcpkit.tool_result(
            f"Updated node {quoted(node)} ({', '.join(changed)}; version {version}).",
            structured=NodeResult(node=node, version=version),
        )

    @mcpkit.tool(server, name="updateEdge", annotations=WRITE_IDEMPOTENT, view=view)
    async def update_edge(
        edgeId: Annotated[str, Field(min_length=1, description="Id of the edge to change.")],
        source: Annotated[
            str | None, Field(min_length=1, description="New source node id.")
        ] = None,
        target: Annotated[
            str | None, Field(min_length=1, description="New target node id.")
        ] = None,
        label: Annotated[str | None, Field(description="New relation label.")] = None,
        type: Annotated[str | None, Field(description="New edge type.")] = None,
        data: Annotated[
            dict[str, Any] | None,
            Field(
                description="Properties to set, merged key by key; a key set to null is removed."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, EdgeResult]:
        """Change some fields of an edge; fields not given stay as they are."""
        patch = build(EdgePatch, source=source, target=target, label=label, type=type, data=data)
        changed = sorted(patch.model_fields_set)
        if not changed:
            raise InvalidInput("Give at least one of source, target, label, type or data to change")
        edge, version = await backend().update_edge(edgeId, patch)
        return mcpkit.tool_result(
            f"Updated edge '{edge.id}' from '{edge.source}' to '{edge.target}' "
            f"({', '.join(changed)}; version {version}).",
            structured=EdgeResult(edge=edge, version=version),
        )
