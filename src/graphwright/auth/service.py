"""Minting and checking bearer tokens. Only the SHA-256 of a token is stored."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from graphwright.auth.models import AuthToken, Principal, TokenInfo
from graphwright.auth.repository import TokenRepository
from graphwright.db import Database
from graphwright.errors import Forbidden, InvalidInput, NotFound, Unauthorized

TOKEN_PREFIX = "gw_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def person(principal: Principal, doing: str) -> str:
    """The actor, when `principal` may act for a person on what everyone reads (publishing):
    a token scoped to one conversation (the kind the chat hands the model's tools) may not."""
    if principal.conversation_id is not None:
        raise Forbidden(
            f"{doing} needs an unscoped token: this one is limited to conversation "
            f"'{principal.conversation_id}'"
        )
    return principal.actor


class AuthService:
    def __init__(self, db: Database, *, where: str | None = None) -> None:
        self._db = db
        self._where = where  # named when a token is unknown: a token made for another home

    def mint(
        self,
        *,
        conversation_id: str | None = None,
        ttl: timedelta | None = None,
        label: str | None = None,
        purpose: str | None = None,
    ) -> str:
        """A new token (returned once, never stored in clear), optionally scoped and expiring.
        `purpose` marks a token graphwright mints for itself: it says why, and why it needs no
        expiry when it has none."""
        if ttl is not None and ttl <= timedelta(0):
            raise InvalidInput("A token's time to live must be positive")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = datetime.now(UTC)
        with self._db.write() as session:
            tokens = TokenRepository(session)
            # The chat mints a short-lived token per Graph Mode turn: drop the expired ones.
            tokens.delete_expired(now)
            tokens.add(
                AuthToken(
                    token_hash=hash_token(token),
                    conversation_id=conversation_id,
                    label=label,
                    purpose=purpose,
                    created_at=now,
                    expires_at=now + ttl if ttl else None,
                )
            )
        return token

    def authenticate(self, token: str | None) -> Principal:
        if not token:
            raise Unauthorized("A bearer token is required: send 'Authorization: Bearer <token>'")
        with self._db.lookup() as session:  # every request checks its token: one round trip
            row = TokenRepository(session).by_hash(hash_token(token))
            if row is None:
                place = f" in {self._where}" if self._where else ""
                raise Unauthorized(
                    f"The bearer token is not valid: no such token{place}; mint one with "
                    "`graphwright token create` using the same GRAPHWRIGHT_HOME"
                )
            if row.revoked_at is not None:
                raise Unauthorized("The bearer token is not valid: it was revoked")
            if row.expires_at is not None and row.expires_at <= datetime.now(UTC):
                raise Unauthorized("The bearer token has expired; mint a new one")
            return Principal(token_id=row.id, conversation_id=row.conversation_id, label=row.label)

    @staticmethod
    def authorize(principal: Principal, conversation_id: str) -> None:
        if principal.conversation_id is not None and principal.conversation_id != conversation_id:
            raise Forbidden(
                f"This token is limited to conversation '{principal.conversation_id}' "
                f"and cannot access conversation '{conversation_id}'"
            )

    def revoke_named(self, label: str, *, purpose: str) -> None:
        """Revoke every active token of this name and purpose (one a stopped process left)."""
        with self._db.write() as session:
            TokenRepository(session).revoke_named(label, purpose, datetime.now(UTC))

    def revoke_token(self, token: str) -> None:
        """Revoke a token by its value; an unknown or already revoked token is left as it is."""
        with self._db.write() as session:
            TokenRepository(session).revoke_by_hash(hash_token(token), datetime.now(UTC))

    def list_tokens(self, *, everything: bool = False) -> list[TokenInfo]:
        """The active tokens people made, newest first (never the token itself); with
        `everything`, also the revoked and expired ones and those graphwright minted for
        itself."""
        now = datetime.now(UTC)
        with self._db.read() as session:
            rows = TokenRepository(session).all()
        tokens = [
            TokenInfo(
                id=row.id,
                label=row.label,
                conversation_id=row.conversation_id,
                created_at=row.created_at,
                expires_at=row.expires_at,
                revoked=row.revoked_at is not None,
                purpose=row.purpose,
            )
            for row in rows
        ]
        if everything:
            return tokens
        return [info for info in tokens if not info.internal and info.state(now) == "active"]

    def revoke(self, token_id: int) -> None:
        with self._db.write() as session:
            if not TokenRepository(session).revoke(token_id, datetime.now(UTC)):
                raise NotFound(f"No active token with id {token_id}")
