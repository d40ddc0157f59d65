"""graphwright's A2A request handler: a2a-sdk's own, which first admits each request.

Every request is refused when it holds what no backend stores (a NUL in any text or id, a
number JSON cannot write), so both backends give the same answer. A message is checked before
any task is made for it: its role, parts, text, contextId and mode (`parts.admit`), and the
caller's conversation scope; one that names a task but no context gets the task's context. A
scoped token that names no context works in its own conversation, and lists only that
conversation's tasks; every other operation on a task checks the task's context against the
token. What leaves the handler is an A2A error (`errors.as_a2a_errors`), on both bindings.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
)
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict, SerializeToJsonError
from google.protobuf.message import Message as ProtoMessage

from graphwright.a2a.auth import authorize_context, principal_of
from graphwright.a2a.errors import as_a2a_errors
from graphwright.a2a.parts import admit
from graphwright.a2a.tasks import GraphwrightTaskStore
from graphwright.core.nul import nul_path, nul_refusal


def refuse_unstorable(request: ProtoMessage) -> None:
    """Refuse a request that holds a NUL in any text or id, or a number JSON cannot write
    (Infinity, NaN): PostgreSQL stores neither, and the task store writes the request as JSON."""
    try:
        body = MessageToDict(request)
    except SerializeToJsonError as exc:
        raise InvalidParamsError(
            message=f"The request holds a number JSON cannot carry (Infinity or NaN): {exc}"
        ) from None
    where = nul_path(body)
    if where is not None:
        raise InvalidParamsError(message=nul_refusal(where))


class GraphwrightRequestHandler(DefaultRequestHandler):
    """a2a-sdk's request handler, admitting each request first."""

    def __init__(self, *, task_store: GraphwrightTaskStore, **kwargs: Any) -> None:
        super().__init__(task_store=task_store, **kwargs)
        self.tasks = task_store

    async def _scoped_context(self, task_id: str, context: ServerCallContext) -> str | None:
        """The task's context, checked against the caller's scope; None for an unknown task."""
        context_id = await self.tasks.context_of(task_id, context)
        if context_id is not None:
            authorize_context(context, context_id)
        return context_id

    async def _admit(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        refuse_unstorable(params)
        admit(params.message, MessageToDict(params.metadata))
        message = params.message
        if message.task_id:
            task_context = await self._scoped_context(message.task_id, context)
            # A message naming only its task continues in the task's context (the spec's "infer
            # contextId from the task"); left empty, a2a-sdk would give the executor a new one.
            if task_context is not None and not message.context_id:
                message.context_id = task_context
        principal = principal_of(context)
        if not message.context_id and principal is not None and principal.conversation_id:
            message.context_id = principal.conversation_id
        if message.context_id:
            authorize_context(context, message.context_id)

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        with as_a2a_errors():
            await self._admit(params, context)
            return await super().on_message_send(params, context)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        with as_a2a_errors():
            await self._admit(params, context)
            async for event in super().on_message_send_stream(params, context):
                yield event

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        with as_a2a_errors():
            refuse_unstorable(params)
            await self._scoped_context(params.id, context)
            return await super().on_get_task(params, context)

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        with as_a2a_errors():
            refuse_unstorable(params)
            await self._scoped_context(params.id, context)
            return await super().on_cancel_task(params, context)

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        with as_a2a_errors():
            refuse_unstorable(params)
            await self._scoped_context(params.id, context)
            async for event in super().on_subscribe_to_task(params, context):
                yield event

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        with as_a2a_errors():
            refuse_unstorable(params)
            principal = principal_of(context)
            if params.context_id:
                authorize_context(context, params.context_id)
            elif principal is not None and principal.conversation_id:
                params.context_id = principal.conversation_id
            return await super().on_list_tasks(params, context)
