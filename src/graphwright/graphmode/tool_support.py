"""What every graph tool module shares: the call's `databaseContext`, the argument and result
models, and the wording of answers."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request

from graphwright import mcpkit
from graphwright.core.words import plural
from graphwright.errors import InvalidInput, problems
from graphwright.graphmode import summary
from graphwright.graphmode.backend_resolver import BackendResolver, DatabaseContext, HttpCaller
from graphwright.graphmode.client import GraphBackend
from graphwright.graphmode.schemas import (
    ChangesetSummary,
    Edge,
    EdgeInput,
    ImportReport,
    Node,
    NodeInput,
    Position,
    Removal,
)

M = TypeVar("M", bound=BaseModel)

DATABASE_CONTEXT = "databaseContext"
LISTED_IDS = 100  # ids listed in a structured result before it says "truncated"
NEIGHBORHOOD_NODES = 5_000
TOP_NODES = 10
TOP_NODES_MAX_GRAPH = 5_000  # nodes; above, reading the whole graph per summary costs seconds

ABSENT = object()

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
class CallOrigin:
    database_context: Any  # the raw `databaseContext` argument, or ABSENT
    caller: HttpCaller | None  # set when the call came over streamable HTTP


call_origin: ContextVar[CallOrigin | None] = ContextVar("graph_call_origin", default=None)


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
    raw = arguments.get(DATABASE_CONTEXT, ABSENT) if isinstance(arguments, Mapping) else ABSENT
    if raw is not ABSENT:
        rest = {key: value for key, value in arguments.items() if key != DATABASE_CONTEXT}
        ctx = dataclasses.replace(ctx, params={**params, "arguments": rest})
    token = call_origin.set(CallOrigin(raw, caller))
    try:
        return await call_next(ctx)
    finally:
        call_origin.reset(token)


def resolve_backend(resolver: BackendResolver, conversation: str | None = None) -> GraphBackend:
    """This call's backend; `conversation` (a resource's) replaces any databaseContext."""
    origin = call_origin.get() or CallOrigin(ABSENT, None)
    context = None
    if conversation is not None:
        context = DatabaseContext(conversation)
    elif origin.database_context is not ABSENT:
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
    count: int = Field(description="Communities in the whole graph.")
    modularity: float | None
    offset: int = Field(description="Index of this page's first community.")
    communities: list[dict[str, Any]]
    nextCursor: str | None = Field(description="Pass to detectCommunities for the next page.")


class LayoutResult(BaseModel):
    layout: str
    nodeCount: int
    version: int


# --- wording ---------------------------------------------------------------------------------


def quoted(node: Node | NodeBrief) -> str:
    return f"'{node.label or node.id}'"


def first_ids(values: Sequence[str]) -> list[str]:
    return list(values[:LISTED_IDS])


def removal_summary(removal: Removal, version: int) -> RemovalResult:
    return RemovalResult(
        preview=removal.preview,
        nodeCount=removal.node_count,
        edgeCount=removal.edge_count,
        nodeIds=first_ids(removal.node_ids),
        edgeIds=first_ids(removal.edge_ids),
        truncated=max(len(removal.node_ids), len(removal.edge_ids)) > LISTED_IDS,
        version=version,
    )


def removal_result(removal: Removal, version: int) -> CallToolResult:
    """The answer of a bulk removal (or its preview): what went, listed and counted."""
    listed = ", ".join(removal.node_ids[:20]) + (" ..." if removal.node_count > 20 else "")
    nodes = f"{removal.node_count} node{plural(removal.node_count)}"
    edges = f"{removal.edge_count} edge{plural(removal.edge_count)}"
    what = f"{nodes} ({listed}) and {edges}" if removal.node_count else edges
    if removal.preview:
        text = f"Preview: this would remove {what}. Nothing was changed (version {version})."
    else:
        text = f"Removed {what} (version {version})."
    return mcpkit.tool_result(text, structured=removal_summary(removal, version))


def many_result(items: Sequence[Node | Edge], version: int) -> ManyResult:
    return ManyResult(
        count=len(items),
        version=version,
        ids=[item.id for item in items[:LISTED_IDS]],
        truncated=len(items) > LISTED_IDS,
    )


def change_result(verb: str, change: ChangesetSummary, version: int) -> CallToolResult:
    """The answer of undo or redo: which version it stepped over, and the new one."""
    return mcpkit.tool_result(
        f"{verb} version {change.target_version}; the graph is now at version {version}.",
        structured=ChangeResult(change=change, version=version),
    )


async def in_thread(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """CPU-bound analysis off the event loop, so other sessions keep being served."""
    return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs))


async def graph_overview(graph: GraphBackend, *, with_top_nodes: bool) -> summary.Overview:
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


def canonical(nodes: Sequence[Mapping[str, Any]], node_id: str) -> str:
    """The stored id for `node_id`, allowing a CURIE prefix in another case (ncbigene:7157)."""
    wanted = node_id.strip()
    if any(node["id"] == wanted for node in nodes):
        return wanted
    folded = wanted.casefold()
    return next((node["id"] for node in nodes if node["id"].casefold() == folded), wanted)


def build(model: type[M], **fields: Any) -> M:
    """`model` from the fields that were given; a rule it breaks becomes a tool error."""
    try:
        return model(**{name: value for name, value in fields.items() if value is not None})
    except ValidationError as exc:
        raise InvalidInput("; ".join(problems(exc.errors(), whole="arguments"))) from None


def node_line(node: Mapping[str, Any]) -> str:
    return f"{node.get('label') or node['id']} [{node['id']}] ({node.get('type') or 'other'})"


def history_line(item: ChangesetSummary) -> str:
    state = f" ({item.undo_state})" if item.undo_state and item.undo_state != "applied" else ""
    return (
        f"- v{item.version} {item.description}{state}, by {item.actor} at "
        f"{item.created_at:%Y-%m-%d %H:%M:%S}"
    )


def structure_text(found: Mapping[str, Any]) -> str:
    components = found["components"]
    diameter = found["diameter"]
    approx = " (approximate, a lower bound)" if diameter.get("approximate") else ""
    degree = found["degree"]
    return (
        f"{found['nodeCount']} nodes, {found['edgeCount']} edges, density {found['density']}.\n"
        f"{components['count']} connected component{plural(components['count'])}; the largest has "
        f"{components['largestSize']} node{plural(components['largestSize'])} and diameter "
        f"{diameter['value']}{approx}. "
        f"{components['isolatedNodes']} isolated node{plural(components['isolatedNodes'])}.\n"
        f"Degree: min {degree['min']}, median {degree['median']}, mean {degree['mean']}, "
        f"max {degree['max']}."
    )
