"""Cancelling running A2A tasks at random points: the task's own stream, CancelTask, GetTask and
the stored conversation always tell the same outcome."""

from __future__ import annotations

import asyncio
import random
import uuid

import pytest
from a2a.client import Client
from a2a.types import CancelTaskRequest, GetTaskRequest, StreamResponse, TaskState
from a2a.utils.errors import TaskNotCancelableError

from graphwright.errors import NotFound
from tests.a2a.conftest import Agent, user_message

pytestmark = pytest.mark.asyncio(loop_scope="module")

TRIES = 50
AT_ONCE = 10
# A turn of two short tool calls and a long answer: events over about a quarter of a second,
# then the store; the cancels land anywhere from its first event to just after its end.
TURN = "/flaky.sleep 0.1\n/flaky.sleep 0.1\n/help"
LATEST_CANCEL_SECONDS = 0.4
TERMINAL = {TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED}
STORED_STATUS = {
    TaskState.TASK_STATE_COMPLETED: "complete",
    TaskState.TASK_STATE_CANCELED: "cancelled",
}


def final_state(events: list[StreamResponse]) -> TaskState:
    """The terminal state the stream ended with; the stream must end with one."""
    last = events[-1]
    state = last.status_update.status.state if last.HasField("status_update") else None
    assert state in TERMINAL, f"the stream closed without a final status: {last}"
    return state


async def cancel_at(agent: Agent, streaming: Client, other: Client, delay: float) -> TaskState:
    context_id = str(uuid.uuid4())
    stream = streaming.send_message(user_message(TURN, context_id=context_id))
    first = await anext(stream)
    task_id = first.task.id
    rest = asyncio.ensure_future(collect_rest(stream))
    await asyncio.sleep(delay)
    try:
        cancelled = await other.cancel_task(CancelTaskRequest(id=task_id))
    except TaskNotCancelableError:
        cancelled = None  # it had ended already
    events = [first, *await asyncio.wait_for(rest, 60)]
    streamed = final_state(events)
    stored = (await other.get_task(GetTaskRequest(id=task_id))).status.state
    assert streamed == stored, (delay, streamed, stored)
    if cancelled is not None:
        assert cancelled.status.state == stored, (delay, cancelled.status.state, stored)
    else:
        assert stored == TaskState.TASK_STATE_COMPLETED
    try:
        last = agent.chat.get_conversation(context_id)["messages"][-1]
    except NotFound:  # cancelled before its turn started: nothing was stored
        assert stored == TaskState.TASK_STATE_CANCELED
    else:
        assert last["role"] == "assistant" and last["status"] == STORED_STATUS[stored], last
    return stored


async def collect_rest(stream) -> list[StreamResponse]:
    return [event async for event in stream]


async def test_the_stream_cancel_and_get_agree_on_every_cancellation(agent: Agent) -> None:
    rng = random.Random(29)
    delays = [rng.uniform(0, LATEST_CANCEL_SECONDS) for _ in range(TRIES)]
    streaming, other = await agent.client(), await agent.client(streaming=False)
    outcomes: list[TaskState] = []
    for start in range(0, TRIES, AT_ONCE):
        batch = delays[start : start + AT_ONCE]
        outcomes += await asyncio.gather(*(cancel_at(agent, streaming, other, d) for d in batch))
    await streaming.close()
    await other.close()
    assert len(outcomes) == TRIES
    assert TaskState.TASK_STATE_CANCELED in outcomes
