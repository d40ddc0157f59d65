"""Chat tables (conversations, messages, tool calls) and the API's request and response shapes.

Artifacts are not here: they are stored by the artifacts room, keyed by conversation, and a
message lists the artifact versions it showed.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool
from pydantic.alias_generators import to_camel
from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from graphwright.db import Base, UtcDateTime

TZ = UtcDateTime()
CONVERSATION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$"


class Mode(enum.StrEnum):
    NORMAL = "normal"
    GRAPH = "graph_mode"


class MessageStatus(enum.StrEnum):
    COMPLETE = "complete"
    CANCELLED = "cancelled"
    FAILED = "failed"


class Conversation(Base):
    __tablename__ = "chat_conversations"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    title: Mapped[str | None] = mapped_column(String(500))
    mode: Mapped[str] = mapped_column(String(20), default=Mode.NORMAL.value)
    # The knowledge-graph artifact version that last seeded the Graph Mode graph.
    graph_seed: Mapped[dict[str, Any] | None]
    created_at: Mapped[datetime] = mapped_column(TZ)
    updated_at: Mapped[datetime] = mapped_column(TZ, index=True)


class Message(Base):
    __tablename__ = "chat_messages"
    __table_args__ = (UniqueConstraint("conversation_id", "seq"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("chat_conversations.id", ondelete="CASCADE")
    )
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(20))
    content: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default=MessageStatus.COMPLETE.value)
    artifacts: Mapped[list[Any]]  # [{artifactId, version}] shown with the message, in order
    graph_version: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(TZ)


class ToolCallRecord(Base):
    __tablename__ = "chat_tool_calls"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    message_id: Mapped[str] = mapped_column(
        ForeignKey("chat_messages.id", ondelete="CASCADE"), index=True
    )
    call_id: Mapped[str] = mapped_column(String(200))
    step: Mapped[int] = mapped_column(Integer)
    server: Mapped[str] = mapped_column(String(200))
    tool: Mapped[str] = mapped_column(String(200))
    arguments: Mapped[dict[str, Any]]
    result_text: Mapped[str] = mapped_column(Text)
    is_error: Mapped[bool] = mapped_column(Boolean)
    duration_ms: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(TZ)


class Schema(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ChatRequest(Schema):
    conversation_id: str | None = Field(default=None, pattern=CONVERSATION_ID_PATTERN)
    message: str = Field(min_length=1, max_length=100_000)
    mode: Mode | None = None
    stream: StrictBool = True  # `0` or `"no"` is a mistake to name, not a false
    domain_tags: list[str] = Field(
        default_factory=list,
        max_length=10,
        description="Knowledge-miner domain tags; the message is sent as `#tag ...` then text",
    )


class ConversationCreate(Schema):
    id: str | None = Field(default=None, pattern=CONVERSATION_ID_PATTERN)
    title: str | None = Field(default=None, max_length=500)
    mode: Mode = Mode.NORMAL


class ConversationPatch(Schema):
    title: str | None = Field(default=None, max_length=500)
    mode: Mode | None = None
