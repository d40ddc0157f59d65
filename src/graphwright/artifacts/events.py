"""Artifact update events (A2A `TaskArtifactUpdateEvent` shape) and their in-process fan-out.

Every write to a context gets the next sequence number of that context, and the store keeps the
event log, so a subscriber replays what it missed from the log and then follows live events. Live
delivery is in-process; a gap in the live stream (another thread or process wrote in between) is
filled from the log, so the order seen is always the sequence order.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from graphwright.core.artifacts import A2AModel, Artifact

Operation = Literal["create", "replace", "append", "delete"]


class ArtifactEvent(A2AModel):
    """A2A v1.0 TaskArtifactUpdateEvent. `metadata` carries sequence, version and operation.

    A2A has no delete event, so a delete is a tombstone: the artifact's fields with one empty text
    part, `append: false`, `lastChunk: true` and operation `delete`. A consumer that knows only
    A2A sees the artifact emptied and closed.
    """

    task_id: str = ""
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: dict[str, Any]

    @property
    def sequence(self) -> int:
        return int(self.metadata["sequence"])

    @property
    def version(self) -> int:
        return int(self.metadata["version"])


def make_event(
    *,
    context_id: str,
    task_id: str | None,
    artifact: Artifact,
    append: bool,
    last_chunk: bool,
    sequence: int,
    version: int,
    operation: Operation,
) -> ArtifactEvent:
    return ArtifactEvent(
        task_id=task_id or "",
        context_id=context_id,
        artifact=artifact,
        append=append,
        last_chunk=last_chunk,
        metadata={"sequence": sequence, "version": version, "operation": operation},
    )


@dataclass(eq=False)
class _Subscriber:
    context_id: str
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[ArtifactEvent] = field(default_factory=asyncio.Queue)


class EventHub:
    """Fans events out to the subscribers of their context, across threads and event loops."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: dict[str, set[_Subscriber]] = {}

    def publish(self, events: Sequence[ArtifactEvent]) -> None:
        for event in events:
            with self._lock:
                subscribers = list(self._subscribers.get(event.context_id, ()))
            for subscriber in subscribers:
                try:
                    subscriber.loop.call_soon_threadsafe(subscriber.queue.put_nowait, event)
                except RuntimeError:  # its event loop is closed; it will never read again
                    self._detach(subscriber)

    def _attach(self, context_id: str) -> _Subscriber:
        subscriber = _Subscriber(context_id, asyncio.get_running_loop())
        with self._lock:
            self._subscribers.setdefault(context_id, set()).add(subscriber)
        return subscriber

    def _detach(self, subscriber: _Subscriber) -> None:
        with self._lock:
            subscribers = self._subscribers.get(subscriber.context_id)
            if subscribers is not None:
                subscribers.discard(subscriber)
                if not subscribers:
                    del self._subscribers[subscriber.context_id]

    async def subscribe(
        self,
        context_id: str,
        replay: Callable[[int], list[ArtifactEvent]],
        *,
        after_sequence: int = 0,
    ) -> AsyncIterator[ArtifactEvent]:
        """Events of `context_id` with a sequence above `after_sequence`, in order, forever.

        `replay(after)` reads the stored log; it runs in a worker thread.
        """
        subscriber = self._attach(context_id)  # attach first, so nothing falls between
        last = after_sequence
        try:
            for event in await asyncio.to_thread(replay, last):
                yield event
                last = event.sequence
            while True:
                event = await subscriber.queue.get()
                if event.sequence <= last:
                    continue
                if event.sequence > last + 1:
                    for missed in await asyncio.to_thread(replay, last):
                        yield missed
                        last = missed.sequence
                    continue
                yield event
                last = event.sequence
        finally:
            self._detach(subscriber)
