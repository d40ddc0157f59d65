"""The miner room's table: one row per knowledge-miner run, with what waits for a person.

The agent's own state (messages, todos, files) lives in the LangGraph checkpointer under the
run's thread; this row is what the API, the UI and approvals read.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from graphwright.db import Base, UtcDateTime


class RunStatus(enum.StrEnum):
    RUNNING = "running"
    WAITING = "waiting"  # stopped at an action that needs a person's decision
    DONE = "done"
    FAILED = "failed"


class MinerRun(Base):
    __tablename__ = "miner_runs"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    thread_id: Mapped[str] = mapped_column(String(700), index=True)
    status: Mapped[str] = mapped_column(String(20), index=True)
    query: Mapped[str] = mapped_column(Text)
    domain_tags: Mapped[list[Any]]
    max_iterations: Mapped[int] = mapped_column(Integer)
    requested_by: Mapped[str] = mapped_column(String(200))
    # Who the rate limit counts the run against: the token (or `local` over stdio).
    caller: Mapped[str] = mapped_column(String(200), index=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())
    # Seed 001's output JSON as it stands (partial while the run waits).
    result: Mapped[dict[str, Any] | None]
    # Actions waiting for a decision: [{id, name, args, description, allowedDecisions}].
    pending: Mapped[list[Any]]
    # Every decision taken: [{actionId, name, type, by, at, message?, args?, outcome?}].
    decisions: Mapped[list[Any]]
    # What the progress tracker needs to go on after a resume (todos, subagents, memory writes).
    workspace: Mapped[dict[str, Any] | None]
    # Progress events so far, for a stream that starts after they happened.
    events: Mapped[list[Any]]
    error: Mapped[str | None] = mapped_column(Text)
