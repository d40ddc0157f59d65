"""The behaviour the A2A TCK (a2aproject/a2a-tck, 1.0 line) expects of a system under test, keyed
by the prefix of the message id. Test-only: it is served by graphwright's real A2A mount (same
routes, same database task store) with auth off, and never ships in the product."""

from __future__ import annotations

from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part
from a2a.utils.errors import ContentTypeNotSupportedError
from google.protobuf.struct_pb2 import Struct, Value

TEXT_TYPES = ("", "text/plain")


def _data(value: dict) -> Value:
    struct = Struct()
    struct.update(value)
    return Value(struct_value=struct)


class TckExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message, task_id, context_id = context.message, context.task_id, context.context_id
        assert message is not None and task_id is not None and context_id is not None
        for part in message.parts:
            if part.WhichOneof("content") != "text" or part.media_type not in TEXT_TYPES:
                raise ContentTypeNotSupportedError(
                    message=f"Only text parts are accepted, not {part.media_type or 'this part'}"
                )
        updater = TaskUpdater(event_queue, task_id, context_id)
        prefix = message.message_id
        if prefix.startswith(("tck-message-response", "tck-stream-002")):
            reply = "Direct message response"
            await event_queue.enqueue_event(updater.new_agent_message([Part(text=reply)]))
            return
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(message))
        if prefix.startswith("tck-input-required"):
            await updater.requires_input(updater.new_agent_message([Part(text="More, please")]))
            return
        if prefix.startswith("tck-stream-artifact-chunked"):
            await updater.start_work()
            await updater.add_artifact([Part(text="chunk-1 ")], artifact_id="chunked")
            await updater.add_artifact(
                [Part(text="chunk-2")], artifact_id="chunked", append=True, last_chunk=True
            )
        elif prefix.startswith(("tck-stream-001", "tck-stream-003", "tck-stream-ordering-001")):
            await updater.start_work()
            await updater.add_artifact([Part(text="Streamed output")])
        elif prefix.startswith("tck-artifact-text"):
            await updater.add_artifact([Part(text="Generated text content")])
        elif prefix.startswith("tck-artifact-file-url"):
            url = "https://example.com/output.txt"
            await updater.add_artifact(
                [Part(url=url, media_type="text/plain", filename="output.txt")]
            )
        elif prefix.startswith("tck-artifact-file"):
            await updater.add_artifact(
                [Part(raw=b"tck", media_type="text/plain", filename="output.txt")]
            )
        elif prefix.startswith("tck-artifact-data"):
            await updater.add_artifact([Part(data=_data({"key": "value", "count": 42}))])
        await updater.complete(updater.new_agent_message([Part(text="Hello from TCK")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()
