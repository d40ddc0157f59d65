"""A2A tasks in a2a-sdk's `DatabaseTaskStore`, on graphwright's own database.

The SDK's store is asynchronous, so it gets an async engine on the same database as the app's
synchronous one: SQLite through aiosqlite, PostgreSQL through asyncpg. The engine runs in
autocommit: every write of the store is a single statement (see `GraphwrightTaskStore.save`),
reads are single selects, and so no transaction reads before it writes (SQLite never has to
upgrade a read lock), and a task-store operation costs one round trip. The one reader of two
statements, `list`, may count a task saved between its count and its page. libpq
`options=-c name=value` settings in a PostgreSQL URL (a `search_path`) become asyncpg
`server_settings`.

graphwright is one tenant: every task has the same owner, and who may see a task is decided by
the conversation (A2A context) its token is scoped to (see `auth`).
"""

from __future__ import annotations

import asyncio
import itertools
import shlex
import uuid
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any, cast

import orjson
from a2a.server.cluster.task_store import ConcurrentTaskModificationError
from a2a.server.context import ServerCallContext
from a2a.server.id_generator import IDGenerator, IDGeneratorContext
from a2a.server.models import TaskModel
from a2a.server.tasks.database_task_store import DatabaseTaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState
from sqlalchemy import String, Table, bindparam, event, or_, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from graphwright.a2a.models import A2ATask
from graphwright.errors import InvalidInput

OWNER = "graphwright"
SQLITE_TIMEOUT_SECONDS = 60
MAX_UNSAVED = 10_000
# protobuf's converters take 0.7 s (to save) and 1.3 s (to read) for a task holding a 20,000-node
# graph, on whatever thread runs them: past this size a task is converted in a worker thread, not
# on the event loop.
CONVERT_ON_LOOP_BYTES = 64 * 1024
CANCELED = TaskState.Name(TaskState.TASK_STATE_CANCELED)
NEW_STATE = "new_state"  # the parameter of the save statement holding the state being saved
# A2A's final states, by the names a task's stored status holds: a task in one never changes.
FINAL_STATE_NAMES = [
    TaskState.Name(state)
    for state in (
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_REJECTED,
    )
]
# Every statement of the store is a transaction of its own (see the module's docstring), so no
# BEGIN, COMMIT or ROLLBACK round trips, and no rollback when a connection goes back to the pool.
AUTOCOMMIT: dict[str, Any] = {"isolation_level": "AUTOCOMMIT", "pool_reset_on_return": None}


def single_owner(_context: ServerCallContext) -> str:
    return OWNER


def async_engine(url: str) -> AsyncEngine:
    """An async engine on the database that the synchronous SQLAlchemy `url` names."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(
            parsed.set(drivername="sqlite+aiosqlite"),
            connect_args={"timeout": SQLITE_TIMEOUT_SECONDS},
            **AUTOCOMMIT,
        )
        _configure_sqlite(engine)
        return engine
    if backend == "postgresql":
        async_url, server_settings = _asyncpg_url(parsed)
        connect_args = {"server_settings": server_settings} if server_settings else {}
        return create_async_engine(
            async_url, connect_args=connect_args, pool_pre_ping=True, pool_size=10, **AUTOCOMMIT
        )
    raise InvalidInput(f"A2A tasks need SQLite or PostgreSQL; the database URL names '{backend}'")


def _asyncpg_url(parsed: URL) -> tuple[URL, dict[str, str]]:
    query = dict(parsed.query)
    options = query.pop("options", ())
    tokens = shlex.split(" ".join((options,) if isinstance(options, str) else options))
    settings: dict[str, str] = {}
    for token, following in itertools.pairwise([*tokens, ""]):
        setting = following if token == "-c" else token.removeprefix("-c")
        if token.startswith("-c") and "=" in setting:
            name, _, value = setting.partition("=")
            settings[name] = value
    return parsed.set(drivername="postgresql+asyncpg", query=query), settings


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        # As graphwright's own connections (db.py): in WAL, NORMAL is durable across crashes of
        # the process and spares an fsync per commit; a task is saved once per event.
        for pragma in (f"busy_timeout={SQLITE_TIMEOUT_SECONDS * 1000}", "synchronous=NORMAL"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()


class GraphwrightTaskStore(DatabaseTaskStore, IDGenerator):
    """The SDK's store on graphwright's `a2a_tasks` table (made by the room's migration), with
    four changes, because the SDK reads and saves the whole task around every event:

    - a task is saved with one upsert, not the SDK's read-then-write `merge` in a transaction;
    - that upsert never changes a final state (`_upsert`): the SDK's unversioned stores
      let a cancel overwrite a task that completed after the cancel read it;
    - a large task (a turn's graph) is converted, for saving and when read, in a worker thread,
      and a listing converts no artifacts it was not asked for;
    - it is also the generator of new task ids (`generate`), so it knows that a task it has just
      named is not stored yet, and answers the SDK's reads of it before its first save without
      asking the database.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__(engine, create_table=False, owner_resolver=single_owner)
        self.task_model = A2ATask
        self._upsert = _upsert(
            sqlite_insert if engine.dialect.name == "sqlite" else postgresql_insert
        )
        self._unsaved: OrderedDict[str, None] = OrderedDict()

    def generate(self, context: IDGeneratorContext) -> str:
        task_id = str(uuid.uuid4())
        self._unsaved[task_id] = None
        while len(self._unsaved) > MAX_UNSAVED:  # named but never saved: a request that failed
            self._unsaved.popitem(last=False)
        return task_id

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        row = await self._stored(A2ATask, task_id, context)
        if row is None:
            return None
        [task] = await self._converted([row])
        return task

    async def context_of(self, task_id: str, context: ServerCallContext) -> str | None:
        """The context (conversation) of a stored task, or None: a scope check reads this, not
        the whole task with its artifacts."""
        return await self._stored(A2ATask.context_id, task_id, context)

    async def cancelled(self, task_id: str, context: ServerCallContext) -> bool:
        """Whether the caller's task is stored cancelled (its state alone is read)."""
        state = await self._stored(A2ATask.status["state"].as_string(), task_id, context)
        return state == CANCELED

    async def _stored(self, what: Any, task_id: str, context: ServerCallContext) -> Any:
        """`what` (the row, or a column) of the caller's stored task, or None."""
        if task_id in self._unsaved:
            return None
        await self._ensure_initialized()
        owner = self.owner_resolver(context)
        statement = select(what).where(A2ATask.id == task_id, A2ATask.owner == owner)
        async with self.async_session_maker() as session:
            return await session.scalar(statement)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The SDK's listing, its tasks converted after its query (`_from_orm` keeps the rows
        meanwhile): without their artifacts when they are not asked for (the SDK's handler drops
        them anyway), and like `get`'s when large. A page holds up to 50 tasks."""
        rows: list[A2ATask] = []
        listing = _LISTED.set(rows)
        try:
            page = await super().list(params, context)
        finally:
            _LISTED.reset(listing)
        if not params.include_artifacts:
            rows = [_without_artifacts(row) for row in rows]
        tasks = await self._converted(rows)
        del page.tasks[:]
        page.tasks.extend(tasks)
        return page

    def _from_orm(self, task_model: TaskModel) -> Task:
        rows = _LISTED.get()
        if rows is None:
            return super()._from_orm(task_model)
        rows.append(cast(A2ATask, task_model))
        return Task()  # a place holder in the SDK's page, which `list` fills

    async def _converted(self, rows: list[A2ATask]) -> list[Task]:
        """`rows` as tasks: on the event loop when small, else in a worker thread."""
        if not _large(rows):
            return [self._from_orm(row) for row in rows]
        return await asyncio.to_thread(lambda: [self._from_orm(row) for row in rows])

    async def save(self, task: Task, context: ServerCallContext) -> None:
        owner = self.owner_resolver(context)
        if task.ByteSize() <= CONVERT_ON_LOOP_BYTES:
            row = self._to_orm(task, owner)
        else:  # converted from a copy, which the SDK cannot change meanwhile
            copied = Task()
            copied.CopyFrom(task)
            row = await asyncio.to_thread(self._to_orm, copied, owner)
        values = {column.name: getattr(row, attribute) for column, attribute in _COLUMNS}
        values[NEW_STATE] = TaskState.Name(task.status.state)
        async with self.engine.connect() as connection:
            saved = (await connection.execute(self._upsert, values)).rowcount
        self._unsaved.pop(task.id, None)
        if not saved:
            # The SDK's answer to a write that lost a race: a cancel reloads and reports the
            # stored outcome, and a running task's consumer stops at it.
            raise ConcurrentTaskModificationError(task.id)


_COLUMNS = [
    (column, A2ATask.__mapper__.get_property_by_column(column).key)
    for column in A2ATask.__table__.columns
]
# The rows of the listing in progress in this asyncio task (see `GraphwrightTaskStore.list`).
_LISTED: ContextVar[list[A2ATask] | None] = ContextVar("listed_a2a_tasks", default=None)


def _upsert(insert: Callable[[Table], Any]) -> Any:
    """The statement that saves a task: its columns and `NEW_STATE` are given when it runs. Made
    once: building it took more of a save's time than the database did.

    A2A's final states are final, so a stored task that has reached one is saved again only in
    the same one. One statement checks and writes, so a cancel that read the task working just
    before it completed (here, or on another server) cannot overwrite the completion."""
    table = A2ATask.__table__
    statement = insert(table)
    stored = A2ATask.status["state"].as_string()
    return statement.on_conflict_do_update(
        index_elements=["id"],
        set_={column.name: statement.excluded[column.name] for column, _ in _COLUMNS},
        where=or_(
            stored.is_(None),
            stored.not_in(FINAL_STATE_NAMES),
            stored == bindparam(NEW_STATE, type_=String()),
        ),
    )


def _large(rows: list[A2ATask]) -> bool:
    """Whether the rows' parts hold more than CONVERT_ON_LOOP_BYTES of JSON."""
    try:
        size = len(orjson.dumps([[row.artifacts, row.history] for row in rows]))
    except TypeError:  # what orjson does not write (an integer past 64 bits): judged large
        return True
    return size > CONVERT_ON_LOOP_BYTES


def _without_artifacts(row: A2ATask) -> A2ATask:
    """A detached copy of `row` with no artifacts."""
    values = {attribute: getattr(row, attribute) for _, attribute in _COLUMNS}
    return A2ATask(**{**values, "artifacts": []})
