"""A run in progress in this process: its progress events as they happen, for the SSE stream
and for whoever waits for the run to stop (done, failed, or waiting for a person)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

MAX_EVENTS = 2_000
END_EVENTS = ("done", "error")


class LiveRun:
    def __init__(self, run_id: str, events: list[dict[str, Any]] | None = None) -> None:
        self.run_id = run_id
        self.events: list[dict[str, Any]] = list(events or [])
        self.stopped = asyncio.Event()
        self.task: asyncio.Task[Any] | None = None
        self._tick = asyncio.Event()

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        if len(self.events) >= MAX_EVENTS and kind not in END_EVENTS:
            return
        self.events.append({"seq": len(self.events), "type": kind, "data": data})
        self._wake()

    def _wake(self) -> None:
        tick, self._tick = self._tick, asyncio.Event()
        tick.set()

    async def follow(self, after: int = -1) -> AsyncIterator[dict[str, Any]]:
        """Every event after `after`, then new ones as they come, until the run stops."""
        seen = after + 1
        while True:
            tick = self._tick
            while seen < len(self.events):
                yield self.events[seen]
                seen += 1
            if self.stopped.is_set():
                return
            await tick.wait()

    def stop(self) -> None:
        self.stopped.set()
        self._wake()
