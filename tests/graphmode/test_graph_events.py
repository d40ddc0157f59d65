"""Change events: delivered after commit only; on PostgreSQL shared by separate instances."""

from __future__ import annotations

import asyncio

import pytest
from fastapi.concurrency import run_in_threadpool

from graphwright.db import Database
from graphwright.errors import NotFound
from graphwright.graphmode.events import PostgresGraphEvents, create_graph_events
from graphwright.graphmode.schemas import EdgeInput, NodeInput
from graphwright.graphmode.service import GraphService


async def test_events_follow_commits_only(database: Database) -> None:
    events = create_graph_events(database)
    service = GraphService(database, events)
    subscription = events.subscribe("c1")
    other = events.subscribe("c2")
    try:
        node = NodeInput(id="A:1", label="a", type="gene")
        await run_in_threadpool(service.add_node, "c1", node, actor="me")
        with pytest.raises(NotFound):
            edge = EdgeInput(source="A:1", target="B:1")
            await run_in_threadpool(service.add_edge, "c1", edge, actor="me")
        await run_in_threadpool(service.remove_node, "c1", "A:1", actor="me")
        first = await asyncio.wait_for(anext(subscription), timeout=10)
        second = await asyncio.wait_for(anext(subscription), timeout=10)
        assert [(e["version"], e["command"]) for e in (first, second)] == [
            (1, "addNode"),
            (2, "removeNode"),
        ]
        assert other.queue.empty()
    finally:
        subscription.close()
        other.close()
        events.close()


async def test_two_instances_share_events_on_postgres(database_url: str) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("LISTEN/NOTIFY needs PostgreSQL")
    first_db, second_db = Database(database_url), Database(database_url, migrate=False)
    writer_events, viewer_events = create_graph_events(first_db), create_graph_events(second_db)
    assert isinstance(viewer_events, PostgresGraphEvents)
    writer = GraphService(first_db, writer_events)
    subscription = viewer_events.subscribe("shared")
    try:
        node = NodeInput(id="A:1", label="a", type="gene")
        await run_in_threadpool(writer.add_node, "shared", node, actor="instance-1")
        event = await asyncio.wait_for(anext(subscription), timeout=10)
        assert (event["conversationId"], event["version"], event["actor"]) == (
            "shared",
            1,
            "instance-1",
        )
    finally:
        subscription.close()
        writer_events.close()
        viewer_events.close()
        first_db.dispose()
        second_db.dispose()
