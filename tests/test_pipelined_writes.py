"""A pipelined write (`Database.write(pipelined=True)`) sends the statements whose results nobody
reads with the next one whose result is read, or with COMMIT. It must stay one transaction: all
of it stored, or, whatever fails and wherever, none of it, with the connection fit for the next
request. SQLite runs the same writes unpipelined, and both backends answer alike."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from graphwright.db import RESULT_UNREAD, Database
from graphwright.graphmode.models import projects

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def _add_project(session: object, conversation_id: str) -> None:
    session.execute(  # type: ignore[attr-defined]
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
    with pytest.raises(ValueError, match="planned failure"):
        with database.write(pipelined=True) as session:
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
    with pytest.raises(IntegrityError):
        with database.write(pipelined=True) as session:
            _add_project(session, "new")
            _add_project(session, "taken")
    assert _stored(database) == ["taken"]
    with database.write(pipelined=True) as session:
        _add_project(session, "after")
    assert _stored(database) == ["taken", "after"]
