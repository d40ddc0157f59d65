"""Where the miner keeps its agents' memory and checkpoints: LangGraph's SQLite store and saver
in `$GRAPHWRIGHT_HOME`, or its PostgreSQL ones when the database URL is PostgreSQL (then every
server instance shares them, and a run stopped on one can be approved on another)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from sqlalchemy.engine import make_url

from graphwright.settings import Settings


@dataclass
class Persistence:
    store: BaseStore
    checkpointer: BaseCheckpointSaver[str]
    stack: AsyncExitStack

    async def aclose(self) -> None:
        await self.stack.aclose()


def postgres_conninfo(url: str) -> str | None:
    """The libpq URL of a PostgreSQL SQLAlchemy URL (options such as search_path kept), or
    None for any other database."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return None
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


async def open_persistence(settings: Settings) -> Persistence:
    stack = AsyncExitStack()
    try:
        conninfo = postgres_conninfo(settings.resolved_database_url)
        if conninfo is not None:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
            from langgraph.store.postgres.aio import AsyncPostgresStore

            store = await stack.enter_async_context(AsyncPostgresStore.from_conn_string(conninfo))
            saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(conninfo))
        else:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
            from langgraph.store.sqlite.aio import AsyncSqliteStore

            settings.miner_path.parent.mkdir(parents=True, exist_ok=True)
            path = str(settings.miner_path)
            store = await stack.enter_async_context(AsyncSqliteStore.from_conn_string(path))
            saver = await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(path))
        await store.setup()
        await saver.setup()
    except BaseException:
        await stack.aclose()
        raise
    return Persistence(store, saver, stack)
