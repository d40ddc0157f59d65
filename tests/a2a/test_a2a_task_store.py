"""graphwright's DatabaseTaskStore on the app's database, both backends."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from a2a.server.cluster.task_store import ConcurrentTaskModificationError
from a2a.server.context import ServerCallContext
from a2a.server.id_generator import IDGeneratorContext
from a2a.server.tasks.database_task_store import DatabaseTaskStore
from a2a.types import Artifact, ListTasksRequest, Part, Task, TaskState, TaskStatus
from google.protobuf.struct_pb2 import Struct, Value
from sqlalchemy import func, select

from graphwright.a2a.models import A2ATask
from graphwright.a2a.tasks import GraphwrightTaskStore, async_engine
from graphwright.db import Database


async def test_saves_upsert_and_unsaved_tasks_are_read_without_the_database(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = async_engine(database.url)
    store = GraphwrightTaskStore(engine)
    context = ServerCallContext()
    task_id = store.generate(IDGeneratorContext())

    async def no_database(*_args: object) -> None:
        raise AssertionError("the database was asked for a task that was never saved")

    with monkeypatch.context() as patch:
        patch.setattr(DatabaseTaskStore, "get", no_database)
        assert await store.get(task_id, context) is None

    long_context = "c" * 200  # a conversation id longer than the SDK's own column allows
    task = Task(
        id=task_id, context_id=long_context, status=TaskStatus(state=TaskState.TASK_STATE_WORKING)
    )
    await store.save(task, context)
    task.status.state = TaskState.TASK_STATE_COMPLETED
    await asyncio.gather(store.save(task, context), store.save(task, context))
    stored = await store.get(task_id, context)
    assert stored is not None and stored.status.state == TaskState.TASK_STATE_COMPLETED
    assert stored.context_id == long_context
    async with engine.connect() as connection:
        rows = await connection.scalar(select(func.count()).select_from(A2ATask.__table__))
    assert rows == 1
    listing = await store.list(ListTasksRequest(context_id=long_context), context)
    assert [t.id for t in listing.tasks] == [task_id]
    await engine.dispose()


async def test_a_task_in_a_final_state_is_never_given_another(database: Database) -> None:
    """A2A's final states are final: a cancel that read the task working before it completed
    (on this server or another) must lose to the completion, not overwrite it."""
    engine = async_engine(database.url)
    store = GraphwrightTaskStore(engine)
    context = ServerCallContext()
    task = Task(
        id=store.generate(IDGeneratorContext()),
        context_id="final",
        status=TaskStatus(state=TaskState.TASK_STATE_WORKING),
    )
    await store.save(task, context)
    cancelled = Task()
    cancelled.CopyFrom(task)
    cancelled.status.state = TaskState.TASK_STATE_CANCELED
    task.status.state = TaskState.TASK_STATE_COMPLETED
    await store.save(task, context)
    await store.save(task, context)  # the same final state again: nothing changes
    with pytest.raises(ConcurrentTaskModificationError):
        await store.save(cancelled, context)
    stored = await store.get(task.id, context)
    assert stored is not None and stored.status.state == TaskState.TASK_STATE_COMPLETED

    working = Task(id=store.generate(IDGeneratorContext()), context_id="final")
    working.status.state = TaskState.TASK_STATE_WORKING
    await store.save(working, context)
    cancelled.id = working.id
    await store.save(cancelled, context)  # a task still working can be cancelled
    stored = await store.get(working.id, context)
    assert stored is not None and stored.status.state == TaskState.TASK_STATE_CANCELED
    await engine.dispose()


@pytest.mark.parametrize("count", [20])
async def test_concurrent_saves_of_many_tasks_all_land(database: Database, count: int) -> None:
    engine = async_engine(database.url)
    store = GraphwrightTaskStore(engine)
    context = ServerCallContext()
    tasks = [
        Task(
            id=store.generate(IDGeneratorContext()),
            context_id="ctx",
            status=TaskStatus(state=TaskState.TASK_STATE_WORKING),
        )
        for _ in range(count)
    ]
    await asyncio.gather(*(store.save(task, context) for task in tasks for _ in range(3)))
    listing = await store.list(ListTasksRequest(context_id="ctx", page_size=100), context)
    assert sorted(t.id for t in listing.tasks) == sorted(t.id for t in tasks)
    await engine.dispose()


async def test_a_large_task_is_converted_off_the_event_loop(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task holding a large graph takes protobuf's converters a second or so, which every
    request of every user would wait for on the event loop: past a size, a task is converted in a
    worker thread (a copy of it, to save it); a small one is converted on the loop, without a
    thread's hand-off."""
    engine = async_engine(database.url)
    store = GraphwrightTaskStore(engine)
    context = ServerCallContext()
    on_loop: list[tuple[str, bool]] = []
    for method in ("_to_orm", "_from_orm"):
        monkeypatch.setattr(DatabaseTaskStore, method, recorded(method, on_loop))
    big, small = _task(store, 5_000), _task(store, 0)
    await store.save(big, context)
    await store.save(small, context)
    assert on_loop == [("_to_orm", False), ("_to_orm", True)]
    on_loop.clear()
    stored, stored_small = await store.get(big.id, context), await store.get(small.id, context)
    assert on_loop == [("_from_orm", False), ("_from_orm", True)]
    assert stored is not None and stored.artifacts[0] == big.artifacts[0]
    assert stored_small == small
    await engine.dispose()


async def test_a_listing_converts_no_artifacts_it_is_not_asked_for_and_large_pages_off_the_loop(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page holds up to 50 tasks, each of which may hold a large graph: the SDK converted every
    one on the event loop, artifacts included, and its handler then dropped the artifacts unless
    asked for them."""
    engine = async_engine(database.url)
    store = GraphwrightTaskStore(engine)
    context = ServerCallContext()
    saved = [_task(store, nodes) for nodes in (5_000, 5_000, 3)]
    for task in saved:
        await store.save(task, context)
    on_loop: list[tuple[str, bool]] = []
    monkeypatch.setattr(DatabaseTaskStore, "_from_orm", recorded("_from_orm", on_loop))

    page = await store.list(ListTasksRequest(context_id="listed"), context)
    assert on_loop == [("_from_orm", True)] * 3
    assert sorted(task.id for task in page.tasks) == sorted(task.id for task in saved)
    assert all(not task.artifacts for task in page.tasks) and page.total_size == 3

    on_loop.clear()
    request = ListTasksRequest(context_id="listed", include_artifacts=True, page_size=2)
    page = await store.list(request, context)
    assert on_loop == [("_from_orm", False)] * 2 and page.next_page_token
    by_id = {task.id: task for task in saved}
    assert all(task.artifacts == by_id[task.id].artifacts for task in page.tasks)
    await engine.dispose()


def _task(store: GraphwrightTaskStore, nodes: int) -> Task:
    graph = Struct()
    graph.update({"nodes": [{"id": f"N{index}", "name": "x" * 20} for index in range(nodes)]})
    return Task(
        id=store.generate(IDGeneratorContext()),
        context_id="listed",
        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED),
        artifacts=[Artifact(artifact_id="g", parts=[Part(data=Value(struct_value=graph))])],
    )


def recorded(method: str, on_loop: list[tuple[str, bool]]) -> Any:
    """The SDK's converter `method`, noting whether it ran on this (the event loop's) thread."""
    loop_thread, original = threading.get_ident(), getattr(DatabaseTaskStore, method)

    def run(self: DatabaseTaskStore, *args: Any) -> Any:
        on_loop.append((method, threading.get_ident() == loop_thread))
        return original(self, *args)

    return run
