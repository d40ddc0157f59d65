"""The A2A task table: a2a-sdk's own columns (its `TaskMixin`), in graphwright's database.

A task's `context_id` is a conversation id, which may be up to 200 characters, so the column is
wider than the SDK's 36. The table is created by the room's Alembic migration (`a2a_0001`), not by
the SDK at first use.
"""

from __future__ import annotations

from a2a.server.models import TaskMixin
from sqlalchemy import Index, String
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column

TASK_TABLE = "a2a_tasks"


class TaskBase(DeclarativeBase):
    """Kept apart from graphwright's `Base`: the SDK's column types, not ours, and one table."""


class A2ATask(TaskMixin, TaskBase):
    __tablename__ = TASK_TABLE

    context_id: Mapped[str] = mapped_column(String(200), nullable=False)

    @declared_attr.directive
    @classmethod
    def __table_args__(cls) -> tuple[Index, ...]:
        return (
            Index(f"idx_{TASK_TABLE}_owner_last_updated", "owner", "last_updated"),
            Index(f"idx_{TASK_TABLE}_context_id", "context_id"),
        )
