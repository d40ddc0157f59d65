"""Round trips to PostgreSQL per request: each one is a wake-up of the server's thread and of a
database backend, and under load every wake-up waits for a CPU (benchmarks/load_bench.py). The
libpq trace of each checked-out connection counts them (each time the client, having sent, waits
for the server), and a connection pinged on checkout makes one more."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg
import pytest
from sqlalchemy import event

from graphwright import db
from graphwright.auth.service import AuthService
from graphwright.db import Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.schemas import NodeInput, NodePatch
from graphwright.graphmode.service import GraphService


@pytest.fixture
def postgres(database: Database) -> Database:
    if database.is_sqlite:
        pytest.skip("SQLite has no round trips")
    return database


@contextmanager
def round_trips(database: Database) -> Iterator[list[int]]:
    """The round trips of every connection checked out meanwhile, counted when it is over."""
    counted: list[int] = []
    traced: list[tuple[Any, Any]] = []
    with ExitStack() as files:

        def trace(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
            handle = files.enter_context(tempfile.TemporaryFile("w+"))
            dbapi_connection.pgconn.trace(handle.fileno())
            dbapi_connection.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
            traced.append((dbapi_connection, handle))

        event.listen(database.engine, "checkout", trace)
        try:
            yield counted
        finally:
            event.remove(database.engine, "checkout", trace)
            for dbapi_connection, handle in traced:
                dbapi_connection.pgconn.untrace()  # flushes the trace
                os.lseek(handle.fileno(), 0, os.SEEK_SET)
                counted.append(_turnarounds(handle.read()))


def _turnarounds(trace: str) -> int:
    """How many times the client sent and then waited for the server. (A pipeline of many
    statements reads answers while it still sends, and would count more than one: the tests
    below pipeline a few short ones.)"""
    count, previous = 0, ""
    for line in trace.splitlines():
        direction = line.split("\t", 1)[0]
        if previous == "F" and direction == "B":
            count += 1
        previous = direction
    return count


@pytest.fixture
def pings(postgres: Database, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The connections pinged on checkout; none is idle long enough to need one unless a test
    says so (a slow machine may pause for seconds between two steps)."""
    monkeypatch.setattr(db, "PING_AFTER_IDLE_SECONDS", math.inf)
    pinged: list[object] = []
    dialect = postgres.engine.dialect
    real = dialect.do_ping

    def counting(dbapi_connection: Any) -> bool:
        pinged.append(dbapi_connection)
        return real(dbapi_connection)

    monkeypatch.setattr(dialect, "do_ping", counting)
    return pinged


def test_a_token_check_is_one_round_trip(postgres: Database, pings: list[object]) -> None:
    auth = AuthService(postgres)
    token = auth.mint(label="tester")
    auth.authenticate(token)  # a connection in the pool, as a running server has
    pings.clear()
    with round_trips(postgres) as counted:
        auth.authenticate(token)
    assert (sum(counted), len(pings)) == (1, 0)


def test_adding_a_node_takes_three_round_trips(postgres: Database, pings: list[object]) -> None:
    """Pipelined: BEGIN and lock the graph; read the node; insert it, record the change with the
    redo branch it drops, set the version, notify listeners and COMMIT."""
    graphs = GraphService(postgres, create_graph_events(postgres))
    node = NodeInput(id="n:0", label="TP53", type="biolink:Gene")
    graphs.add_node("c1", node, actor="tester")
    pings.clear()
    with round_trips(postgres) as counted:
        graphs.add_node("c1", node.model_copy(update={"id": "n:1"}), actor="tester")
    assert (sum(counted), len(pings)) == (3, 0)


def test_updating_a_node_takes_four_round_trips(postgres: Database, pings: list[object]) -> None:
    """Pipelined: BEGIN and lock the graph; read the node; update it (its count is checked);
    record the change, named from the row the plan read, with the rest and COMMIT."""
    graphs = GraphService(postgres, create_graph_events(postgres))
    graphs.add_node("c1", NodeInput(id="n:0", label="TP53", type="biolink:Gene"), actor="tester")
    pings.clear()
    with round_trips(postgres) as counted:
        graphs.update_node("c1", "n:0", NodePatch(label="p53"), actor="tester")
    assert (sum(counted), len(pings)) == (4, 0)
    (newest,) = graphs.history("c1", offset=0, limit=1).items
    assert newest.description == "changed node p53 (Gene)"


def test_a_connection_idle_for_a_while_is_pinged_and_replaced_when_closed(
    postgres: Database, pings: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `pool_pre_ping` gave on every checkout, kept for the checkouts that need it: the
    server may have closed a connection that sat in the pool (a restart, an idle timeout)."""
    auth = AuthService(postgres)
    token = auth.mint(label="tester")
    first = postgres.engine.connect()
    backend = first.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
    closed = first.connection.dbapi_connection
    with postgres.engine.connect() as second:
        first.close()  # back in the pool, first in line for the next checkout
        second.exec_driver_sql(f"SELECT pg_terminate_backend({int(backend)})")
    monkeypatch.setattr(db, "PING_AFTER_IDLE_SECONDS", 0.0)
    pings.clear()
    assert auth.authenticate(token).label == "tester"
    assert pings[0] is closed  # found closed by its ping, and another connection used
