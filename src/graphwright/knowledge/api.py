"""REST API of the knowledge base, `/api/knowledge/...`: assets, metadata, a read-only SPARQL 1.1
Protocol endpoint, and publication requests. Parse, call KnowledgeService, format."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from graphwright.auth.api import Caller, conversation_principal
from graphwright.auth.models import Principal
from graphwright.auth.service import person
from graphwright.envelope import Limit, Offset, failure, ok
from graphwright.graphmode.service import GraphService
from graphwright.knowledge.schemas import (
    ApproveInput,
    GraphPublishInput,
    PublishInput,
    QueryInput,
    RejectInput,
    RequestPage,
)
from graphwright.knowledge.service import KnowledgeService, decider
from graphwright.knowledge.sparql import NotAcceptable, negotiate, serialize_answer

router = APIRouter(prefix="/api/knowledge", tags=["knowledge"])


async def get_knowledge_service(request: Request) -> KnowledgeService:
    return request.app.state.knowledge_service


Service = Annotated[KnowledgeService, Depends(get_knowledge_service)]


# -- assets ----------------------------------------------------------------------------------


@router.get("/assets", summary="List knowledge collections, newest first; search their text")
async def list_assets(
    service: Service,
    _caller: Caller,
    search: Annotated[str | None, Query(max_length=200)] = None,
    offset: Offset = 0,
    limit: Limit = 50,
) -> Response:
    return ok(await service.collections(search=search, offset=offset, limit=limit))


@router.get(
    "/assets/{ual:path}",
    summary="A collection or asset by UAL, as JSON-LD (in the envelope) or N-Quads",
    response_model=None,
)
async def get_asset(
    ual: str,
    service: Service,
    caller: Caller,
    format: Literal["jsonld", "nquads"] = "jsonld",
    include_private: Annotated[bool, Query(alias="includePrivate")] = False,
) -> Response:
    private_for = caller if include_private else None
    if format == "nquads":
        content = await service.get_asset(ual, private_for=private_for)
        body = "\n".join(content.public + content.private) + "\n"
        return Response(body, media_type="application/n-quads")
    return ok(await service.get_jsonld(ual, private_for=private_for))


@router.get("/metadata/{ual:path}", summary="Publisher, time, transaction, block, later states")
async def get_metadata(ual: str, service: Service, _caller: Caller) -> Response:
    return ok(await service.metadata(ual))


# -- SPARQL 1.1 Protocol (read-only) ---------------------------------------------------------


@router.get(
    "/sparql",
    summary="SPARQL 1.1 Protocol query (read-only): JSON, XML, CSV or TSV by Accept",
    response_model=None,
)
async def sparql_get(
    service: Service,
    _caller: Caller,
    query: Annotated[str, Query(max_length=100_000)],
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    return await _sparql(service, query, accept)


@router.post(
    "/sparql",
    summary="SPARQL 1.1 Protocol query by POST: a form field `query`, or the query as body",
    response_model=None,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/x-www-form-urlencoded": {
                    "schema": {"type": "object", "properties": {"query": {"type": "string"}}}
                },
                "application/sparql-query": {"schema": {"type": "string"}},
            },
        }
    },
)
async def sparql_post(
    request: Request,
    service: Service,
    _caller: Caller,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "application/sparql-query":
        query = (await request.body()).decode("utf-8", errors="replace")
    elif content_type == "application/x-www-form-urlencoded":
        query = str((await request.form()).get("query") or "")
    else:
        return failure(
            415,
            "unsupported_media_type",
            "Send the query as application/sparql-query, or as the form field 'query'",
        )
    return await _sparql(service, query, accept)


async def _sparql(service: KnowledgeService, query: str, accept: str | None) -> Response:
    # A query the parser refuses answers 400 (invalid_query, query_not_allowed), one past its
    # time limit 422 (query_timeout), as the envelope maps every error.
    answer = await service.query(query)
    try:
        media_type = negotiate(accept, answer.form)
    except NotAcceptable as exc:
        return failure(406, "not_acceptable", str(exc))
    headers = {"X-Truncated": "true"} if answer.truncated else None
    return Response(serialize_answer(answer, media_type), media_type=media_type, headers=headers)


@router.post("/query", summary="A read-only SPARQL query, answered as one JSON document")
async def query(body: QueryInput, service: Service, _caller: Caller) -> Response:
    return ok(await service.query(body.query, limit=body.limit))


@router.get(
    "/export",
    summary="Every quad of the knowledge base (public graphs and metadata), N-Quads or TriG",
    response_model=None,
)
async def export(
    service: Service, _caller: Caller, format: Literal["nquads", "trig"] = "nquads"
) -> Response:
    media_type = "application/n-quads" if format == "nquads" else "application/trig"
    return Response(await service.export(format), media_type=media_type)


@router.delete(
    "/sample-data",
    summary="Remove the bundled sample data (its collections); the user's own assets stay",
)
async def remove_sample_data(service: Service, caller: Caller) -> Response:
    actor = person(caller, "Removing the sample data")
    return ok(await service.remove_sample_data(actor=actor))


# -- publication requests --------------------------------------------------------------------


@router.post("/requests", status_code=201, summary="Ask to publish JSON-LD; a person approves")
async def create_request(body: PublishInput, service: Service, caller: Caller) -> Response:
    request = await service.file_request(
        body.content,
        requested_by=caller.actor,
        title=body.title,
        revision_of=body.revision_of,
        source="api",
        conversation_id=caller.conversation_id,
    )
    return ok(request, status_code=201)


@router.get("/requests", summary="Publication requests, newest first")
def list_requests(
    service: Service,
    caller: Caller,
    status: Literal[
        "pending", "publishing", "published", "rejected", "failed", "removing", "removed"
    ]
    | None = None,
    offset: Offset = 0,
    limit: Limit = 50,
) -> Response:
    requests, total = service.requests_for(caller, status=status, offset=offset, limit=limit)
    return ok(RequestPage(requests=requests, total=total))


@router.get("/requests/{request_id}", summary="One publication request")
def get_request(request_id: str, service: Service, caller: Caller) -> Response:
    return ok(service.request_for(caller, request_id))


@router.post("/requests/{request_id}/approve", summary="Approve: publish (optionally edited)")
async def approve_request(
    request_id: str,
    service: Service,
    caller: Caller,
    body: ApproveInput | None = None,
) -> Response:
    approver = decider(caller)
    content = body.content if body else None
    return ok(await service.approve(request_id, approver=approver, content=content))


@router.post("/requests/{request_id}/reject", summary="Reject, with a reason; nothing publishes")
def reject_request(
    request_id: str, body: RejectInput, service: Service, caller: Caller
) -> Response:
    return ok(service.reject(request_id, by=decider(caller), reason=body.reason))


@router.post(
    "/requests/from-graph/{conversation_id}",
    status_code=201,
    summary="Ask to publish a conversation's graph, or chosen nodes, as knowledge assets",
)
async def request_graph(
    conversation_id: str,
    service: Service,
    request: Request,
    caller: Annotated[Principal, Depends(conversation_principal)],
    body: GraphPublishInput | None = None,
) -> Response:
    graphs: GraphService = request.app.state.graph_service
    graph = await run_in_threadpool(graphs.to_graph, conversation_id)
    body = body or GraphPublishInput()
    created = await run_in_threadpool(
        lambda: service.request_graph_publication(
            conversation_id,
            graph,
            requested_by=caller.actor,
            node_ids=body.node_ids,
            title=body.title,
        )
    )
    return ok(created, status_code=201)
