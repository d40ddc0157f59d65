"""SQL for publication requests."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from graphwright.knowledge.models import PublicationRequest, RequestStatus


class RequestRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, request: PublicationRequest) -> PublicationRequest:
        self.session.add(request)
        self.session.flush()
        return request

    def get(self, request_id: str, *, for_update: bool = False) -> PublicationRequest | None:
        query = select(PublicationRequest).where(PublicationRequest.id == request_id)
        if for_update:
            query = query.with_for_update()
        return self.session.scalar(query)

    def page(
        self,
        *,
        status: str | None,
        conversation_id: str | None,
        offset: int,
        limit: int,
    ) -> tuple[list[PublicationRequest], int]:
        query = select(PublicationRequest)
        if status:
            query = query.where(PublicationRequest.status == status)
        if conversation_id:
            query = query.where(PublicationRequest.conversation_id == conversation_id)
        total = self.session.scalar(select(func.count()).select_from(query.subquery())) or 0
        rows = self.session.scalars(
            query.order_by(PublicationRequest.created_at.desc(), PublicationRequest.id)
            .offset(offset)
            .limit(limit)
        )
        return list(rows), total

    def with_status(self, status: str) -> list[PublicationRequest]:
        return list(
            self.session.scalars(
                select(PublicationRequest).where(PublicationRequest.status == status)
            )
        )

    def sample(self, status: str, *, for_update: bool = False) -> list[PublicationRequest]:
        """The sample data's requests in `status`, oldest first."""
        query = (
            select(PublicationRequest)
            .where(PublicationRequest.synthetic.is_(True), PublicationRequest.status == status)
            .order_by(PublicationRequest.collection_number, PublicationRequest.id)
        )
        if for_update:
            query = query.with_for_update()
        return list(self.session.scalars(query))

    def sample_removed(self) -> bool:
        """Whether a person removed the sample data (or began to)."""
        removed = (RequestStatus.REMOVING, RequestStatus.REMOVED)
        query = select(PublicationRequest.id).where(
            PublicationRequest.synthetic.is_(True), PublicationRequest.status.in_(removed)
        )
        return self.session.scalar(query.limit(1)) is not None

    def highest_collection_number(self) -> int:
        return self.session.scalar(select(func.max(PublicationRequest.collection_number))) or 0

    def by_ual(self, ual: str) -> PublicationRequest | None:
        return self.session.scalar(select(PublicationRequest).where(PublicationRequest.ual == ual))
