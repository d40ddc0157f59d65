"""Live change events per conversation, for viewers (SSE) and other server instances.

On SQLite the events fan out in process after each commit. On PostgreSQL each write sends a
`NOTIFY` inside its own transaction (delivered only if it commits), and one listener thread per
process feeds the local subscribers, so every instance on the same database sees every write.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections import defaultdict
from typing import Any

import orjson
from sqlalchemy import event as sa_event
from sqlalchemy import text
from sqlalchemy.orm import Session

from graphwright.db import RESULT_UNREAD, Database
from graphwright.db_listen import PostgresListener

Event = dict[str, Any]
QUEUE_SIZE = 1000
NOTIFY_LIMIT = 7000  # PostgreSQL refuses NOTIFY payloads of 8000 bytes or more


class GraphEvents:
    """In-process fan-out: `publish` inside a write transaction, delivered after its commit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[Event]]]]
        self._subscribers = defaultdict(set)

    def publish(self, session: Session, event: Event) -> None:
        sa_event.listen(session, "after_commit", lambda _s: self.deliver(event), once=True)

    def deliver(self, event: Event) -> None:
        with self._lock:
            targets = list(self._subscribers.get(event["conversationId"], ()))
        for loop, queue in targets:
            try:
                loop.call_soon_threadsafe(_offer, queue, event)
            except RuntimeError:  # the subscriber's loop has closed
                continue

    def subscribe(self, conversation_id: str) -> Subscription:
        """Events of one conversation from now on; must be called on the consumer's loop."""
        self.start()
        subscription = Subscription(self, conversation_id)
        with self._lock:
            self._subscribers[conversation_id].add(subscription.entry)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscribers[subscription.conversation_id].discard(subscription.entry)

    def start(self) -> None:
        """Nothing to start in process; the PostgreSQL variant starts its listener."""

    def close(self) -> None:
        """Nothing to stop in process."""


class PostgresGraphEvents(GraphEvents):
    """Events through LISTEN/NOTIFY on a channel named after the database URL."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.channel = "graphwright_" + hashlib.sha256(url.encode()).hexdigest()[:16]
        self._listener = PostgresListener(url, self.channel, self._heard)

    def publish(self, session: Session, event: Event) -> None:
        payload = orjson.dumps(event)
        if len(payload) > NOTIFY_LIMIT:
            payload = orjson.dumps({**event, "summary": {}})
        session.execute(
            text("SELECT pg_notify(:channel, :payload)"),
            {"channel": self.channel, "payload": payload.decode()},
            execution_options=RESULT_UNREAD,
        )

    def _heard(self, payload: str) -> None:
        self.deliver(orjson.loads(payload))

    def start(self) -> None:
        self._listener.start()

    def close(self) -> None:
        self._listener.close()


class Subscription:
    """An async iterator of one conversation's events; `close()` it when done."""

    def __init__(self, hub: GraphEvents, conversation_id: str) -> None:
        self.hub = hub
        self.conversation_id = conversation_id
        self.queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=QUEUE_SIZE)
        self.entry = (asyncio.get_running_loop(), self.queue)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event:
        return await self.queue.get()

    async def next_within(self, seconds: float) -> Event | None:
        """The next event, or None if none comes within `seconds`."""
        try:
            return await asyncio.wait_for(self.queue.get(), seconds)
        except TimeoutError:
            return None

    def close(self) -> None:
        self.hub.unsubscribe(self)


def create_graph_events(db: Database) -> GraphEvents:
    if db.engine.dialect.name == "postgresql":
        return PostgresGraphEvents(db.url)
    return GraphEvents()


def _offer(queue: asyncio.Queue[Event], event: Event) -> None:
    if queue.full():
        queue.get_nowait()  # a slow viewer loses its oldest event, not the newest
    queue.put_nowait(event)
