"""REST API of Graph Mode: `/api/graph/{conversationId}/...`. Parse, call GraphService, format."""

from __future__ import annotations

import re
from typing import Annotated, Literal

import orjson
from fastapi import APIRouter, Depends, Header, HTTPException, Path, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from sse_starlette.sse import EventSourceResponse

from graphwright.auth.api import (
    bearer_token,
    conversation_principal,
    current_principal,
    get_auth_service,
)
from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService
from graphwright.envelope import ok
from graphwright.errors import InvalidInput, Unauthorized
from graphwright.graphmode.events import GraphEvents
from graphwright.graphmode.limits import INT64_MAX, MAX_VERSION
from graphwright.graphmode.schemas import (
    BatchRequest,
    BulkEdgeRemoval,
    BulkEdges,
    BulkEdgeUpdates,
    BulkNodeRemoval,
    BulkNodes,
    EdgeInput,
    EdgePatch,
    ImportRequest,
    MergeNodesRequest,
    NodeInput,
    NodePatch,
)
from graphwright.graphmode.service import GraphService

router = APIRouter(prefix="/api/graph/{conversation_id}", tags=["graph"])
listing_router = APIRouter(tags=["graph"])

EXPORT_MEDIA_TYPES = {
    "json": "application/vnd.knowledge-graph+json",
    "trapi": "application/json",
    "cytoscape": "application/json",
    "cx2": "application/json",
    "jsonld": "application/ld+json",
    "kgx-jsonl": "application/x-ndjson",
    "kgx-tsv": "application/x-tar",  # nodes.tsv and edges.tsv in one archive
    "graphml": "application/xml",
    "ntriples": "application/n-triples",
}
ExportFormat = Literal[
    "json", "trapi", "cytoscape", "cx2", "jsonld", "kgx-jsonl", "kgx-tsv", "graphml", "ntriples"
]
# If-Match: `*`, or a version as an entity tag (`"7"`, `W/"7"`) or bare. Parsed with it, and told
# to clients as the header's pattern in the OpenAPI document.
IF_MATCH = re.compile(r'^\s*(?:\*|(?:W/)?"?([0-9]+)"?)\s*$')


async def get_graph_service(request: Request) -> GraphService:
    return request.app.state.graph_service


async def get_graph_events(request: Request) -> GraphEvents:
    return request.app.state.graph_events


async def expected_version(
    if_match: Annotated[
        str | None,
        Header(
            description='The version the graph must be at, e.g. "7", or `*` for any',
            json_schema_extra={"pattern": IF_MATCH.pattern},  # told, not enforced: see below
        ),
    ] = None,
    expected: Annotated[int | None, Query(alias="expectedVersion", ge=0, le=INT64_MAX)] = None,
) -> int | None:
    """The version a write expects the graph to be at: `expectedVersion` or `If-Match`."""
    if if_match is None:
        return expected
    match = IF_MATCH.match(if_match)
    if match is None:
        # RFC 9110 13.1.1: an If-Match that is no entity-tag is a malformed request (400); 412
        # is for a well-formed one that fails, which graphwright answers 409 with the version.
        raise HTTPException(
            400, f'The If-Match header must be a graph version such as "7" or *, not {if_match!r}'
        )
    version = match.group(1)
    return expected if version is None else int(version)  # `*`: any current version will do


def _split(values: list[str] | None, name: str) -> list[str] | None:
    """Query lists given as repeated parameters, comma-separated, or both; one given with nothing
    in it (`?ids=`) is refused, where it would filter by nothing and answer an empty graph."""
    if values is None:
        return None
    parts = [part for value in values for part in value.split(",") if part]
    if not parts:
        raise InvalidInput(
            f"The query parameter '{name}' names nothing: give at least one value, or leave it out"
        )
    return parts


Service = Annotated[GraphService, Depends(get_graph_service)]
Caller = Annotated[Principal, Depends(conversation_principal)]
Expected = Annotated[int | None, Depends(expected_version)]
VersionPath = Annotated[int, Path(ge=0, le=MAX_VERSION, description="A graph version")]


@router.get("/state", summary="Nodes and edges, filtered and paged")
def get_state(
    conversation_id: str,
    service: Service,
    _caller: Caller,
    node_types: Annotated[list[str] | None, Query(alias="nodeTypes")] = None,
    edge_types: Annotated[list[str] | None, Query(alias="edgeTypes")] = None,
    ids: Annotated[list[str] | None, Query()] = None,
    offset: Annotated[int, Query(ge=0, le=INT64_MAX)] = 0,
    limit: Annotated[int | None, Query(ge=1, le=100_000)] = None,
) -> Response:
    state = service.state(
        conversation_id,
        node_types=_split(node_types, "nodeTypes"),
        edge_types=_split(edge_types, "edgeTypes"),
        ids=_split(ids, "ids"),
        offset=offset,
        limit=limit,
    )
    return ok(state, version=state.metadata.version)


@router.get("/summary", summary="Counts by node type and edge label")
def get_summary(conversation_id: str, service: Service, _caller: Caller) -> Response:
    summary = service.summary(conversation_id)
    return ok(summary, version=summary.version)


@router.get("/search", summary="Nodes whose label or id contains the text")
def search_nodes(
    conversation_id: str,
    service: Service,
    _caller: Caller,
    q: Annotated[str, Query(min_length=1)],
    types: Annotated[list[str] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> Response:
    return ok(service.search_nodes(conversation_id, q, types=_split(types, "types"), limit=limit))


@router.post("/nodes", status_code=201, summary="Add a node")
def add_node(
    conversation_id: str, body: NodeInput, service: Service, caller: Caller, expected: Expected
) -> Response:
    node, version = service.add_node(
        conversation_id, body, actor=caller.actor, expected_version=expected
    )
    return ok(node, version=version, status_code=201)


@router.post("/nodes/bulk", status_code=201, summary="Add many nodes")
def add_nodes(
    conversation_id: str, body: BulkNodes, service: Service, caller: Caller, expected: Expected
) -> Response:
    nodes, version = service.add_nodes(
        conversation_id, body.nodes, actor=caller.actor, expected_version=expected
    )
    return ok(nodes, version=version, status_code=201)


@router.delete("/nodes/bulk", summary="Remove nodes by ids, by type or by degree (with preview)")
def remove_nodes(
    conversation_id: str,
    body: BulkNodeRemoval,
    service: Service,
    caller: Caller,
    expected: Expected,
) -> Response:
    removal, version = service.remove_nodes(
        conversation_id,
        body,  # a BulkNodeRemoval is the NodeSelection itself, plus `preview`
        actor=caller.actor,
        preview=body.preview,
        expected_version=expected,
    )
    return ok(removal, version=version)


@router.get("/nodes/{node_id:path}", summary="One node")
def get_node(conversation_id: str, node_id: str, service: Service, _caller: Caller) -> Response:
    return ok(service.get_node(conversation_id, node_id))


@router.patch("/nodes/{node_id:path}", summary="Change some fields of a node")
def update_node(
    conversation_id: str,
    node_id: str,
    body: NodePatch,
    service: Service,
    caller: Caller,
    expected: Expected,
) -> Response:
    node, version = service.update_node(
        conversation_id, node_id, body, actor=caller.actor, expected_version=expected
    )
    return ok(node, version=version)


@router.delete("/nodes/{node_id:path}", summary="Remove a node and its edges")
def remove_node(
    conversation_id: str, node_id: str, service: Service, caller: Caller, expected: Expected
) -> Response:
    removal, version = service.remove_node(
        conversation_id, node_id, actor=caller.actor, expected_version=expected
    )
    return ok(removal, version=version, message="Node deleted successfully")


@router.get("/neighbors/{node_id:path}", summary="A node and its neighbourhood")
def get_neighbors(
    conversation_id: str,
    node_id: str,
    service: Service,
    _caller: Caller,
    depth: Annotated[int, Query(ge=1, le=5)] = 1,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 500,
) -> Response:
    state = service.neighbors(conversation_id, node_id, depth=depth, limit=limit)
    return ok(state, version=state.metadata.version)


@router.post("/edges", status_code=201, summary="Add an edge")
def add_edge(
    conversation_id: str, body: EdgeInput, service: Service, caller: Caller, expected: Expected
) -> Response:
    edge, version = service.add_edge(
        conversation_id, body, actor=caller.actor, expected_version=expected
    )
    return ok(edge, version=version, status_code=201)


@router.post("/edges/bulk", status_code=201, summary="Add many edges")
def add_edges(
    conversation_id: str, body: BulkEdges, service: Service, caller: Caller, expected: Expected
) -> Response:
    edges, version = service.add_edges(
        conversation_id, body.edges, actor=caller.actor, expected_version=expected
    )
    return ok(edges, version=version, status_code=201)


@router.patch("/edges/bulk", summary="Change many edges")
def update_edges(
    conversation_id: str,
    body: BulkEdgeUpdates,
    service: Service,
    caller: Caller,
    expected: Expected,
) -> Response:
    edges, version = service.update_edges(
        conversation_id, body.edges, actor=caller.actor, expected_version=expected
    )
    return ok(edges, version=version)


@router.delete("/edges/bulk", summary="Remove many edges (with preview)")
def remove_edges(
    conversation_id: str,
    body: BulkEdgeRemoval,
    service: Service,
    caller: Caller,
    expected: Expected,
) -> Response:
    removal, version = service.remove_edges(
        conversation_id,
        body.ids,
        actor=caller.actor,
        preview=body.preview,
        expected_version=expected,
    )
    return ok(removal, version=version)


@router.get("/edges/{edge_id:path}", summary="One edge")
def get_edge(conversation_id: str, edge_id: str, service: Service, _caller: Caller) -> Response:
    return ok(service.get_edge(conversation_id, edge_id))


@router.patch("/edges/{edge_id:path}", summary="Change some fields of an edge")
def update_edge(
    conversation_id: str,
    edge_id: str,
    body: EdgePatch,
    service: Service,
    caller: Caller,
    expected: Expected,
) -> Response:
    edge, version = service.update_edge(
        conversation_id, edge_id, body, actor=caller.actor, expected_version=expected
    )
    return ok(edge, version=version)


@router.delete("/edges/{edge_id:path}", summary="Remove an edge")
def remove_edge(
    conversation_id: str, edge_id: str, service: Service, caller: Caller, expected: Expected
) -> Response:
    removal, version = service.remove_edge(
        conversation_id, edge_id, actor=caller.actor, expected_version=expected
    )
    return ok(removal, version=version, message="Edge deleted successfully")


@router.post("/batch", summary="Mixed operations, applied atomically as one version")
def batch(
    conversation_id: str, body: BatchRequest, service: Service, caller: Caller, expected: Expected
) -> Response:
    results, version = service.batch(
        conversation_id, body.operations, actor=caller.actor, expected_version=expected
    )
    return ok(results, version=version)


@router.post(
    "/import",
    summary="Merge a graph or a tool result (any core format) into this one",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": ImportRequest.model_json_schema()}},
        }
    },
)
async def import_graph(
    conversation_id: str,
    request: Request,
    service: Service,
    caller: Caller,
    expected: Expected,
) -> Response:
    # Imports can be tens of megabytes: orjson parses them several times faster than FastAPI.
    try:
        raw = orjson.loads(await request.body())
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"The body is not valid JSON: {exc}") from None
    try:
        body = ImportRequest.model_validate(raw)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_url=False)) from None
    report, version = await run_in_threadpool(
        service.import_graph,
        conversation_id,
        body.source,
        fmt=body.format,
        actor=caller.actor,
        expected_version=expected,
    )
    return ok(report, version=version)


@router.get("/export", summary="The graph in one of the core formats")
def export_graph(
    conversation_id: str,
    service: Service,
    _caller: Caller,
    fmt: Annotated[ExportFormat, Query(alias="format")] = "json",
) -> Response:
    content = service.export(conversation_id, fmt)
    return Response(content, media_type=EXPORT_MEDIA_TYPES.get(fmt, "application/octet-stream"))


@router.post("/merge-nodes", summary="Fold duplicate nodes into one")
def merge_nodes(
    conversation_id: str,
    body: MergeNodesRequest,
    service: Service,
    caller: Caller,
    expected: Expected,
) -> Response:
    node, version = service.merge_nodes(
        conversation_id, body.keep, body.remove, actor=caller.actor, expected_version=expected
    )
    return ok(node, version=version)


@router.post("/clear", summary="Remove every node and edge (undoable)")
def clear(conversation_id: str, service: Service, caller: Caller, expected: Expected) -> Response:
    removal, version = service.clear(conversation_id, actor=caller.actor, expected_version=expected)
    return ok(removal, version=version)


@router.post("/undo", summary="Undo the newest edit still applied")
def undo(conversation_id: str, service: Service, caller: Caller, expected: Expected) -> Response:
    summary, version = service.undo(conversation_id, actor=caller.actor, expected_version=expected)
    return ok(summary, version=version)


@router.post("/redo", summary="Redo the edit undone last")
def redo(conversation_id: str, service: Service, caller: Caller, expected: Expected) -> Response:
    summary, version = service.redo(conversation_id, actor=caller.actor, expected_version=expected)
    return ok(summary, version=version)


@router.get("/history", summary="The change log, newest first")
def history(
    conversation_id: str,
    service: Service,
    _caller: Caller,
    offset: Annotated[int, Query(ge=0, le=INT64_MAX)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> Response:
    page = service.history(conversation_id, offset=offset, limit=limit)
    return ok(page, version=page.version)


@router.get("/history/{version}", summary="One changeset with its forward and inverse ops")
def changeset(
    conversation_id: str, version: VersionPath, service: Service, _caller: Caller
) -> Response:
    return ok(service.changeset(conversation_id, version))


@router.get("/versions/{version}", summary="The graph as it was at a version")
def state_at(
    conversation_id: str, version: VersionPath, service: Service, _caller: Caller
) -> Response:
    return ok(service.state_at(conversation_id, version))


@router.post("/versions/{version}/revert", summary="Make the graph what it was at a version")
def revert(
    conversation_id: str, version: VersionPath, service: Service, caller: Caller, expected: Expected
) -> Response:
    summary, new_version = service.revert(
        conversation_id, version, actor=caller.actor, expected_version=expected
    )
    return ok(summary, version=new_version)


@router.get("/diff", summary="What changed between two versions")
def diff(
    conversation_id: str,
    service: Service,
    _caller: Caller,
    from_version: Annotated[int, Query(alias="from", ge=0, le=MAX_VERSION)],
    to_version: Annotated[int, Query(alias="to", ge=0, le=MAX_VERSION)],
) -> Response:
    return ok(service.diff(conversation_id, from_version, to_version))


TOKEN_RECHECK_SECONDS = 15.0  # how long a quiet events stream goes without checking its token


@router.get("/events", summary="Server-sent change events of this graph")
async def events(
    conversation_id: str,
    service: Service,
    hub: Annotated[GraphEvents, Depends(get_graph_events)],
    auth: Annotated[AuthService, Depends(get_auth_service)],
    token: Annotated[str | None, Depends(bearer_token)],
    _caller: Caller,
) -> EventSourceResponse:
    subscription = hub.subscribe(conversation_id)
    current = await run_in_threadpool(service.version, conversation_id)

    async def stream():  # type: ignore[no-untyped-def]
        try:
            yield {"event": "ready", "data": orjson.dumps({"version": current}).decode()}
            while True:
                event = await subscription.next_within(TOKEN_RECHECK_SECONDS)
                # The stream outlives the check at opening: the token is checked again before
                # each event, and now and then while the graph is quiet.
                try:
                    await run_in_threadpool(auth.authenticate, token)
                except Unauthorized:
                    message = "The token was revoked or has expired; the stream has ended"
                    yield {"event": "error", "data": orjson.dumps({"message": message}).decode()}
                    return
                if event is None:
                    continue
                yield {
                    "event": "change",
                    "id": str(event["version"]),
                    "data": orjson.dumps(event).decode(),
                }
        finally:
            subscription.close()

    return EventSourceResponse(stream(), ping=15)


@listing_router.get("/api/graphs", summary="Every graph, also those of no conversation")
def list_graphs(
    request: Request,
    service: Service,
    caller: Annotated[Principal, Depends(current_principal)],
    offset: Annotated[int, Query(ge=0, le=INT64_MAX)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> Response:
    # A token scoped to one conversation sees that conversation's graph only.
    listing = service.list_graphs(offset=offset, limit=limit, only=caller.conversation_id)
    chat = getattr(request.app.state, "chat_service", None)
    if chat is not None:
        known = chat.existing_conversations([g.conversation_id for g in listing.items])
        for graph in listing.items:
            graph.has_conversation = graph.conversation_id in known
    return ok(listing)
