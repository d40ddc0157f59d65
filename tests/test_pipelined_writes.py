"""A pipelined write (`Database.write(pipelined=True)`) sends the statements whose results nobody
reads with the next one whose result is read, or with COMMIT. It must stay one transaction: all
of it stored, or, whatever fails and wherever, none of it, with the connection fit for the next
request. SQLite runs the same writes unpipelined, and both backends answer alike."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, func, insert, select, text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from graphwright import db
from graphwright.db import RESULT_UNREAD, Database
from graphwright.graphmode.events import create_graph_events
from graphwright.graphmode.models import projects
from graphwright.graphmode.schemas import EdgeInput, NodeInput
from graphwright.graphmode.service import GraphService

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def _add_project(session: Session, conversation_id: str) -> None:
    session.execute(
        insert(projects).inline(),
        [{"conversation_id": conversation_id, "version": 0, "created_at": NOW, "updated_at": NOW}],
        execution_options=RESULT_UNREAD,
    )


def _stored(database: Database) -> list[str]:
    with database.read() as session:
        return list(session.scalars(select(projects.c.conversation_id).order_by("id")))


def test_what_a_pipelined_write_sends_unread_is_committed_and_read_back(
    database: Database,
) -> None:
    with database.write(pipelined=True) as session:
        _add_project(session, "a")
        _add_project(session, "b")
        # A statement whose result is read sees what was sent before it.
        assert session.scalar(select(func.count()).select_from(projects)) == 2
        _add_project(session, "c")
    assert _stored(database) == ["a", "b", "c"]


def test_an_error_in_the_write_leaves_nothing_of_it(database: Database) -> None:
    with (
        pytest.raises(ValueError, match="planned failure"),
        database.write(pipelined=True) as session,
    ):
        _add_project(session, "a")
        raise ValueError("planned failure")
    assert _stored(database) == []
    with database.write(pipelined=True) as session:  # the connection serves the next write
        _add_project(session, "b")
    assert _stored(database) == ["b"]


def test_a_failing_unread_statement_fails_the_write_and_leaves_nothing_of_it(
    database: Database,
) -> None:
    """Its error comes when the pipeline is synced, as the same IntegrityError SQLite raises
    at once."""
    with database.write() as session:
        _add_project(session, "taken")
    with pytest.raises(IntegrityError), database.write(pipelined=True) as session:
        _add_project(session, "new")
        _add_project(session, "taken")
    assert _stored(database) == ["taken"]
    with database.write(pipelined=True) as session:
        _add_project(session, "after")
    assert _stored(database) == ["taken", "after"]


def test_a_single_edit_over_many_rows_is_written_whole_and_undone_whole(
    database: Database,
) -> None:
    """Removing a hub deletes it and its 150 edges in one pipelined write; undo puts every one
    back."""
    graphs = GraphService(database, create_graph_events(database))
    spokes = [NodeInput(id=f"s:{i}", label=f"spoke {i}", type="biolink:Gene") for i in range(150)]
    graphs.add_nodes(
        "c", [NodeInput(id="hub", label="hub", type="biolink:Gene"), *spokes], actor="t"
    )
    graphs.add_edges("c", [EdgeInput(source="hub", target=s.id) for s in spokes], actor="t")
    before = graphs.state("c")
    removal, _ = graphs.remove_node("c", "hub", actor="t")
    assert (removal.node_ids, removal.edge_count) == (["hub"], 150)
    after = graphs.state("c")
    assert (len(after.nodes), len(after.edges)) == (150, 0)
    graphs.undo("c", actor="t")
    restored = graphs.state("c")
    assert (restored.nodes, restored.edges) == (before.nodes, before.edges)


@pytest.fixture
def postgres(database: Database) -> Database:
    if database.is_sqlite:
        pytest.skip("SQLite writes are not pipelined")
    return database


def _terminate(database: Database, backend: int) -> None:
    """Close a backend's connection from the database's side, from outside the pool."""
    outside = create_engine(database.url, poolclass=NullPool)
    with outside.connect() as other:
        other.exec_driver_sql(f"SELECT pg_terminate_backend({int(backend)})")
    outside.dispose()


def test_a_connection_lost_inside_the_write_fails_it_as_lost_and_stores_nothing(
    postgres: Database,
) -> None:
    with pytest.raises(OperationalError) as raised, postgres.write(pipelined=True) as session:
        _add_project(session, "a")
        _terminate(postgres, session.scalar(text("SELECT pg_backend_pid()")))
        session.scalar(select(func.count()).select_from(projects))
    assert raised.value.connection_invalidated
    assert _stored(postgres) == []
    with postgres.write(pipelined=True) as session:
        _add_project(session, "after")
    assert _stored(postgres) == ["after"]


def test_after_the_database_closed_every_pooled_connection_one_write_fails_not_each(
    postgres: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As with unpipelined writes: the first write finds its connection closed, and the pool is
    dropped, so the next ones connect afresh (no ping: the connections were used just now)."""
    monkeypatch.setattr(db, "PING_AFTER_IDLE_SECONDS", math.inf)
    pooled = [postgres.engine.connect() for _ in range(3)]
    backends = [c.exec_driver_sql("SELECT pg_backend_pid()").scalar_one() for c in pooled]
    for connection in pooled:
        connection.close()
    for backend in backends:
        _terminate(postgres, backend)
    outcomes = []
    for name in ("first", "second", "third"):
        try:
            with postgres.write(pipelined=True) as session:
                _add_project(session, name)
            outcomes.append("stored")
        except OperationalError:
            outcomes.append("failed")
    assert outcomes == ["failed", "stored", "stored"]
    assert _stored(postgres) == ["second", "third"]
