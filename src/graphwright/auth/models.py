"""The token table and the principal a valid token stands for."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from graphwright.db import Base, UtcDateTime


class AuthToken(Base):
    __tablename__ = "auth_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    conversation_id: Mapped[str | None] = mapped_column(String(200))
    label: Mapped[str | None] = mapped_column(String(200))  # the token's name
    # Why graphwright minted it for itself (None: a person's token); `token list` hides these.
    purpose: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


@dataclass(frozen=True)
class Principal:
    """Who is calling: a token id and name, and the one conversation it may touch (None: any)."""

    token_id: int
    conversation_id: str | None
    label: str | None

    @property
    def actor(self) -> str:
        """Who acted, as recorded in histories and publications."""
        return self.label or f"token:{self.token_id}"

    @property
    def shown_as(self) -> str:
        """Who is signed in, in words: the token's name."""
        return self.label or f"unnamed token {self.token_id}"


@dataclass(frozen=True)
class TokenInfo:
    """What `token list` shows of a token: never the token itself."""

    id: int
    label: str | None
    conversation_id: str | None
    created_at: datetime
    expires_at: datetime | None
    revoked: bool
    purpose: str | None  # None: a person's token; else why graphwright minted it

    @property
    def internal(self) -> bool:
        return self.purpose is not None

    def state(self, now: datetime) -> str:
        if self.revoked:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"
