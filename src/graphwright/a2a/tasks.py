"""A2A tasks in a2a-sdk's `DatabaseTaskStore`, on graphwright's own database.

The SDK's store is asynchronous, so it gets an async engine on the same database as the app's
synchronous one: SQLite through aiosqlite, PostgreSQL through asyncpg. On SQLite every transaction
takes the write lock up front (`BEGIN IMMEDIATE`), as graphwright's own writes do, because the
store reads a task and then writes it in one transaction, and SQLite cannot upgrade a read
transaction while another connection writes. libpq `options=-c name=value` settings in a
PostgreSQL URL (such as a `search_path`) become asyncpg `server_settings`.

graphwright is one tenant: every task has the same owner, and who may see a task is decided by
the conversation (A2A context) its token is scoped to (see `auth`).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.tasks.database_task_store import DatabaseTaskStore
from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from graphwright.a2a.models import A2ATask
from graphwright.errors import InvalidInput

OWNER = "graphwright"
SQLITE_TIMEOUT_SECONDS = 60


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
        )
        _lock_sqlite_up_front(engine)
        return engine
    if backend == "postgresql":
        async_url, server_settings = _asyncpg_url(parsed)
        connect_args = {"server_settings": server_settings} if server_settings else {}
        return create_async_engine(
            async_url, connect_args=connect_args, pool_pre_ping=True, pool_size=10
        )
    raise InvalidInput(f"A2A tasks need SQLite or PostgreSQL; the database URL names '{backend}'")


def _asyncpg_url(parsed: URL) -> tuple[URL, dict[str, str]]:
    query = dict(parsed.query)
    options = query.pop("options", ())
    tokens = shlex.split(" ".join((options,) if isinstance(options, str) else options))
    settings: dict[str, str] = {}
    for token, following in zip(tokens, [*tokens[1:], ""], strict=True):
        setting = following if token == "-c" else token.removeprefix("-c")
        if token.startswith("-c") and "=" in setting:
            name, _, value = setting.partition("=")
            settings[name] = value
    return parsed.set(drivername="postgresql+asyncpg", query=query), settings


def _lock_sqlite_up_front(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy emits BEGIN itself, below
        cursor = dbapi_conn.cursor()
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_TIMEOUT_SECONDS * 1000}")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def task_store(engine: AsyncEngine) -> DatabaseTaskStore:
    """The SDK's store on graphwright's `a2a_tasks` table (made by the room's migration)."""
    store = DatabaseTaskStore(engine, create_table=False, owner_resolver=single_owner)
    store.task_model = A2ATask
    return store
