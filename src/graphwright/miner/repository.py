"""SQL for miner runs."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from graphwright.errors import NotFound
from graphwright.miner.models import MinerRun, RunStatus

ACTIVE = (RunStatus.RUNNING, RunStatus.WAITING)


class RunRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, run: MinerRun) -> MinerRun:
        self.session.add(run)
        self.session.flush()
        return run

    def get(self, run_id: str, *, for_update: bool = False) -> MinerRun | None:
        query = select(MinerRun).where(MinerRun.id == run_id)
        if for_update:
            query = query.with_for_update()
        return self.session.scalar(query)

    def required(self, run_id: str, *, for_update: bool = False) -> MinerRun:
        """The run, or NotFound."""
        row = self.get(run_id, for_update=for_update)
        if row is None:
            raise NotFound(f"No miner run {run_id}")
        return row

    def active_on(self, thread_id: str) -> MinerRun | None:
        """The run that holds a thread (running or waiting), if any."""
        return self.session.scalar(
            select(MinerRun)
            .where(MinerRun.thread_id == thread_id, MinerRun.status.in_(ACTIVE))
            .order_by(MinerRun.created_at.desc())
            .limit(1)
        )

    def page(self, *, status: str | None, offset: int, limit: int) -> tuple[list[MinerRun], int]:
        query = select(MinerRun)
        if status:
            query = query.where(MinerRun.status == status)
        total = self.session.scalar(select(func.count()).select_from(query.subquery())) or 0
        rows = self.session.scalars(
            query.order_by(MinerRun.created_at.desc(), MinerRun.id).offset(offset).limit(limit)
        )
        return list(rows), total

    def started_since(self, caller: str, since: datetime) -> list[datetime]:
        """When `caller`'s runs since `since` started, oldest first (for the rate limit)."""
        return list(
            self.session.scalars(
                select(MinerRun.created_at)
                .where(MinerRun.caller == caller, MinerRun.created_at >= since)
                .order_by(MinerRun.created_at)
            )
        )
