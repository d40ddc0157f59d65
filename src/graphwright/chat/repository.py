"""SQL for conversations, messages and tool calls."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session

from graphwright.chat.models import Conversation, Message, ToolCallRecord


class ChatRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def conversation(self, conversation_id: str) -> Conversation | None:
        return self.session.get(Conversation, conversation_id)

    def add(self, row: Conversation | Message | ToolCallRecord) -> None:
        self.session.add(row)
        self.session.flush()

    def add_all(self, rows: Sequence[Message | ToolCallRecord]) -> None:
        self.session.add_all(rows)
        self.session.flush()

    def touch(self, conversation_id: str, when: datetime) -> None:
        self.session.execute(
            update(Conversation).where(Conversation.id == conversation_id).values(updated_at=when)
        )

    def conversations(
        self, *, limit: int, offset: int, only: str | None = None, text: str | None = None
    ) -> list[Conversation]:
        query = select(Conversation).order_by(Conversation.updated_at.desc(), Conversation.id)
        if only is not None:
            query = query.where(Conversation.id == only)
        if text:
            pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            query = query.where(
                or_(
                    Conversation.title.ilike(pattern, escape="\\"),
                    Conversation.id.ilike(pattern, escape="\\"),
                )
            )
        return list(self.session.scalars(query.limit(limit).offset(offset)))

    def existing_ids(self, conversation_ids: Sequence[str]) -> set[str]:
        query = select(Conversation.id).where(Conversation.id.in_(conversation_ids))
        return set(self.session.scalars(query))

    def delete_conversation(self, conversation_id: str) -> bool:
        """Delete the conversation with its messages and tool calls; whether it existed."""
        result = self.session.execute(
            delete(Conversation).where(Conversation.id == conversation_id)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def next_seq(self, conversation_id: str) -> int:
        last = self.session.scalar(
            select(func.max(Message.seq)).where(Message.conversation_id == conversation_id)
        )
        return 0 if last is None else last + 1

    def messages(self, conversation_id: str, *, last: int | None = None) -> list[Message]:
        query = select(Message).where(Message.conversation_id == conversation_id)
        if last is None:
            return list(self.session.scalars(query.order_by(Message.seq)))
        newest = list(self.session.scalars(query.order_by(Message.seq.desc()).limit(last)))
        return newest[::-1]

    def tool_calls(self, message_ids: Sequence[str]) -> list[ToolCallRecord]:
        if not message_ids:
            return []
        query = (
            select(ToolCallRecord)
            .where(ToolCallRecord.message_id.in_(message_ids))
            .order_by(ToolCallRecord.id)
        )
        return list(self.session.scalars(query))

    def calls_with_turns(
        self, conversation_id: str, call_ids: Sequence[str]
    ) -> list[tuple[ToolCallRecord, int]]:
        """These tool calls of the conversation, each with the seq of the message that holds
        it."""
        if not call_ids:
            return []
        query = (
            select(ToolCallRecord, Message.seq)
            .join(Message, ToolCallRecord.message_id == Message.id)
            .where(Message.conversation_id == conversation_id)
            .where(ToolCallRecord.call_id.in_(call_ids))
        )
        return [(call, seq) for call, seq in self.session.execute(query)]

    def user_messages(self, conversation_id: str, before_seq: int) -> list[tuple[int, str]]:
        """(seq, content) of the person's messages up to `before_seq`, in order."""
        query = (
            select(Message.seq, Message.content)
            .where(Message.conversation_id == conversation_id)
            .where(Message.role == "user", Message.seq < before_seq)
            .order_by(Message.seq)
        )
        return [(seq, content) for seq, content in self.session.execute(query)]
