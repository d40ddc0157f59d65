"""Database engine, transactions and migrations, shared by every room.

SQLite (WAL, foreign keys on) is the default; PostgreSQL is selected by URL. Writes on SQLite take
the write lock up front (`BEGIN IMMEDIATE`) so that two writers never deadlock on lock upgrade.
Each room owns an Alembic branch (its `branch_labels`); start-up applies every head.
"""

from __future__ import annotations

import fcntl
import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson
import psycopg
from alembic import command
from alembic.config import Config
from sqlalchemy import (
    JSON,
    Connection,
    DateTime,
    Dialect,
    Engine,
    TypeDecorator,
    create_engine,
    event,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import DBAPIError, InvalidatePoolError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
MIGRATION_LOCK = 0x6772_6170_6877  # PostgreSQL advisory lock key: "graphw" in ASCII

JSONType = JSON().with_variant(JSONB(), "postgresql")

# libpq can pipeline (send statements before reading the answers to earlier ones) from 14 on.
PIPELINES = psycopg.Pipeline.is_supported()
# Execution options of a statement whose result nobody reads. In a pipelined write it goes to the
# server with the next statement whose result is read, or with COMMIT, and so do its errors.
RESULT_UNREAD: Mapping[str, Any] = MappingProxyType({"result_unread": True})
_PIPELINE = "graphwright_pipeline"  # where a connection in a pipelined write keeps its pipeline


class UtcDateTime(TypeDecorator[datetime]):
    """Timestamps in UTC, aware on the way out (SQLite hands back naive values)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSONType, list[Any]: JSONType}


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _json_int(text: str) -> int | float:
    # PostgreSQL's JSONB prints a large float such as 1e300 as its digits: read it as the float.
    value = int(text)
    return value if INT64_MIN <= value <= INT64_MAX else float(text)


def _json_float(text: str) -> float:
    return float(text) or 0.0  # JSONB has no negative zero; neither does what we read back


def _sorted_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return dict(sorted(pairs))  # JSONB keeps no key order; neither does what we read back


def load_json(text: str | bytes) -> Any:
    """Stored JSON as both backends read it alike: keys sorted, numbers as `_json_int` and
    `_json_float` say."""
    return json.loads(
        text, parse_int=_json_int, parse_float=_json_float, object_pairs_hook=_sorted_object
    )


def dump_json(value: Any) -> str:
    """JSON for a column, by orjson: a big change log serialises in a fraction of the time, which
    is time a writer holds the lock. What orjson refuses (integers past 64 bits, keys that are not
    strings) goes to the standard library, which decides as it always did."""
    try:
        return orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_DATETIME).decode()
    except TypeError:
        return json.dumps(value)


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"timeout": 60, "check_same_thread": False},
            json_serializer=dump_json,
            json_deserializer=load_json,
        )
        _configure_sqlite(engine)
        return engine
    engine = create_engine(
        url,
        pool_size=10,
        max_overflow=20,
        json_serializer=dump_json,
        json_deserializer=load_json,
    )
    _ping_after_idle(engine)
    _read_results_in_pipelines(engine)
    return engine


# A connection back in the pool for less than this is used without a ping first.
PING_AFTER_IDLE_SECONDS = 10.0


def _ping_after_idle(engine: Engine) -> None:
    """Ping a pooled connection on checkout only when it sat idle for a while, where
    `pool_pre_ping` pings on every checkout: one more round trip per transaction, and under load
    every round trip waits for a CPU (benchmarks/load_bench.py).

    The trade-off: after the database restarts, a connection used in the last few seconds is
    found closed by its first statement, whose request fails, rather than by a ping. Either way
    the pool then drops every connection it holds (a failed statement or ping invalidates the
    pool), so only the requests already holding one fail."""

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_conn: DBAPIConnection | None, record: ConnectionPoolEntry) -> None:
        record.info["returned_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(
        dbapi_conn: DBAPIConnection, record: ConnectionPoolEntry, _proxy: PoolProxiedConnection
    ) -> None:
        returned_at = record.info.pop("returned_at", None)
        if returned_at is None or time.monotonic() - returned_at < PING_AFTER_IDLE_SECONDS:
            return
        try:
            alive = engine.dialect.do_ping(dbapi_conn)
        except engine.dialect.loaded_dbapi.Error as error:
            raise InvalidatePoolError(f"The pooled connection is closed: {error}") from error
        if not alive:
            raise InvalidatePoolError("The pooled connection is closed")


def _read_results_in_pipelines(engine: Engine) -> None:
    """In a pipelined write, a statement whose result may be read has it at once: SQLAlchemy
    reads the cursor's description as soon as the statement is sent."""

    @event.listens_for(engine, "after_cursor_execute")
    def _sent(
        conn: Connection, _cursor: Any, _sql: str, _params: Any, context: Any, _many: bool
    ) -> None:
        pipeline = conn.info.get(_PIPELINE)
        if pipeline is not None and not context.execution_options.get("result_unread"):
            pipeline.sync()


def results_now(session: Session) -> None:
    """Wait for the answers to everything sent so far, where a write is pipelined: for a
    driver-level statement whose row count is read."""
    pipeline = session.connection().info.get(_PIPELINE)
    if pipeline is not None:
        pipeline.sync()


def in_pipeline(session: Session) -> bool:
    """Whether the session writes in a pipeline, where COPY cannot run."""
    return _PIPELINE in session.connection().info


@contextmanager
def _pipelined_transaction(session: Session) -> Iterator[None]:
    """A transaction of our own BEGIN and COMMIT on a connection in autocommit mode, in one
    pipeline: psycopg would wait for the answer to its own BEGIN and COMMIT, where ours go with
    the statements beside them. BEGIN goes through SQLAlchemy, so that a connection the
    database closed meanwhile fails there as in any write, and the pool is dropped."""
    connection = session.connection()
    info = connection.info  # read now: once the connection is invalidated, reading it reconnects
    driver = connection.connection.driver_connection
    try:
        with driver.pipeline() as pipeline:
            info[_PIPELINE] = pipeline
            try:
                connection.exec_driver_sql("BEGIN", execution_options=RESULT_UNREAD)
                yield
                session.flush()
            finally:
                info.pop(_PIPELINE, None)
            driver.execute("COMMIT", prepare=False)  # answered as the pipeline ends
    except BaseException as error:
        try:
            driver.execute("ROLLBACK", prepare=False)  # ends what a failed statement left open
        except psycopg.Error:
            connection.invalidate()  # lost: it goes back to the pool closed, to be replaced
        if isinstance(error, psycopg.Error):  # raised as SQLAlchemy raises the driver's errors
            raise DBAPIError.instance(
                "COMMIT, or a statement sent before it unread", None, error, psycopg.Error
            ) from error
        raise


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy emits BEGIN itself, below
        cursor = dbapi_conn.cursor()
        for pragma in (
            "journal_mode=WAL",
            "foreign_keys=ON",
            "synchronous=NORMAL",
            "busy_timeout=60000",
        ):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()
        # SQLite's own lower() folds ASCII only; PostgreSQL's folds all of Unicode.
        dbapi_conn.create_function("lower", 1, _lower, deterministic=True)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get("sqlite_immediate", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


class Database:
    """An engine with its migrations applied, and transaction scopes for reading and writing."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        write_bind = self.engine.execution_options(sqlite_immediate=True)
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(write_bind, expire_on_commit=False)
        # SQLite has no round trips to save, and its BEGIN is ours (`_configure_sqlite`).
        autocommit_bind = (
            self.engine
            if self.is_sqlite
            else self.engine.execution_options(isolation_level="AUTOCOMMIT")
        )
        self._autocommit = sessionmaker(autocommit_bind, expire_on_commit=False)
        if migrate:
            self.migrate()

    def migrate(self) -> None:
        """Apply every head, one process at a time: servers started together on a new database
        would otherwise both create the same tables."""
        with self._migration_file_lock(), self.engine.begin() as conn:
            if not self.is_sqlite:
                # Held until this transaction ends, so the next process sees the tables made.
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
            config = Config()
            config.set_main_option("script_location", str(MIGRATIONS_DIR))
            config.attributes["connection"] = conn
            command.upgrade(config, "heads")

    @contextmanager
    def _migration_file_lock(self) -> Iterator[None]:
        database = make_url(self.url).database
        if not self.is_sqlite or not database or database == ":memory:":
            yield
            return
        with open(f"{database}.migrate.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextmanager
    def write(self, *, pipelined: bool = False) -> Iterator[Session]:
        """One write transaction: committed on success, rolled back on any error.

        `pipelined` (PostgreSQL), for writes of a few rows (in a pipeline rows go by INSERT, not
        by COPY): a statement run with `RESULT_UNREAD`, or a driver-level one whose result is not
        fetched, is sent with the next statement whose result is read, or with COMMIT, and its
        error is raised there, under that statement's name. A single Graph Mode edit waits for
        the database 3 times so, not 9; under load each wait is a wake-up of this thread and of
        a database backend, and each waits for a CPU. The session must not be committed,
        rolled back or closed inside.
        """
        if pipelined and PIPELINES and not self.is_sqlite:
            with self._autocommit() as session, _pipelined_transaction(session):
                yield session
            return
        with self._write() as session, session.begin():
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        with self._read() as session, session.begin():
            yield session

    @contextmanager
    def lookup(self) -> Iterator[Session]:
        """A read of one statement, outside a transaction: on PostgreSQL one round trip, not
        three (BEGIN, the statement, COMMIT). Only for reading: a write here would commit at
        once on PostgreSQL and be rolled back on SQLite. Two statements here would not see one
        snapshot: use `read` for them."""
        with self._autocommit() as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
