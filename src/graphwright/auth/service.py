"""Minting and checking bearer tokens. Only the SHA-256 of a token is stored."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from anyio.to_thread import run_sync as in_worker_thread

from graphwright.auth.checked import REVOCATIONS, CheckedTokens
from graphwright.auth.models import AuthToken, Principal, TokenInfo
from graphwright.auth.repository import TokenRepository
from graphwright.db import Database
from graphwright.db_listen import PostgresListener
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
    """Tokens of one database. A server's (`create_auth_service`) keeps the tokens it checked
    while it hears of every revocation (see `auth.checked`); any other reads each one."""

    def __init__(
        self,
        db: Database,
        *,
        where: str | None = None,
        checked: CheckedTokens | None = None,
        listener: PostgresListener | None = None,
    ) -> None:
        self._db = db
        self._where = where  # named when a token is unknown: a token made for another home
        self._checked = checked
        self._listener = listener

    def start(self) -> None:
        """Start hearing of revocations, where tokens are kept."""
        if self._listener is not None:
            self._listener.start()

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()

    @property
    def listener_pid(self) -> int | None:
        """The server process of the connection listening for revocations; None while none does."""
        return self._listener.backend_pid if self._listener is not None else None

    def checked(self, token: str | None) -> Principal | None:
        """The caller, if this token was checked and is still kept: no database needed."""
        if not token or self._checked is None:
            return None
        return self._checked.get(hash_token(token), datetime.now(UTC))

    def forget_checked(self, token_hashes: list[str] | None = None) -> None:
        """Forget these tokens (None: every token) if kept: they were revoked."""
        if self._checked is not None:
            self._checked.forget(token_hashes)

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

    async def authenticate_from_loop(self, token: str | None) -> Principal:
        """`authenticate` for a caller on the event loop: a kept token at once, any other read
        in a worker thread."""
        return self.checked(token) or await in_worker_thread(self.authenticate, token)

    def authenticate(self, token: str | None) -> Principal:
        if not token:
            raise Unauthorized("A bearer token is required: send 'Authorization: Bearer <token>'")
        token_hash = hash_token(token)
        if self._checked is not None and (kept := self._checked.get(token_hash, datetime.now(UTC))):
            return kept
        generation = self._checked.generation if self._checked is not None else 0
        with self._db.lookup() as session:  # one round trip
            row = TokenRepository(session).by_hash(token_hash)
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
            principal = Principal(row.id, row.conversation_id, row.label)
            expires_at = row.expires_at
        if self._checked is not None:
            self._checked.keep(token_hash, principal, expires_at, generation)
        return principal

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
            revoked = TokenRepository(session).revoke_named(label, purpose, datetime.now(UTC))
        self.forget_checked(revoked)

    def revoke_token(self, token: str) -> None:
        """Revoke a token by its value; an unknown or already revoked token is left as it is."""
        with self._db.write() as session:
            revoked = TokenRepository(session).revoke_by_hash(hash_token(token), datetime.now(UTC))
        self.forget_checked(revoked)

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
            revoked = TokenRepository(session).revoke(token_id, datetime.now(UTC))
            if not revoked:
                raise NotFound(f"No active token with id {token_id}")
        self.forget_checked(revoked)


def create_auth_service(db: Database, *, where: str | None = None) -> AuthService:
    """A server's auth service: on PostgreSQL it keeps the tokens it checked while it hears of
    every revocation (call `start`, and `close` at the end); on SQLite it reads each one."""
    if db.is_sqlite:
        return AuthService(db, where=where)
    checked = CheckedTokens()
    listener = PostgresListener(db.url, REVOCATIONS, checked.heard, checked.hearing)
    return AuthService(db, where=where, checked=checked, listener=listener)
