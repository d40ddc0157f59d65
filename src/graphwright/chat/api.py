"""Chat API: `POST /api/chat` (SSE events, or one JSON response) and `/api/conversations`.

The router's lifespan builds the ChatService from the app's settings and services, starts the MCP
servers ahead when the app asks for it (`create_app(warm_start=True)`), and stops them with the
app.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from sse_starlette.sse import EventSourceResponse

from graphwright.a2a.client import remote_agents
from graphwright.auth.api import conversation_principal, current_principal
from graphwright.auth.models import Principal
from graphwright.auth.service import AuthService
from graphwright.chat.config import load_a2a_agents, load_mcp_servers
from graphwright.chat.mcp_manager import McpManager
from graphwright.chat.models import ChatRequest, ConversationCreate, ConversationPatch
from graphwright.chat.running import RunningTurn
from graphwright.chat.service import ChatService
from graphwright.envelope import ok
from graphwright.knowledge.tools import KnowledgeReader
from graphwright.llm import NO_MODEL
from graphwright.settings import Settings


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    state = app.state
    settings: Settings = state.settings
    knowledge_reader = KnowledgeReader.for_app(
        state.knowledge_service, state.auth_service, settings.api_base_url
    )
    service = ChatService(
        db=state.database,
        manager=McpManager(
            load_mcp_servers(settings, own_env=knowledge_reader.own_env),
            remote_agents(load_a2a_agents(settings)),
        ),
        model=state.model_setup.model,
        model_notice=state.model_setup.notice or NO_MODEL,
        artifacts=state.artifact_service,
        graphs=state.graph_service,
        auth=state.auth_service,
        api_base_url=settings.api_base_url,
    )
    state.chat_service = service
    if state.warm_start:
        service.start_servers()
    try:
        yield
    finally:
        await service.aclose()
        knowledge_reader.revoke()


router = APIRouter(tags=["chat"], lifespan=lifespan)


async def get_chat_service(request: Request) -> ChatService:
    return request.app.state.chat_service


Service = Annotated[ChatService, Depends(get_chat_service)]
Caller = Annotated[Principal, Depends(current_principal)]
ConversationCaller = Annotated[Principal, Depends(conversation_principal)]


@router.post(
    "/api/chat",
    summary="Run one turn; an SSE stream of events, or one JSON response with stream=false",
    response_model=None,
)
async def chat(
    body: ChatRequest,
    service: Service,
    caller: Caller,
    stream: Annotated[bool | None, Query(description="Overrides the body's `stream`")] = None,
) -> Response:
    # A token scoped to one conversation chats in that conversation.
    conversation_id = body.conversation_id or caller.conversation_id
    if conversation_id is not None:
        AuthService.authorize(caller, conversation_id)
    request = body.model_copy(update={"conversation_id": conversation_id})
    handle = await service.start_turn(request, actor=caller.actor)
    if not (body.stream if stream is None else stream):
        return ok(await handle.response())
    return EventSourceResponse(_sse(handle))


async def _sse(handle: RunningTurn) -> AsyncIterator[dict[str, Any]]:
    async for event in handle.events():
        yield {"event": event.type, "data": orjson.dumps(event.data).decode()}


@router.get("/api/conversations", summary="Conversations, the most recently active first")
def list_conversations(
    service: Service,
    caller: Caller,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
    q: Annotated[str | None, Query(max_length=200, description="Title or id contains")] = None,
) -> Response:
    only = caller.conversation_id
    return ok(service.list_conversations(limit=limit, offset=offset, only=only, text=q))


@router.post("/api/conversations", status_code=201, summary="Create an empty conversation")
def create_conversation(body: ConversationCreate, service: Service, caller: Caller) -> Response:
    if caller.conversation_id is not None:
        AuthService.authorize(caller, body.id or "")
    return ok(service.create_conversation(body, actor=caller.actor), status_code=201)


@router.delete(
    "/api/conversations/{conversation_id}",
    summary="Delete a conversation with its messages, artifacts and graph",
)
def delete_conversation(conversation_id: str, service: Service, _: ConversationCaller) -> Response:
    service.delete_conversation(conversation_id)
    return ok({"deleted": conversation_id})


@router.get(
    "/api/conversations/{conversation_id}",
    summary="A conversation with its messages, tool calls, artifacts and their versions",
)
def get_conversation(conversation_id: str, service: Service, _: ConversationCaller) -> Response:
    return ok(service.get_conversation(conversation_id))


@router.post(
    "/api/conversations/{conversation_id}/cancel",
    summary="Stop the conversation's running turn; it is stored as cancelled",
)
async def cancel(conversation_id: str, service: Service, _: ConversationCaller) -> Response:
    return ok({"cancelled": await service.cancel(conversation_id)})


@router.patch(
    "/api/conversations/{conversation_id}",
    summary="Rename a conversation or switch its mode (entering Graph Mode seeds the graph)",
)
def update_conversation(
    conversation_id: str, patch: ConversationPatch, service: Service, caller: ConversationCaller
) -> Response:
    return ok(service.update_conversation(conversation_id, patch, actor=caller.actor))
