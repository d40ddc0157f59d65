"""The A2A mount: the agent card at /.well-known/agent-card.json, JSON-RPC at /a2a and the
HTTP+JSON binding under /a2a/rest.

`mount` adds a2a-sdk's routes to the app, with the request handler on a `DatabaseTaskStore` in
the app's database and the token check in front of JSON-RPC. The executor defaults to the chat
(`ChatAgentExecutor` over `app.state.chat_service`, which the chat router's lifespan builds).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from a2a.server.agent_execution import AgentExecutor, SimpleRequestContextBuilder
from a2a.server.context import ServerCallContext
from a2a.server.routes import (
    add_a2a_routes_to_fastapi,
    create_agent_card_routes,
    create_rest_routes,
)
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import CancelTaskRequest
from fastapi import APIRouter, FastAPI
from starlette.routing import Mount, Route

from graphwright.a2a.auth import CallContextBuilder
from graphwright.a2a.card import CACHE_CONTROL, REST_PATH, RPC_PATH, agent_card
from graphwright.a2a.doors import rest_routes, rpc_door
from graphwright.a2a.executor import ChatAgentExecutor
from graphwright.a2a.handler import GraphwrightRequestHandler
from graphwright.a2a.tasks import GraphwrightTaskStore, async_engine
from graphwright.settings import Settings

# a2a-sdk logs a malformed JSON-RPC request with its traceback; the client gets the error, and
# the server's log needs one line, not a traceback for every bad request a client sends.
CLIENT_ERRORS = frozenset(
    {"Failed to validate base JSON-RPC request", "Failed to parse request params"}
)


class ClientErrorsInOneLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg in CLIENT_ERRORS and record.exc_info:
            record.msg = f"{record.msg}: {record.exc_info[1]}"
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


logging.getLogger(JsonRpcDispatcher.__module__).addFilter(ClientErrorsInOneLine())


def mount(app: FastAPI, *, executor: AgentExecutor | None = None, auth: bool = True) -> None:
    """Serve A2A from `app` (its `state.settings` and `state.database`; `state.auth_service`
    unless `auth` is off, which only protocol tests do)."""
    settings: Settings = app.state.settings
    card = agent_card(settings.api_base_url)
    engine = async_engine(app.state.database.url)
    store = GraphwrightTaskStore(engine)
    executor = executor or ChatAgentExecutor(lambda: app.state.chat_service, store)
    handler = GraphwrightRequestHandler(
        agent_executor=executor,
        task_store=store,
        agent_card=card,
        request_context_builder=SimpleRequestContextBuilder(task_id_generator=store),
    )
    guard = app.state.auth_service if auth else None
    dispatcher = JsonRpcDispatcher(handler, context_builder=CallContextBuilder())
    endpoint = rpc_door(dispatcher.handle_requests, guard)
    add_a2a_routes_to_fastapi(
        app,
        agent_card_routes=create_agent_card_routes(card, cache_control=CACHE_CONTROL),
        jsonrpc_routes=[Route(RPC_PATH, endpoint=endpoint, methods=["POST"])],
    )
    # Also at `/a2a/`, left out of the API document: a client that joins the card's URL and "/"
    # would get a redirect, which a POST does not follow.
    app.router.routes.append(Route(RPC_PATH + "/", endpoint=endpoint, methods=["POST"]))
    # The HTTP+JSON binding under its own prefix: its `/{tenant}/...` routes would otherwise
    # match graphwright's own paths.
    rest = create_rest_routes(handler, context_builder=CallContextBuilder())
    app.router.routes.append(Mount(REST_PATH, routes=rest_routes(rest, guard)))

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if isinstance(executor, ChatAgentExecutor):
                await _cancel_running(handler, executor)
            await handler.aclose()
            await engine.dispose()

    app.include_router(APIRouter(lifespan=lifespan))


async def _cancel_running(handler: GraphwrightRequestHandler, executor: ChatAgentExecutor) -> None:
    """Shutting down: cancel the running turns' tasks, so that none is left `working` in the
    store, with no process behind it."""
    server = ServerCallContext()
    await asyncio.gather(
        *(
            handler.on_cancel_task(CancelTaskRequest(id=task_id), server)
            for task_id in list(executor.running)
        ),
        return_exceptions=True,
    )
