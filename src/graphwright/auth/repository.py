"""SQL for tokens."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, and_, delete, func, select, update
from sqlalchemy.orm import Session

from graphwright.auth.checked import REVOCATIONS, revocation_notice
from graphwright.auth.models import AuthToken


class TokenRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, token: AuthToken) -> AuthToken:
        self.session.add(token)
        self.session.flush()
        return token

    def by_hash(self, token_hash: str) -> AuthToken | None:
        return self.session.scalar(select(AuthToken).where(AuthToken.token_hash == token_hash))

    def all(self) -> list[AuthToken]:
        return list(self.session.scalars(select(AuthToken).order_by(AuthToken.id.desc())))

    def revoke(self, token_id: int, when: datetime) -> list[str]:
        return self._revoke(AuthToken.id == token_id, when)

    def delete_expired(self, now: datetime) -> int:
        result = self.session.execute(
            delete(AuthToken).where(AuthToken.expires_at.is_not(None), AuthToken.expires_at <= now)
        )
        return int(result.rowcount)  # type: ignore[attr-defined]

    def revoke_named(self, label: str, purpose: str, when: datetime) -> list[str]:
        return self._revoke(and_(AuthToken.label == label, AuthToken.purpose == purpose), when)

    def revoke_by_hash(self, token_hash: str, when: datetime) -> list[str]:
        return self._revoke(AuthToken.token_hash == token_hash, when)

    def _revoke(self, which: ColumnElement[bool], when: datetime) -> list[str]:
        """Revoke the tokens `which` picks that are not yet; their hashes. On PostgreSQL every
        server hears of them when the transaction commits, and forgets them if it kept them."""
        revoked = list(
            self.session.scalars(
                update(AuthToken)
                .where(which, AuthToken.revoked_at.is_(None))
                .values(revoked_at=when)
                .returning(AuthToken.token_hash)
            )
        )
        if revoked and self.session.get_bind().dialect.name == "postgresql":
            self.session.execute(select(func.pg_notify(REVOCATIONS, revocation_notice(revoked))))
        return revoked
