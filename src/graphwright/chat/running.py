"""A turn in progress: its events as they happen, then its final response.

A turn runs in its own task and reports through a queue, so a client that stops reading does not
stop the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ChatEvent:
    type: str
    data: dict[str, Any]


class RunningTurn:
    """A turn in progress: its events as they happen, then its final response."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.queue: asyncio.Queue[ChatEvent] = asyncio.Queue()
        self.task: asyncio.Task[dict[str, Any]] | None = None
        self.started = False  # its task has begun (a cancel before then is seen as it begins)
        self.cancel_asked = False
        self.storing = False  # past the point where a cancel can stop it

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        self.queue.put_nowait(ChatEvent(kind, data))

    async def events(self) -> AsyncIterator[ChatEvent]:
        while True:
            event = await self.queue.get()
            yield event
            if event.type == "done":
                return

    async def response(self) -> dict[str, Any]:
        assert self.task is not None
        return await asyncio.shield(self.task)
