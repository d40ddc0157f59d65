"""The `graph` MCP server (seed 004): build, edit, undo, read and analyse a conversation's graph.

Thin: each tool parses its arguments, asks the backend (`client.py`) or the pure functions
(`analysis.py`, `summary.py`) and words the result. Which graph a call touches comes from seed
004's `databaseContext` argument, which a middleware lifts out of the arguments before they are
validated, so it never appears in the input schemas the model sees.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request

from graphwright import mcpkit
from graphwright.core.artifacts import KNOWLEDGE_GRAPH
from graphwright.errors import GraphwrightError, InvalidInput
from graphwright.graphmode import analysis, summary
from graphwright.graphmode.client import (
    BackendResolver,
    DatabaseContext,
    GraphBackend,
    HttpCaller,
)
from graphwright.graphmode.schemas import (
    ChangesetSummary,
    Edge,
    EdgeInput,
    EdgePatch,
    HistoryPage,
    ImportReport,
    Node,
    NodeInput,
    NodePatch,
    NodeSelection,
    Position,
    Removal,
    UpdateNodeOp,
)
from graphwright.settings import Settings, get_settings

M = TypeVar("M", bound=BaseModel)

DATABASE_CONTEXT = "databaseContext"
LISTED_IDS = 100  # ids listed in a structured result before it says "truncated"
NEIGHBORHOOD_NODES = 5_000
TOP_NODES = 10
TOP_NODES_MAX_GRAPH = 5_000  # nodes; above, reading the whole graph per summary costs seconds

_ABSENT = object()

WRITE = mcpkit.hints(read_only=False)
WRITE_IDEMPOTENT = mcpkit.hints(read_only=False, idempotent=True)
DESTRUCTIVE = mcpkit.hints(read_only=False, destructive=True)
DESTRUCTIVE_IDEMPOTENT = mcpkit.hints(read_only=False, destructive=True, idempotent=True)
READ = mcpkit.hints(read_only=True)

INSTRUCTIONS = (
    "Build and edit the knowledge graph of this conversation. Nodes have an id (a CURIE such as "
    "NCBIGene:7157 when you know one; pass it as canonicalId), a label and a type (gene, protein, "
    "disease, drug, pathway, ...). Edges join node ids. Every change is a new version that undo "
    "and redo can step through. Read the graph with getGraphState (a budgeted summary with a "
    "cursor), searchNodes, filterByType and getNeighbors; never ask for the whole graph."
)


@dataclass(frozen=True)
class _CallOrigin:
    database_context: Any  # the raw `databaseContext` argument, or _ABSENT
    caller: HttpCaller | None  # set when the call came over streamable HTTP


_call_origin: ContextVar[_CallOrigin | None] = ContextVar("graph_call_origin", default=None)


async def lift_database_context(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Move `databaseContext` out of a tools/call's arguments into this call's context, with
    who sent the call (or the resource read) when it came over HTTP."""
    if ctx.method not in ("tools/call", "resources/read"):
        return await call_next(ctx)
    request = ctx.request
    caller = HttpCaller.of(request.scope, request.headers) if isinstance(request, Request) else None
    params = ctx.params
    arguments = params.get("arguments") if isinstance(params, Mapping) else None
    raw = arguments.get(DATABASE_CONTEXT, _ABSENT) if isinstance(arguments, Mapping) else _ABSENT
    if raw is not _ABSENT:
        rest = {key: value for key, value in arguments.items() if key != DATABASE_CONTEXT}
        ctx = dataclasses.replace(ctx, params={**params, "arguments": rest})
    token = _call_origin.set(_CallOrigin(raw, caller))
    try:
        return await call_next(ctx)
    finally:
        _call_origin.reset(token)


def _resolve(resolver: BackendResolver, conversation: str | None = None) -> GraphBackend:
    """This call's backend; `conversation` (a resource's) replaces any databaseContext."""
    origin = _call_origin.get() or _CallOrigin(_ABSENT, None)
    context = None
    if conversation is not None:
        context = DatabaseContext(conversation)
    elif origin.database_context is not _ABSENT:
        context = DatabaseContext.parse(origin.database_context)
    return resolver.resolve(context, origin.caller)


# --- tool-boundary models --------------------------------------------------------------------


class ToolModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeSpec(ToolModel):
    label: str = Field(min_length=1, description="Display name, e.g. 'TP53'.")
    type: str = Field(min_length=1, description="gene, protein, disease, drug, pathway, other...")
    data: dict[str, Any] | None = Field(
        default=None, description="More properties: category, description, evidence, ..."
    )
    position: Position | None = Field(default=None, description="Where to draw it: {x, y}.")
    canonicalId: str | None = Field(
        default=None, description="The node's id as a CURIE, e.g. NCBIGene:7157; made up if absent."
    )

    def to_input(self) -> NodeInput:
        return NodeInput(
            id=self.canonicalId,
            label=self.label,
            type=self.type,
            data=self.data or {},
            position=self.position,
        )


class EdgeSpec(ToolModel):
    source: str = Field(min_length=1, description="Id of the node the edge starts at.")
    target: str = Field(min_length=1, description="Id of the node the edge ends at.")
    label: str | None = Field(default=None, description="Relation, e.g. inhibits, encodes.")
    type: str | None = Field(default=None, description="Kind: biological, pharmacological, ...")
    data: dict[str, Any] | None = Field(default=None, description="More properties, e.g. evidence.")

    def to_input(self) -> EdgeInput:
        return EdgeInput(
            source=self.source,
            target=self.target,
            label=self.label,
            type=self.type,
            data=self.data or {},
        )


class NodeBrief(BaseModel):
    id: str
    label: str | None = None
    type: str | None = None


class NodeResult(BaseModel):
    node: Node
    version: int


class EdgeResult(BaseModel):
    edge: Edge
    version: int


class ManyResult(BaseModel):
    count: int
    version: int
    ids: list[str] = Field(description=f"The first {LISTED_IDS} ids.")
    truncated: bool


class RemovalResult(BaseModel):
    preview: bool
    nodeCount: int
    edgeCount: int
    nodeIds: list[str] = Field(description=f"The first {LISTED_IDS} node ids.")
    edgeIds: list[str] = Field(description=f"The first {LISTED_IDS} edge ids.")
    truncated: bool
    version: int


class ImportResult(BaseModel):
    report: ImportReport
    version: int


class ChangeResult(BaseModel):
    change: ChangesetSummary
    version: int


class GraphStateResult(BaseModel):
    nodeCount: int
    edgeCount: int
    version: int | None
    note: str | None = None
    nodeTypes: dict[str, int] | None = None
    edgeLabels: dict[str, int] | None = None
    topNodes: list[dict[str, Any]] | None = None
    nodes: list[NodeBrief]
    edges: list[dict[str, Any]]
    nextCursor: str | None = Field(description="Pass to getGraphState for the next page.")


class FoundNodes(BaseModel):
    count: int
    nodes: list[NodeBrief]
    truncated: bool


class TypedNodes(FoundNodes):
    type: str
    offset: int


class NeighborsResult(BaseModel):
    node: NodeBrief
    count: int
    neighbors: list[dict[str, Any]]
    truncated: bool


class PathResult(BaseModel):
    length: int
    nodes: list[NodeBrief]
    edges: list[dict[str, Any]]


class StructureResult(BaseModel):
    nodeCount: int
    edgeCount: int
    density: float
    components: dict[str, Any]
    diameter: dict[str, Any]
    degree: dict[str, Any]
    selfLoops: int


class CentralityResult(BaseModel):
    measure: str
    approximate: bool
    sampledSources: int | None = None
    top: list[dict[str, Any]]


class CommunitiesResult(BaseModel):
    algorithm: str
    count: int
    modularity: float | None
    communities: list[dict[str, Any]]


class LayoutResult(BaseModel):
    layout: str
    nodeCount: int
    version: int


# --- wording ---------------------------------------------------------------------------------


def _quoted(node: Node | NodeBrief) -> str:
    return f"'{node.label or node.id}'"


def _ids(values: Sequence[str]) -> list[str]:
    return list(values[:LISTED_IDS])


def _removal(removal: Removal, version: int) -> RemovalResult:
    return RemovalResult(
        preview=removal.preview,
        nodeCount=removal.node_count,
        edgeCount=removal.edge_count,
        nodeIds=_ids(removal.node_ids),
        edgeIds=_ids(removal.edge_ids),
        truncated=max(len(removal.node_ids), len(removal.edge_ids)) > LISTED_IDS,
        version=version,
    )


def _removal_result(removal: Removal, version: int) -> CallToolResult:
    """The answer of a bulk removal (or its preview): what went, listed and counted."""
    listed = ", ".join(removal.node_ids[:20]) + (" ..." if removal.node_count > 20 else "")
    nodes = f"{removal.node_count} node{_s(removal.node_count)}"
    edges = f"{removal.edge_count} edge{_s(removal.edge_count)}"
    what = f"{nodes} ({listed}) and {edges}" if removal.node_count else edges
    if removal.preview:
        text = f"Preview: this would remove {what}. Nothing was changed (version {version})."
    else:
        text = f"Removed {what} (version {version})."
    return mcpkit.tool_result(text, structured=_removal(removal, version))


def _many(items: Sequence[Node | Edge], version: int) -> ManyResult:
    return ManyResult(
        count=len(items),
        version=version,
        ids=[item.id for item in items[:LISTED_IDS]],
        truncated=len(items) > LISTED_IDS,
    )


def _change_result(verb: str, change: ChangesetSummary, version: int) -> CallToolResult:
    """The answer of undo or redo: which version it stepped over, and the new one."""
    return mcpkit.tool_result(
        f"{verb} version {change.target_version}; the graph is now at version {version}.",
        structured=ChangeResult(change=change, version=version),
    )


async def _in_thread(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """CPU-bound analysis off the event loop, so other sessions keep being served."""
    return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs))


# --- the server ------------------------------------------------------------------------------


def graph_server(
    resolver: BackendResolver | None = None, *, settings: Settings | None = None
) -> MCPServer[Any]:
    """The Graph Mode MCP server; `resolver` defaults to one built from the settings."""
    backends = resolver or BackendResolver(settings or get_settings())
    server = mcpkit.new_server("graph", instructions=INSTRUCTIONS)
    server.middleware.append(lift_database_context)

    def backend() -> GraphBackend:
        return _resolve(backends)

    @server.resource(
        "graph://{conversationId}",
        name="graph",
        title="Whole conversation graph",
        description="The conversation's whole graph as knowledge-graph JSON {nodes, links}.",
        mime_type=KNOWLEDGE_GRAPH,
    )
    async def graph_resource(conversationId: str) -> str:
        try:
            return await _resolve(backends, conversationId).export()
        except GraphwrightError as exc:
            raise ResourceError(str(exc)) from exc

    # -- nodes and edges ----------------------------------------------------------------------

    @mcpkit.tool(server, name="addNode", annotations=WRITE)
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
        spec = _build(
            NodeSpec, label=label, type=type, data=data, position=position, canonicalId=canonicalId
        )
        node, version = await backend().add_node(spec.to_input())
        return mcpkit.tool_result(
            f"Added node {_quoted(node)} ({node.type}) with id '{node.id}' (version {version}).",
            structured=NodeResult(node=node, version=version),
        )

    @mcpkit.tool(server, name="addEdge", annotations=WRITE)
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
        spec = _build(EdgeSpec, source=source, target=target, label=label, type=type, data=data)
        edge, version = await graph.add_edge(spec.to_input())
        start, end = await graph.get_node(edge.source), await graph.get_node(edge.target)
        labelled = f" with label '{edge.label}'" if edge.label else ""
        return mcpkit.tool_result(
            f"Added edge from {_quoted(start)} to {_quoted(end)}{labelled}. "
            f"Edge id '{edge.id}' (version {version}).",
            structured=EdgeResult(edge=edge, version=version),
        )

    @mcpkit.tool(server, name="removeNode", annotations=DESTRUCTIVE)
    async def remove_node(
        nodeId: Annotated[str, Field(min_length=1, description="Id of the node to remove.")],
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove a node and every edge connected to it (undo brings them back)."""
        graph = backend()
        node = await graph.get_node(nodeId)
        removal, version = await graph.remove_node(node.id)
        edges = f"{removal.edge_count} connected edge{_s(removal.edge_count)}"
        return mcpkit.tool_result(
            f"Removed node {_quoted(node)} and its {edges} (version {version}).",
            structured=_removal(removal, version),
        )

    @mcpkit.tool(server, name="removeEdge", annotations=DESTRUCTIVE)
    async def remove_edge(
        edgeId: Annotated[str, Field(min_length=1, description="Id of the edge to remove.")],
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove one edge by its id; the two nodes it joined stay. Undo brings it back."""
        graph = backend()
        edge = await graph.get_edge(edgeId)
        start, end = await graph.get_node(edge.source), await graph.get_node(edge.target)
        removal, version = await graph.remove_edge(edge.id)
        return mcpkit.tool_result(
            f"Removed edge connecting {_quoted(start)} to {_quoted(end)} (version {version}).",
            structured=_removal(removal, version),
        )

    @mcpkit.tool(server, name="updateNode", annotations=WRITE_IDEMPOTENT)
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
        patch = _build(NodePatch, label=label, type=type, data=data, position=position)
        changed = sorted(patch.model_fields_set)
        if not changed:
            raise InvalidInput("Give at least one of label, type, data or position to change")
        node, version = await backend().update_node(nodeId, patch)
        return mcpkit.tool_result(
            f"Updated node {_quoted(node)} ({', '.join(changed)}; version {version}).",
            structured=NodeResult(node=node, version=version),
        )

    @mcpkit.tool(server, name="updateEdge", annotations=WRITE_IDEMPOTENT)
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
        patch = _build(EdgePatch, source=source, target=target, label=label, type=type, data=data)
        changed = sorted(patch.model_fields_set)
        if not changed:
            raise InvalidInput("Give at least one of source, target, label, type or data to change")
        edge, version = await backend().update_edge(edgeId, patch)
        return mcpkit.tool_result(
            f"Updated edge '{edge.id}' from '{edge.source}' to '{edge.target}' "
            f"({', '.join(changed)}; version {version}).",
            structured=EdgeResult(edge=edge, version=version),
        )

    # -- reading ------------------------------------------------------------------------------

    @mcpkit.tool(server, name="getGraphState", annotations=READ)
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
        overview = await _overview(graph, with_top_nodes=cursor is None)
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
        lines = [f"- {_node_line(n)}" for n in found["nodes"]]
        more = f" (showing {len(lines)})" if found["truncated"] else ""
        text = f"Found {found['count']} matching node{_s(found['count'])}{more}."
        return mcpkit.tool_result("\n".join([text, *lines]), structured=found)

    @mcpkit.tool(server, name="filterByType", annotations=READ)
    async def filter_by_type(
        type: Annotated[str, Field(min_length=1, description="Node type, e.g. gene or disease.")],
        offset: Annotated[int, Field(ge=0, description="Skip this many nodes (paging).")] = 0,
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
        lines = [f"- {_node_line(node)}" for node in (page.nodes if page else [])]
        shown = f"{offset + 1}-{offset + len(lines)}" if lines else "none"
        text = f"{found.count} node{_s(found.count)} of type '{type}' (showing {shown})."
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
            _canonical(rows.nodes, nodeId),
            depth=depth,
            direction=direction,
            limit=limit,
        )
        lines = [
            f"- {_node_line(n)} via {n['via']['label'] or 'edge'} '{n['via']['id']}'"
            + (f", {n['distance']} hops" if n["distance"] > 1 else "")
            for n in found["neighbors"]
        ]
        name = found["node"]["label"] or found["node"]["id"]
        count = found["count"]
        text = f"'{name}' has {count} neighbour{_s(count)} within {depth} hop{_s(depth)}."
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
        path = await _in_thread(
            analysis.shortest_path,
            rows.nodes,
            rows.edges,
            _canonical(rows.nodes, source),
            _canonical(rows.nodes, target),
            follow_direction=followDirection,
        )
        steps = [path["nodes"][0]["label"] or path["nodes"][0]["id"]]
        for edge, node in zip(path["edges"], path["nodes"][1:], strict=True):
            steps.append(f"-[{edge['label'] or 'edge'}]- {node['label'] or node['id']}")
        text = f"Shortest path ({path['length']} step{_s(path['length'])}): {' '.join(steps)}"
        return mcpkit.tool_result(text, structured=path)

    # -- bulk ---------------------------------------------------------------------------------

    @mcpkit.tool(server, name="addMultipleNodes", annotations=WRITE)
    async def add_multiple_nodes(
        nodes: Annotated[list[NodeSpec], Field(min_length=1, description="Nodes to add.")],
    ) -> Annotated[CallToolResult, ManyResult]:
        """Add many nodes at once, as one version (all or none)."""
        added, version = await backend().add_nodes([spec.to_input() for spec in nodes])
        names = ", ".join(_quoted(n) for n in added[:10]) + (" ..." if len(added) > 10 else "")
        return mcpkit.tool_result(
            f"Added {len(added)} node{_s(len(added))}: {names} (version {version}).",
            structured=_many(added, version),
        )

    @mcpkit.tool(server, name="addMultipleEdges", annotations=WRITE)
    async def add_multiple_edges(
        edges: Annotated[list[EdgeSpec], Field(min_length=1, description="Edges to add.")],
    ) -> Annotated[CallToolResult, ManyResult]:
        """Add many edges at once, as one version (all or none); every node must exist."""
        added, version = await backend().add_edges([spec.to_input() for spec in edges])
        return mcpkit.tool_result(
            f"Added {len(added)} edge{_s(len(added))} (version {version}).",
            structured=_many(added, version),
        )

    @mcpkit.tool(server, name="importFromJSON", annotations=WRITE)
    async def import_from_json(
        graph: Annotated[
            dict[str, Any] | str,
            Field(
                description="A graph {nodes: [{id, name, category?}], links: [{source, target, "
                "label, evidence?}]}, or text in `format`."
            ),
        ],
        format: Annotated[
            str,
            Field(
                description="Format of a text graph: json, trapi, kgx-jsonl, kgx-tsv, cytoscape, "
                "graphml, jsonld or ntriples."
            ),
        ] = "json",
    ) -> Annotated[CallToolResult, ImportResult]:
        """Merge a whole graph (or a tool result) into this one, as one version: nodes with the
        same id are merged, links with the same source, target and label have their evidence
        unioned."""
        report, version = await backend().import_graph(graph, format)
        return mcpkit.tool_result(
            f"Imported {report.nodes_added} new node{_s(report.nodes_added)} "
            f"({report.nodes_merged} merged into existing ones) and {report.edges_added} new "
            f"edge{_s(report.edges_added)} ({report.edges_merged} merged) (version {version}).",
            structured=ImportResult(report=report, version=version),
        )

    @mcpkit.tool(server, name="bulkRemoveNodes", annotations=DESTRUCTIVE)
    async def bulk_remove_nodes(
        nodeIds: Annotated[list[str], Field(min_length=1, description="Ids of nodes to remove.")],
        preview: Annotated[bool, Field(description="Only report what would go.")] = False,
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove many nodes and their edges at once, as one version (or preview it)."""
        removal, version = await backend().remove_nodes(
            _build(NodeSelection, ids=nodeIds), preview=preview
        )
        return _removal_result(removal, version)

    @mcpkit.tool(server, name="bulkRemoveEdges", annotations=DESTRUCTIVE)
    async def bulk_remove_edges(
        edgeIds: Annotated[list[str], Field(min_length=1, description="Ids of edges to remove.")],
        preview: Annotated[bool, Field(description="Only report what would go.")] = False,
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove many edges at once, as one version (or preview it)."""
        removal, version = await backend().remove_edges(edgeIds, preview=preview)
        return _removal_result(removal, version)

    @mcpkit.tool(server, name="removeNodesByDegree", annotations=DESTRUCTIVE)
    async def remove_nodes_by_degree(
        minDegree: Annotated[
            int | None, Field(ge=0, description="Remove nodes with at least this many edges.")
        ] = None,
        maxDegree: Annotated[
            int | None, Field(ge=0, description="Remove nodes with at most this many edges.")
        ] = None,
        degree: Annotated[
            int | None,
            Field(ge=0, description="Remove nodes with exactly this many edges (0: isolated)."),
        ] = None,
        type: Annotated[str | None, Field(description="Only nodes of this type.")] = None,
        preview: Annotated[bool, Field(description="Only report what would go.")] = False,
    ) -> Annotated[CallToolResult, RemovalResult]:
        """Remove nodes by how many edges they have, e.g. degree=0 to drop isolated nodes.
        Use preview=true first to see what would go."""
        selection = _build(
            NodeSelection, min_degree=minDegree, max_degree=maxDegree, degree=degree, type=type
        )
        removal, version = await backend().remove_nodes(selection, preview=preview)
        return _removal_result(removal, version)

    @mcpkit.tool(server, name="removeNodesByType", annotations=DESTRUCTIVE)
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
        selection = _build(NodeSelection, types=types, exclude_types=excludeTypes)
        removal, version = await backend().remove_nodes(selection, preview=preview)
        return _removal_result(removal, version)

    @mcpkit.tool(server, name="mergeNodes", annotations=DESTRUCTIVE)
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
            f"Merged {', '.join(repr(i) for i in removeIds)} into {_quoted(node)} "
            f"('{node.id}'); their edges now point to it (version {version}).",
            structured=NodeResult(node=node, version=version),
        )

    # -- history ------------------------------------------------------------------------------

    @mcpkit.tool(server, name="undo", annotations=DESTRUCTIVE)
    async def undo() -> Annotated[CallToolResult, ChangeResult]:
        """Undo the latest change still in effect (itself recorded as a new version)."""
        change, version = await backend().undo()
        return _change_result("Undid", change, version)

    @mcpkit.tool(server, name="redo", annotations=DESTRUCTIVE)
    async def redo() -> Annotated[CallToolResult, ChangeResult]:
        """Redo the change undone last (only right after undo; a new edit drops the redo)."""
        change, version = await backend().redo()
        return _change_result("Redid", change, version)

    @mcpkit.tool(server, name="getHistory", annotations=READ)
    async def get_history(
        offset: Annotated[int, Field(ge=0, description="Skip this many newest changes.")] = 0,
        limit: Annotated[int, Field(ge=1, le=200, description="How many changes.")] = 20,
    ) -> Annotated[CallToolResult, HistoryPage]:
        """The graph's change log, newest first: version, command, who, when, what."""
        page = await backend().history(offset, limit)
        lines = [_history_line(item) for item in page.items]
        text = f"The graph is at version {page.version}; {page.total} change{_s(page.total)}."
        return mcpkit.tool_result("\n".join([text, *lines]), structured=page)

    @mcpkit.tool(server, name="revertToVersion", annotations=DESTRUCTIVE_IDEMPOTENT)
    async def revert_to_version(
        version: Annotated[int, Field(ge=0, description="The version to go back to.")],
    ) -> Annotated[CallToolResult, ChangeResult]:
        """Make the graph what it was at an earlier version, as one new version (undoable)."""
        change, new_version = await backend().revert(version)
        return mcpkit.tool_result(
            f"Reverted the graph to version {version}; it is now at version {new_version}.",
            structured=ChangeResult(change=change, version=new_version),
        )

    # -- analysis -----------------------------------------------------------------------------

    @mcpkit.tool(server, name="analyzeStructure", annotations=READ)
    async def analyze_structure() -> Annotated[CallToolResult, StructureResult]:
        """Graph metrics: size, density, connected components, diameter of the largest
        component (approximate on large graphs, and then marked so) and the degree spread."""
        rows = await backend().rows()
        found = await _in_thread(analysis.structure, rows.nodes, rows.edges)
        return mcpkit.tool_result(_structure_text(found), structured=found)

    @mcpkit.tool(server, name="findCentrality", annotations=READ)
    async def find_centrality(
        measure: Annotated[
            Literal["degree", "betweenness", "pagerank"],
            Field(description="degree (hubs), betweenness (bridges) or pagerank (influence)."),
        ] = "degree",
        top: Annotated[int, Field(ge=1, le=100, description="How many nodes to list.")] = 10,
    ) -> Annotated[CallToolResult, CentralityResult]:
        """The most central nodes by degree, betweenness (sampled on large graphs, and then
        marked approximate) or PageRank."""
        rows = await backend().rows()
        found = await _in_thread(
            analysis.centrality, rows.nodes, rows.edges, measure=measure, top=top
        )
        approx = " (approximate: sampled)" if found["approximate"] else ""
        lines = [f"- {_node_line(n)}: {n['score']}" for n in found["top"]]
        text = f"Top {len(lines)} nodes by {measure}{approx}:"
        return mcpkit.tool_result("\n".join([text, *lines]), structured=found)

    @mcpkit.tool(server, name="detectCommunities", annotations=READ)
    async def detect_communities(
        resolution: Annotated[
            float, Field(gt=0, le=10, description="Above 1: more, smaller communities.")
        ] = 1.0,
        seed: Annotated[
            int, Field(description="Random seed; the same seed gives the same answer.")
        ] = 0,
    ) -> Annotated[CallToolResult, CommunitiesResult]:
        """Group nodes into communities (Louvain), largest first, each with its node types and
        best-connected members."""
        rows = await backend().rows()
        found = await _in_thread(
            analysis.communities, rows.nodes, rows.edges, resolution=resolution, seed=seed
        )
        lines = [
            f"- community {c['index'] + 1}: {c['size']} nodes ("
            + ", ".join(f"{t} {n}" for t, n in c["types"].items())
            + "); e.g. "
            + ", ".join(m["label"] or m["id"] for m in c["members"][:5])
            for c in found["communities"][:20]
        ]
        modularity = found["modularity"]
        quality = f", modularity {modularity}" if modularity is not None else ", no edges"
        text = (
            f"{found['count']} communit{'y' if found['count'] == 1 else 'ies'} (Louvain{quality}):"
        )
        return mcpkit.tool_result("\n".join([text, *lines]), structured=found)

    @mcpkit.tool(server, name="applyLayout", annotations=WRITE_IDEMPOTENT)
    async def apply_layout(
        layout: Annotated[
            Literal["force", "hierarchical", "circular"],
            Field(
                description="force (related nodes close together), hierarchical (layers along "
                "edge direction) or circular."
            ),
        ] = "force",
    ) -> Annotated[CallToolResult, LayoutResult]:
        """Compute node positions and save them as one new version (undo restores the old ones)."""
        graph = backend()
        rows = await graph.rows()
        if not rows.nodes:
            raise InvalidInput("The graph has no nodes to lay out")
        positions = await _in_thread(analysis.layout, rows.nodes, rows.edges, kind=layout)
        operations = [
            UpdateNodeOp(op="updateNode", id=node_id, patch=NodePatch(position=Position(**xy)))
            for node_id, xy in positions.items()
        ]
        _, version = await graph.batch(operations)
        return mcpkit.tool_result(
            f"Applied the {layout} layout to {len(positions)} nodes (version {version}).",
            structured=LayoutResult(layout=layout, nodeCount=len(positions), version=version),
        )

    return server


async def _overview(graph: GraphBackend, *, with_top_nodes: bool) -> summary.Overview:
    """Counts and types from the service; top nodes by degree only where the graph is small
    enough to read whole (the service has no degree ranking yet)."""
    info = await graph.summary()
    if info is None:
        return summary.Overview(node_count=0, edge_count=0, version=0, top_nodes=[])
    top_nodes = None
    if with_top_nodes and info.node_count <= TOP_NODES_MAX_GRAPH:
        rows = await graph.rows()
        top_nodes = summary.top_by_degree(rows.nodes, rows.edges, TOP_NODES)
    return summary.Overview(
        node_count=info.node_count,
        edge_count=info.edge_count,
        version=info.version,
        node_types=info.node_types,
        edge_labels=info.edge_labels,
        top_nodes=top_nodes,
    )


def _canonical(nodes: Sequence[Mapping[str, Any]], node_id: str) -> str:
    """The stored id for `node_id`, allowing a CURIE prefix in another case (ncbigene:7157)."""
    wanted = node_id.strip()
    if any(node["id"] == wanted for node in nodes):
        return wanted
    folded = wanted.casefold()
    return next((node["id"] for node in nodes if node["id"].casefold() == folded), wanted)


def _build(model: type[M], **fields: Any) -> M:
    """`model` from the fields that were given; a rule it breaks becomes a tool error."""
    try:
        return model(**{name: value for name, value in fields.items() if value is not None})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidInput(problems) from None


def _node_line(node: Mapping[str, Any]) -> str:
    return f"{node.get('label') or node['id']} [{node['id']}] ({node.get('type') or 'other'})"


def _history_line(item: ChangesetSummary) -> str:
    state = f", {item.undo_state}" if item.undo_state and item.undo_state != "applied" else ""
    target = f" of version {item.target_version}" if item.target_version else ""
    details = ", ".join(
        f"{k} {v}" for k, v in item.summary.items() if not isinstance(v, dict | list)
    )
    details = f": {details}" if details else ""
    return (
        f"- v{item.version} {item.command}{target}{state} by {item.actor} at "
        f"{item.created_at:%Y-%m-%d %H:%M:%S}{details}"
    )


def _structure_text(found: Mapping[str, Any]) -> str:
    components = found["components"]
    diameter = found["diameter"]
    approx = " (approximate, a lower bound)" if diameter.get("approximate") else ""
    degree = found["degree"]
    return (
        f"{found['nodeCount']} nodes, {found['edgeCount']} edges, density {found['density']}.\n"
        f"{components['count']} connected component{_s(components['count'])}; the largest has "
        f"{components['largestSize']} node{_s(components['largestSize'])} and diameter "
        f"{diameter['value']}{approx}. "
        f"{components['isolatedNodes']} isolated node{_s(components['isolatedNodes'])}.\n"
        f"Degree: min {degree['min']}, median {degree['median']}, mean {degree['mean']}, "
        f"max {degree['max']}."
    )


def _s(count: int) -> str:
    return "" if count == 1 else "s"
