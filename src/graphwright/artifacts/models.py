"""Artifact tables and the pydantic schemas the service returns.

An artifact's content is a run of chunk rows. Appending adds rows; replacing marks the live rows
of the replaced kinds dropped at the new version. Reading folds the live rows, so an append costs
O(chunk), and any past version can still be read back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from graphwright.artifacts.events import Operation
from graphwright.core.artifacts import A2AModel, Artifact, Part
from graphwright.db import Base, JSONType, UtcDateTime

ID_LENGTH = 200
# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL wants the wider type.
AutoId = BigInteger().with_variant(Integer(), "sqlite")


def utcnow() -> datetime:
    return datetime.now(UTC)


class ArtifactContextRow(Base):
    """The event sequence counter of one context (conversation)."""

    __tablename__ = "artifact_contexts"

    context_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    last_sequence: Mapped[int] = mapped_column(BigInteger, default=0)


class ArtifactRow(Base):
    __tablename__ = "artifacts"

    artifact_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    context_id: Mapped[str] = mapped_column(String(ID_LENGTH), index=True)
    task_id: Mapped[str | None] = mapped_column(String(ID_LENGTH), index=True)
    media_type: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    name: Mapped[str | None] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONType)
    extensions: Mapped[list[Any] | None] = mapped_column(JSONType)
    version: Mapped[int] = mapped_column(Integer)
    closed: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class ArtifactChunkRow(Base):
    __tablename__ = "artifact_chunks"
    __table_args__ = (Index("ix_artifact_chunks_artifact_id_id", "artifact_id", "id"),)

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    artifact_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("artifacts.artifact_id", ondelete="CASCADE")
    )
    added_version: Mapped[int] = mapped_column(Integer)
    dropped_version: Mapped[int | None] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(8))
    joins: Mapped[bool] = mapped_column(Boolean, default=False)
    part: Mapped[dict[str, Any]] = mapped_column(JSONType)


class ArtifactVersionRow(Base):
    __tablename__ = "artifact_versions"

    artifact_id: Mapped[str] = mapped_column(
        String(ID_LENGTH),
        ForeignKey("artifacts.artifact_id", ondelete="CASCADE"),
        primary_key=True,
    )
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    sequence: Mapped[int] = mapped_column(BigInteger)
    operation: Mapped[str] = mapped_column(String(16))
    last_chunk: Mapped[bool] = mapped_column(Boolean, default=False)
    name: Mapped[str | None] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONType)
    extensions: Mapped[list[Any] | None] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class ArtifactEventRow(Base):
    """The event log of a context; it outlives deleted artifacts, like any log."""

    __tablename__ = "artifact_events"

    context_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    sequence: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    artifact_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class StoredArtifact(A2AModel):
    """An artifact with where it belongs and its state in the store."""

    artifact: Artifact
    context_id: str
    task_id: str | None = None
    version: int
    closed: bool
    updated_at: datetime


class ArtifactSummary(A2AModel):
    """What a listing shows: no content, so a listing stays small."""

    artifact_id: str
    name: str | None = None
    description: str | None = None
    media_type: str | None = None
    context_id: str
    task_id: str | None = None
    version: int
    closed: bool
    updated_at: datetime


class ArtifactVersion(A2AModel):
    version: int
    sequence: int
    operation: Operation
    last_chunk: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Header:
    """An artifact's row without its content."""

    artifact_id: str
    context_id: str
    task_id: str | None
    media_type: str | None
    name: str | None
    description: str | None
    metadata: dict[str, Any] | None
    extensions: list[str] | None
    version: int
    closed: bool
    updated_at: datetime

    def summary(self) -> ArtifactSummary:
        return ArtifactSummary(
            artifact_id=self.artifact_id,
            name=self.name,
            description=self.description,
            media_type=self.media_type,
            context_id=self.context_id,
            task_id=self.task_id,
            version=self.version,
            closed=self.closed,
            updated_at=self.updated_at,
        )

    def artifact(self, parts: list[Part]) -> Artifact:
        return Artifact(
            artifact_id=self.artifact_id,
            name=self.name,
            description=self.description,
            parts=parts,
            metadata=self.metadata,
            extensions=self.extensions,
        )


@dataclass(frozen=True, slots=True)
class VersionRecord:
    version: int
    sequence: int
    operation: Operation
    last_chunk: bool
    name: str | None
    description: str | None
    metadata: dict[str, Any] | None
    extensions: list[str] | None
    created_at: datetime

    def public(self) -> ArtifactVersion:
        return ArtifactVersion(
            version=self.version,
            sequence=self.sequence,
            operation=self.operation,
            last_chunk=self.last_chunk,
            created_at=self.created_at,
        )
