"""The knowledge room's table: publication requests, which a person approves or rejects.

Nothing reaches the knowledge base without one. A request also keeps the private triples of
what it published: they never enter the triple store, so no SPARQL query can return them.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from graphwright.db import Base, JSONType, UtcDateTime


class RequestStatus(enum.StrEnum):
    PENDING = "pending"
    PUBLISHING = "publishing"  # approved; the knowledge base is being written
    PUBLISHED = "published"
    REJECTED = "rejected"
    FAILED = "failed"  # the knowledge base refused or failed; it can be approved again
    # Sample data a person removed: the row stays, so that its collection number is never
    # given again and the sample data is not loaded again.
    REMOVING = "removing"  # marked for removal; the knowledge base is being written
    REMOVED = "removed"


class PublicationRequest(Base):
    __tablename__ = "knowledge_requests"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    status: Mapped[str] = mapped_column(String(20), index=True)
    title: Mapped[str] = mapped_column(String(500))
    content: Mapped[Any] = mapped_column(JSONType, nullable=False)
    revision_of: Mapped[str | None] = mapped_column(String(300))
    source: Mapped[str | None] = mapped_column(String(200))
    conversation_id: Mapped[str | None] = mapped_column(String(200), index=True)
    requested_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
    decided_by: Mapped[str | None] = mapped_column(String(200))
    decided_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    reason: Mapped[str | None] = mapped_column(Text)
    ual: Mapped[str | None] = mapped_column(String(300), index=True)
    # Allocated here, in one SQL transaction, so that servers sharing a store never collide.
    collection_number: Mapped[int | None] = mapped_column(Integer, unique=True)
    private_triples: Mapped[dict[str, Any] | None]
    synthetic: Mapped[bool] = mapped_column(Boolean, default=False)
    # What the request's source recorded beside the content, never published: for a
    # knowledge-miner candidate, its run, checks, confidence, linked assets and provenance.
    details: Mapped[dict[str, Any] | None]
    # The canonical hash of the content as its source validated it: approval publishes that
    # content or refuses (see KnowledgeService.approve).
    validated_hash: Mapped[str | None] = mapped_column(String(64))
